package ferry_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
)

// world is a source registry holding Porter bundles app -> db (db
// constrained ^1.0), published with the real bundle format, and a second
// registry to mirror into.
type world struct {
	src, mirror *registrytest.Registry
	c           *client.Client
	// pushed maps "path:tag" to the digest the push returned.
	pushed map[string]ocispec.Descriptor
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{src: registrytest.New(t), mirror: registrytest.New(t), c: registrytest.Client(t), pushed: map[string]ocispec.Descriptor{}}
	w.push(t, "p/db", fixture.Bundle{Name: "db", Version: "1.0.0", Images: []string{"mysql"}})
	w.push(t, "p/app", fixture.Bundle{Name: "app", Version: "1.0.0", Images: []string{"web"},
		Deps: []fixture.Dep{{Name: "db", Bundle: w.src.Host + "/p/db:1.0.0", Ranges: []string{"^1.0"}}}})
	return w
}

// push publishes b at path in the source registry.
func (w *world) push(t *testing.T, path string, b fixture.Bundle) ocispec.Descriptor {
	t.Helper()
	repo, err := w.c.Repository(w.src.Host + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := fixture.PushBundle(context.Background(), repo, w.src.Host+"/"+path, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range b.DefaultTags() {
		w.pushed[path+":"+tag] = d
	}
	return d
}

func (w *world) env() *ferry.Env {
	return &ferry.Env{Client: w.c, Formats: formats.All(), Concurrency: 2}
}

// inputs is the MirrorSet of the command line `ferry lock ROOT`.
func (w *world) inputs(t *testing.T, refs ...string) *mirrorset.MirrorSet {
	t.Helper()
	for i, r := range refs {
		refs[i] = w.src.Host + "/" + r
	}
	ms, err := mirrorset.FromRefs(refs, "")
	if err != nil {
		t.Fatal(err)
	}
	// Porter's default strategy takes a dependency's tag as written;
	// "highest" lets the ranges choose.
	if err := ms.SetSection("porter", map[string]string{"versionStrategy": "highest"}); err != nil {
		t.Fatal(err)
	}
	return ms
}

func (w *world) lock(t *testing.T, e *ferry.Env, ms *mirrorset.MirrorSet, prev *lock.Lock, u ferry.Update) *lock.Lock {
	t.Helper()
	l, _, err := e.Lock(context.Background(), ms, prev, u)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	return l
}

// mirrorTo copies l into the mirror registry under /m, recording the
// mirror locations in l, as ferry mirror --to does.
func (w *world) mirrorTo(t *testing.T, l *lock.Lock) relocate.Mapping {
	t.Helper()
	to, err := relocate.ParseMapping(w.mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(context.Background(), l, relocate.Options{Source: w.c, To: to, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	return to
}

// pkg returns l's package of source path (in the source registry).
func (w *world) pkg(t *testing.T, l *lock.Lock, path string) *lock.Package {
	t.Helper()
	for _, p := range l.Resolved() {
		if p.Source == w.src.Host+"/"+path {
			return p
		}
	}
	t.Fatalf("lock has no %s: %v", path, sources(l))
	return nil
}

func sources(l *lock.Lock) []string {
	var out []string
	for _, p := range l.Resolved() {
		out = append(out, p.Source+"@"+p.Version)
	}
	return out
}

// TestEnvLock: the lock holds every package of the closure at the digest
// the registry returned for its tag; a locked version is kept while it
// satisfies the constraints, unless Update selects it; mirror locations of
// an unchanged package carry over.
func TestEnvLock(t *testing.T) {
	w := newWorld(t)
	e := w.env()
	defer e.Close()
	ms := w.inputs(t, "p/app:1.0.0")
	first := w.lock(t, e, ms, nil, ferry.Update{})
	for _, path := range []string{"p/app", "p/db"} {
		p := w.pkg(t, first, path)
		if want := w.pushed[path+":1.0.0"].Digest.String(); p.Digest != want || p.Version != "1.0.0" {
			t.Errorf("%s locked at %s %s, want 1.0.0 %s", path, p.Version, p.Digest, want)
		}
	}
	if first.Inputs != ms.Digest() {
		t.Errorf("lock inputs %q, want the MirrorSet's digest %q", first.Inputs, ms.Digest())
	}
	w.mirrorTo(t, first)
	dbMirror := w.pkg(t, first, "p/db").Mirror
	if dbMirror == "" {
		t.Fatal("mirroring recorded no mirror for db")
	}

	// db 1.1.0 satisfies ^1.0 too.
	newer := w.push(t, "p/db", fixture.Bundle{Name: "db", Version: "1.1.0", Images: []string{"mysql"}})
	for _, tc := range []struct {
		name        string
		update      ferry.Update
		wantVersion string
	}{
		{"nothing selected keeps the locked version", ferry.Update{}, "1.0.0"},
		{"another name keeps it", ferry.Update{Names: []string{"app"}}, "1.0.0"},
		{"by last path element", ferry.Update{Names: []string{"db"}}, "1.1.0"},
		{"by source", ferry.Update{Names: []string{w.src.Host + "/p/db"}}, "1.1.0"},
		{"all", ferry.Update{All: true}, "1.1.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := w.lock(t, e, ms, first, tc.update)
			db := w.pkg(t, l, "p/db")
			if db.Version != tc.wantVersion {
				t.Fatalf("db locked at %s, want %s", db.Version, tc.wantVersion)
			}
			if tc.wantVersion == "1.1.0" {
				if db.Digest != newer.Digest.String() || db.Mirror != "" {
					t.Errorf("db %s mirror %q, want %s and no mirror (a new digest is not mirrored)", db.Digest, db.Mirror, newer.Digest)
				}
			} else if db.Mirror != dbMirror {
				t.Errorf("db mirror %q, want the previous lock's %q", db.Mirror, dbMirror)
			}
			if app := w.pkg(t, l, "p/app"); app.Mirror == "" {
				t.Error("app's mirror location was dropped though its digest did not change")
			}
		})
	}
}

// TestEnvLockErrors: what cannot resolve fails with the exit code of its
// kind.
func TestEnvLockErrors(t *testing.T) {
	w := newWorld(t)
	w.push(t, "p/broken", fixture.Bundle{Name: "broken", Version: "1.0.0",
		Deps: []fixture.Dep{{Name: "db", Bundle: w.src.Host + "/p/db:1.0.0", Ranges: []string{"^2.0"}}}})
	for _, tc := range []struct {
		name     string
		ref      string
		strategy string
		code     int
		want     string
	}{
		{"tag missing", "p/app:9.9.9", "highest", exitcode.Failure, "tag 9.9.9 not found"},
		{"constraint nothing satisfies", "p/broken:1.0.0", "min", exitcode.Failure, "p/db"},
		// The CLI refuses this when it reads the inputs (exit 2); a
		// MirrorSet built in code reaches Configure: bad input, exit 2,
		// however the inputs were given.
		{"unknown version strategy", "p/app:1.0.0", "newest", exitcode.Usage, "porter.versionStrategy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := w.env()
			ms := w.inputs(t, tc.ref)
			if err := ms.SetSection("porter", map[string]string{"versionStrategy": tc.strategy}); err != nil {
				t.Fatal(err)
			}
			_, _, err := e.Lock(context.Background(), ms, nil, ferry.Update{})
			if err == nil {
				t.Fatal("Lock succeeded")
			}
			if got := exitcode.Of(err); (tc.code >= 0 && got != tc.code) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("exit %d (%v), want %d naming %q", got, err, tc.code, tc.want)
			}
		})
	}
}

// TestRecordInputAndInputs: the lock names its input file relative to
// its own directory, and Inputs reads it back from there.
func TestRecordInputAndInputs(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "locks"), 0o755); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "ferry.yaml")
	if err := os.WriteFile(input, []byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n- ref: registry.example/acme/app:1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, "locks", "ferry.lock")
	e := &ferry.Env{Formats: formats.All()}

	l := &lock.Lock{Input: "stale"}
	ferry.RecordInput(l, "", lockPath)
	if l.Input != "" {
		t.Errorf("command-line roots recorded input %q", l.Input)
	}
	if ms, path, err := e.Inputs(l, lockPath, nil); ms != nil || path != "" || err != nil {
		t.Errorf("Inputs without input = %v, %q, %v", ms, path, err)
	}

	ferry.RecordInput(l, input, lockPath)
	if l.Input != "../ferry.yaml" {
		t.Fatalf("recorded input %q, want ../ferry.yaml", l.Input)
	}
	ms, path, err := e.Inputs(l, lockPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	if path != input || len(ms.Packages) != 1 || ms.Packages[0].Ref != "registry.example/acme/app:1.0.0" {
		t.Errorf("Inputs = %+v from %q", ms, path)
	}

	if err := os.WriteFile(input, []byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nnotAKey: 1\npackages:\n- ref: a/b:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.Inputs(l, lockPath, nil); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("a broken input file: %v (exit %d), want exit %d", err, exitcode.Of(err), exitcode.Usage)
	}

	if err := os.Remove(input); err != nil {
		t.Fatal(err)
	}
	if ms, path, err := e.Inputs(l, lockPath, nil); ms != nil || path != input || err != nil {
		t.Errorf("Inputs of a removed file = %v, %q, %v; want nil, %q, nil", ms, path, err, input)
	}
}

