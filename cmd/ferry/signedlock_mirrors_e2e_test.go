package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// TestSignedLockMirrorToMirror: a signed lock with mixins moves from
// mirror to mirror (issue 28, observation 7). Its sidecar records where
// the mixins went beside the packages, so `mirror --from` reads them from
// the other mirror with the source and the feed gone; each destination is
// recorded (the latest on top, the default of verify; the others below,
// which verify --mirror checks); a --from mirror that lacks the mixins
// fails before any package is copied, and the lock and sidecar stay as
// they were.
func TestSignedLockMirrorToMirror(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	feed := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+feed.URL)
	e2eSignKey(t, env)
	env.WriteFile("ferry.yaml", fmt.Sprintf(`apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: %s
mixins:
  - name: exec
`, cat.Diamond))
	env.MustRun("lock", "--sign-key", "cosign.key")
	signedLock, signedSig := env.ReadFile("ferry.lock"), env.ReadFile("ferry.lock.sig")
	unchanged := func(when string) {
		t.Helper()
		if env.ReadFile("ferry.lock") != signedLock || env.ReadFile("ferry.lock.sig") != signedSig {
			t.Fatalf("%s rewrote the signed lock", when)
		}
	}
	sidecar := func() *lock.Mirrors {
		t.Helper()
		_, m, stale, err := lock.ReadWithMirrors(env.Path("ferry.lock"))
		if err != nil || stale != nil || m == nil {
			t.Fatalf("sidecar %+v, stale %v, err %v", m, stale, err)
		}
		return m
	}
	recorded := func(m *lock.Mirrors, want ...string) {
		t.Helper()
		got := []string{m.To}
		for _, r := range m.Earlier {
			got = append(got, r.To)
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("the sidecar records mirrors %v, want %v", got, want)
		}
		for _, r := range append([]lock.MirrorRecord{m.MirrorRecord}, m.Earlier...) {
			if len(r.Extensions) != 1 || r.Extensions[0].Section != mixin.KeyMixins || !strings.HasPrefix(r.Extensions[0].Mirror, r.To+"/porter-mixins/exec@sha256:") {
				t.Errorf("mirror %s records mixins %+v", r.To, r.Extensions)
			}
		}
	}

	first := registrytest.New(t)
	to1 := first.Host + "/one"
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", to1)
	unchanged("mirror --to")
	recorded(sidecar(), to1)

	// A mirror whose mixins go missing once it is filled.
	var hide atomic.Bool
	partial := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hide.Load() && strings.Contains(r.URL.Path, "/porter-mixins/") {
				http.Error(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"hidden"}]}`, http.StatusNotFound)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	toP := partial.Host + "/p"
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", toP)

	// The source and the feed are gone: mirror to mirror.
	src.Stop()
	feed.Close()
	second := registrytest.New(t)
	to2 := second.Host + "/two"
	env.MustRun("mirror", "--lock", "ferry.lock", "--from", to1, "--to", to2)
	unchanged("mirror --from")
	recorded(sidecar(), to2, toP, to1)
	env.MustRun("verify", "--lock-key", "cosign.pub", "--deep")
	for _, m := range []string{to1, toP, to2} {
		env.MustRun("verify", "--lock-key", "cosign.pub", "--deep", "--mirror", m)
	}

	// Without --from, the sidecar's latest mirror stands in for the
	// source and the feed.
	third := registrytest.New(t)
	to3 := third.Host + "/three"
	r := env.MustRun("mirror", "--lock", "ferry.lock", "--to", to3)
	if !strings.Contains(r.Stderr, "mixin feed cannot be reached") {
		t.Errorf("no warning about the feed:\n%s", r.Stderr)
	}
	recorded(sidecar(), to3, to2, toP, to1)
	env.MustRun("verify", "--lock-key", "cosign.pub", "--deep")

	// A --from mirror without the mixins: refused before any package is
	// copied.
	hide.Store(true)
	before := env.ReadFile("ferry.lock.mirror.yaml")
	last := registrytest.New(t)
	env.Expect(1, []string{"mirror", "--lock", "ferry.lock", "--from", toP, "--to", last.Host + "/x"}, "copying mixin exec", toP+"/porter-mixins/exec")
	if n := manifestPuts(last); n != 0 {
		t.Errorf("%d manifests pushed before the refusal", n)
	}
	unchanged("a refused mirror --from")
	if env.ReadFile("ferry.lock.mirror.yaml") != before {
		t.Error("a refused mirror --from rewrote the sidecar")
	}
}
