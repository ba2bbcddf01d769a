package ferry

import (
	"context"
	"errors"
	"slices"
	"testing"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/images"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/verify"
)

// recorder is a format that records a lock section of its own
// (LockRecorder) and takes settings from the inputs (Configurable).
type recorder struct {
	configureErr, recordErr error
	// got is the lock RecordLock was given, through a pointer so the
	// configured copy reports to the test's.
	got *[]*lock.Lock
}

func (recorder) Name() string { return "recorder" }
func (r recorder) Configure(*mirrorset.MirrorSet) (format.Format, error) {
	return r, r.configureErr
}
func (r recorder) RecordLock(_ *mirrorset.MirrorSet, g *resolve.Graph, l *lock.Lock) error {
	*r.got = append(*r.got, l)
	return r.recordErr
}

// TestLockHooks: Env.Lock runs every extension's Lock and every
// LockRecorder on the lock it made from the real registry's closure, and
// stops at the first error of a format's Configure, an extension or a
// recorder.
func TestLockHooks(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	repo := registrytest.Repository(t, c, reg.Host+"/lib/img")
	desc, err := fixture.PushImage(ctx, repo, "img")
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, "1.0"); err != nil {
		t.Fatal(err)
	}
	ms, err := mirrorset.FromRefs([]string{reg.Host + "/lib/img:1.0"}, "")
	if err != nil {
		t.Fatal(err)
	}
	configureErr, extErr, recordErr := errors.New("bad settings"), errors.New("feed said no"), errors.New("section refused")
	for _, tc := range []struct {
		name                            string
		configureErr, extErr, recordErr error
		wantErr                         error
		wantExt                         []string
		wantRecorded                    int
	}{
		{name: "every hook", wantExt: []string{"lock"}, wantRecorded: 1},
		{name: "Configure fails", configureErr: configureErr, wantErr: configureErr},
		{name: "extension fails", extErr: extErr, wantErr: extErr, wantExt: []string{"lock"}},
		{name: "recorder fails", recordErr: recordErr, wantErr: recordErr, wantExt: []string{"lock"}, wantRecorded: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []*lock.Lock
			x := &recordingExtension{lockErr: tc.extErr}
			e := &Env{Client: c, Formats: []format.Format{images.Format{}, recorder{configureErr: tc.configureErr, recordErr: tc.recordErr, got: &got}, x},
				Progress: func() progress.Reporter { return nil }}
			l, g, err := e.Lock(ctx, ms, nil, Update{})
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("Lock: %v, want %v", err, tc.wantErr)
			}
			if !slices.Equal(x.calls, tc.wantExt) {
				t.Errorf("extension calls %v, want %v", x.calls, tc.wantExt)
			}
			if len(got) != tc.wantRecorded {
				t.Fatalf("RecordLock called %d times, want %d", len(got), tc.wantRecorded)
			}
			if err != nil {
				return
			}
			if got[0] != l {
				t.Error("RecordLock was not given the lock Lock returned")
			}
			ps := l.Resolved()
			if len(ps) != 1 || ps[0].Digest != desc.Digest.String() || ps[0].Source != reg.Host+"/lib/img" {
				t.Errorf("locked %v, want %s@%s", sources(l), reg.Host+"/lib/img", desc.Digest)
			}
			if len(g.Packages) != 1 {
				t.Errorf("graph has %d packages, want 1", len(g.Packages))
			}
		})
	}
}

func sources(l *lock.Lock) []string {
	var out []string
	for _, p := range l.Resolved() {
		out = append(out, p.Source+"@"+p.Digest)
	}
	return out
}

// TestUpdateSelects: a name selects a source exactly, by its last path
// element, or by a trailing run of path elements.
func TestUpdateSelects(t *testing.T) {
	src := "ghcr.io/acme/lib/db"
	for _, tc := range []struct {
		u    Update
		want bool
	}{
		{Update{All: true}, true},
		{Update{}, false},
		{Update{Names: []string{src}}, true},
		{Update{Names: []string{"db"}}, true},
		{Update{Names: []string{"lib/db"}}, true},
		{Update{Names: []string{"b/db"}}, false},
		{Update{Names: []string{"d"}}, false},
		{Update{Names: []string{"app", "acme/lib/db"}}, true},
	} {
		if got := tc.u.Selects(src); got != tc.want {
			t.Errorf("%+v.Selects(%s) = %v, want %v", tc.u, src, got, tc.want)
		}
	}
}