// TestDownloadsAndClose: one run shares one download directory, which
// Close removes.
func TestDownloadsAndClose(t *testing.T) {
	e := &ferry.Env{Formats: formats.All()}
	if err := e.Close(); err != nil {
		t.Fatalf("Close before any download: %v", err)
	}
	run := e.Run(ferry.Update{Names: []string{"exec"}})
	dir, err := run.Downloads()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := e.Run(ferry.Update{}).Downloads()
	if again != dir {
		t.Errorf("second run's downloads %q, want the first's %q", again, dir)
	}
	if !run.Update("exec") || run.Update("helm3") {
		t.Error("Run.Update does not follow the Update it was given")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("downloads %s still there after Close: %v", dir, err)
	}
}

// TestWriters: the formats that write install files of their own.
func TestWriters(t *testing.T) {
	e := &ferry.Env{Formats: formats.All()}
	ws, err := e.Writers(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		t.Fatal("no format writes install files")
	}
	var none ferry.Env
	if ws, err := none.Writers(nil); err != nil || len(ws) != 0 {
		t.Errorf("no formats: %v, %v", ws, err)
	}
	if x := e.Extensions(); len(x) != 1 || x[0].Name() != "mixin" {
		names := []string{}
		for _, e := range x {
			names = append(names, e.Name())
		}
		t.Errorf("extensions %v, want [mixin]", names)
	}
}
