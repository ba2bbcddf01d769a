package relocate_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestMain keeps the mirror journal (relocate.Options.JournalDir, by
// default in the user's cache directory) of the tests that do not name
// one out of the machine's cache.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ferry-relocate-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	os.Setenv("HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestMirrorKnownRepositories counts the requests a mirror sends: into
// fresh repositories it asks for nothing but each repository's tag list
// (no blob or manifest HEAD) and pushes each root by its tag (no tag HEAD,
// no second PUT); a re-run reads each tag once and sends nothing; a run
// after one cut short (the tag push refused) checks what that run pushed
// instead of taking the untagged repositories for fresh, and uploads
// nothing again.
func TestMirrorKnownRepositories(t *testing.T) {
	ctx := context.Background()
	const n = 6
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l, blobs := sharedClosure(t, c, src, n)
	var refuseTags atomic.Bool
	mirror := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if refuseTags.Load() && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/v1") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"errors":[{"code":"TAG_INVALID","message":"refused by the test"}]}`)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, to relocate.Mapping, journal string) (map[string]int, error) {
		t.Helper()
		mirror.Reset()
		pl := *l
		pl.Packages = append([]lock.Package(nil), l.Packages...)
		_, err := relocate.Mirror(ctx, &pl, relocate.Options{Source: c, To: to, Concurrency: 4, JournalDir: journal})
		kinds := map[string]int{}
		for _, r := range mirror.Requests() {
			kinds[requestKind(r)]++
		}
		t.Logf("%d packages: %v", n, kinds)
		return kinds, err
	}
	check := func(t *testing.T, kinds map[string]int, want map[string]int) {
		t.Helper()
		for k, v := range want {
			if kinds[k] != v {
				t.Errorf("%d %s requests, want %d", kinds[k], k, v)
			}
		}
		// One GET /v2/ per run: the check that the mirror is a registry
		// before anything is written (client.CheckRegistry).
		if kinds["GET v2"] != 1 {
			t.Errorf("%d GET /v2/ requests, want the one registry check", kinds["GET v2"])
		}
		for k := range kinds {
			if _, ok := want[k]; !ok && k != "GET v2" {
				t.Errorf("%d %s requests, want none", kinds[k], k)
			}
		}
	}

	t.Run("fresh, then again", func(t *testing.T) {
		journal := t.TempDir()
		kinds, err := run(t, to, journal)
		if err != nil {
			t.Fatal(err)
		}
		// Per repository: its tag list; each blob uploaded (POST, PUT)
		// or mounted (POST); the manifest pushed once, by its tag. And
		// before copying, the first repository, unknown to the registry,
		// is asked whether it takes pushes (a session opened and
		// cancelled: refusalGate.preflight).
		check(t, kinds, map[string]int{
			"GET tags":      n,
			"PUT manifest":  n,
			"POST upload":   n*blobs + 1,
			"DELETE upload": 1,
			"PUT upload":    kinds["PUT upload"],
		})
		if up := kinds["PUT upload"]; up < n || up > n*blobs {
			t.Errorf("%d blob uploads", up)
		}
		kinds, err = run(t, to, journal)
		if err != nil {
			t.Fatal(err)
		}
		// Per repository: its tag list and the tag read (GET), which
		// answers for the root.
		check(t, kinds, map[string]int{"GET tags": n, "GET manifest": n})
	})

	t.Run("after a run cut short", func(t *testing.T) {
		journal := t.TempDir()
		to, err := relocate.ParseMapping(mirror.Host + "/cut")
		if err != nil {
			t.Fatal(err)
		}
		refuseTags.Store(true)
		if _, err := run(t, to, journal); err == nil {
			t.Fatal("the first run succeeded though its tags were refused")
		}
		refuseTags.Store(false)
		kinds, err := run(t, to, journal)
		if err != nil {
			t.Fatal(err)
		}
		// Every blob was pushed before the tags were refused: each is
		// checked (HEAD), none is sent again. The repositories hold no
		// tag yet (404 NAME_UNKNOWN), so the first is asked again whether
		// it takes pushes (refusalGate.preflight).
		check(t, kinds, map[string]int{
			"GET tags":      n,
			"HEAD manifest": n,
			"HEAD blob":     n * blobs,
			"PUT manifest":  n,
			"POST upload":   1,
			"DELETE upload": 1,
		})
	})
}

// TestMirrorUntaggedWhenImagesDiffer mirrors into a fresh repository a
// package whose lock names an image outside its graph: the copy fails
// with exit code 3, and the root, pushed by tag when it is pushed, is not
// pushed, so the mirror holds no tag for it.
func TestMirrorUntaggedWhenImagesDiffer(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l, _ := sharedClosure(t, c, src, 1)
	l.Packages[0].Images = []lock.Image{{Name: "edited", Ref: "example.com/edited:v1", Digest: "sha256:" + strings.Repeat("ab", 32)}}
	mirror := registrytest.New(t)
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	_, err = relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 2, JournalDir: t.TempDir()})
	if exitcode.Of(err) != exitcode.Mismatch {
		t.Fatalf("exit code %d (%v), want %d", exitcode.Of(err), err, exitcode.Mismatch)
	}
	repo := registrytest.Repository(t, c, to.Repo(l.Packages[0].Source))
	if d, err := repo.Resolve(ctx, l.Packages[0].Version); err == nil {
		t.Errorf("the mirror tags %s although the copy failed", d.Digest)
	}
}