// failingTransfer fails both ways after reporting one item.
type failingTransfer struct{ err error }

func (f failingTransfer) Push(context.Context, relocate.Mapping) ([]Moved, error) {
	return []Moved{{Format: "recording", Name: "half"}}, f.err
}
func (f failingTransfer) Archive(context.Context, *oci.Store) error { return f.err }

// archivedTransfer counts the archives it was written into.
type archivedTransfer struct{ n *int }

func (archivedTransfer) Push(context.Context, relocate.Mapping) ([]Moved, error) { return nil, nil }
func (a archivedTransfer) Archive(context.Context, *oci.Store) error {
	*a.n++
	return nil
}

// TestTransfers: every transfer is archived or pushed in order; the first
// failure stops the rest, and Push returns what moved before it.
func TestTransfers(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("registry full")
	store, err := oci.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := (Transfers{archivedTransfer{&n}, archivedTransfer{&n}}).Archive(ctx, store); err != nil || n != 2 {
		t.Errorf("Archive: %v, %d archived, want 2", err, n)
	}
	n = 0
	if err := (Transfers{failingTransfer{boom}, archivedTransfer{&n}}).Archive(ctx, store); !errors.Is(err, boom) || n != 0 {
		t.Errorf("Archive after a failure: %v, %d archived, want %v and none", err, n, boom)
	}
	moved, err := (Transfers{pushedTransfer{}, failingTransfer{boom}, pushedTransfer{}}).Push(ctx, relocate.Mapping{Host: "m.example"})
	var names []string
	for _, m := range moved {
		names = append(names, m.Name)
	}
	if !errors.Is(err, boom) || !slices.Equal(names, []string{"fetched", "half"}) {
		t.Errorf("Push: %v moved %v, want %v after [fetched half]", err, names, boom)
	}
}

// importingExtension reports one imported item per call, failing with
// err, and adds a verify problem.
type importingExtension struct {
	recordingExtension
	err error
}

func (x *importingExtension) Import(context.Context, *Run, *oci.ReadOnlyStore, *lock.Lock, relocate.Mapping) ([]Moved, error) {
	return []Moved{{Format: "recording", Name: "imported"}}, x.err
}
func (x *importingExtension) Verify(_ context.Context, _ *Run, _ *lock.Lock, _ verify.Options, rep *verify.Report) error {
	rep.Problems = append(rep.Problems, verify.Problem{Package: "mixin exec"})
	return x.err
}

// TestImportAndVerifyExtensions: every extension imports and verifies in
// turn; the first error stops the rest and keeps what moved.
func TestImportAndVerifyExtensions(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("mirror refused")
	for _, tc := range []struct {
		name       string
		errs       []error
		wantMoved  int
		wantChecks int
	}{
		{"all", []error{nil, nil}, 2, 2},
		{"first fails", []error{boom, nil}, 1, 1},
		{"second fails", []error{nil, boom}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Env{}
			var wantErr error
			for _, err := range tc.errs {
				e.Formats = append(e.Formats, &importingExtension{err: err})
				if wantErr == nil {
					wantErr = err
				}
			}
			moved, err := e.Import(ctx, nil, &lock.Lock{}, relocate.Mapping{Host: "m.example"})
			if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) || len(moved) != tc.wantMoved {
				t.Errorf("Import: %v, %d moved; want %v, %d", err, len(moved), wantErr, tc.wantMoved)
			}
			var rep verify.Report
			err = e.VerifyExtensions(ctx, &lock.Lock{}, verify.Options{}, &rep)
			if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) || len(rep.Problems) != tc.wantChecks {
				t.Errorf("VerifyExtensions: %v, %d problems; want %v, %d", err, len(rep.Problems), wantErr, tc.wantChecks)
			}
		})
	}
}
