package mixin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/relocate"
)

// TestPrepareFrom: mirror to mirror reads every mixin from the other
// mirror and checks it against the lock before any package is copied:
// by the digest the lock (or a signed lock's sidecar) records, else by
// the version's tag; a mixin with no mirror to read is bad input (exit 2)
// and nothing is read; a mirror that lacks the artifact, or holds other
// binaries than the lock's, fails naming the mixin. The Transfer pushes
// it to the new mirror and records it there.
func TestPrepareFrom(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	run := newRun(t)
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	feed, err := LoadFeed(ctx, run.Client.HTTPClient(), fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	bins := t.TempDir()
	locked, err := Fetch(ctx, run.Client.HTTPClient(), feed, "exec", "v1.2.3", []string{"linux/amd64"}, nil, bins)
	if err != nil {
		t.Fatal(err)
	}
	first := relocate.Mapping{Host: reg.Host, Prefix: "first"}
	repo, err := run.Client.Repository(Repo(first, "exec"))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := Push(ctx, repo, locked, bins, client.RetryPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	atFirst := Repo(first, "exec") + "@" + desc.Digest.String()
	empty := relocate.Mapping{Host: reg.Host, Prefix: "empty"}

	tests := []struct {
		name string
		// mirror is what the lock records; from is --from (nil: none).
		mirror string
		from   *relocate.Mapping
		// edit changes the locked entry (a binary the mirror does not
		// hold).
		edit     func(m *Locked)
		wantCode int // 0: passes
		wantErr  string
	}{
		{name: "from, by the recorded digest", mirror: atFirst, from: &first},
		{name: "from, no record (a signed lock without sidecar): by tag", from: &first},
		{name: "the recorded mirror", mirror: atFirst},
		{name: "no mirror to read", wantCode: exitcode.Usage, wantErr: "records no mirror to copy it from"},
		{name: "from a mirror that lacks it", from: &empty, wantCode: exitcode.Failure, wantErr: "copying mixin exec v1.2.3 from " + Repo(empty, "exec")},
		{name: "binaries other than the lock's", mirror: atFirst, from: &first, edit: func(m *Locked) {
			for k, b := range m.Binaries {
				b.Size++
				m.Binaries[k] = b
			}
		}, wantCode: exitcode.Mismatch, wantErr: "ferry.lock has"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := *locked
			m.Binaries = map[string]Binary{}
			for k, b := range locked.Binaries {
				m.Binaries[k] = b
			}
			m.Mirror = tc.mirror
			if tc.edit != nil {
				tc.edit(&m)
			}
			l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind}
			if err := SetLock(l, []Locked{m}); err != nil {
				t.Fatal(err)
			}
			before := len(reg.Requests())
			tr, err := Format{}.PrepareFrom(ctx, run, l, tc.from)
			if tc.wantCode != 0 {
				if err == nil || exitcode.Of(err) != tc.wantCode || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v (exit %d), want exit %d naming %q", err, exitcode.Of(err), tc.wantCode, tc.wantErr)
				}
				if tc.wantCode == exitcode.Usage {
					if !errors.Is(err, ErrNoMirror) {
						t.Errorf("err = %v, want ErrNoMirror", err)
					}
					if n := len(reg.Requests()) - before; n != 0 {
						t.Errorf("%d registry requests before the refusal", n)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			to := relocate.Mapping{Host: reg.Host, Prefix: "to" + string(rune('a'+i))}
			moved, err := tr.Push(ctx, to)
			if err != nil {
				t.Fatal(err)
			}
			want := Repo(to, "exec") + "@" + desc.Digest.String()
			got, err := FromLock(l)
			if err != nil {
				t.Fatal(err)
			}
			if len(moved) != 1 || moved[0].Mirror != want || got[0].Mirror != want {
				t.Fatalf("moved %+v, the lock records %q; want %s", moved, got[0].Mirror, want)
			}
		})
	}
}
