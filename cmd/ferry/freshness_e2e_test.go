package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// TestE2ELockFreshness: a signed lock carries a serial under its
// signature, which a new lock written over it with other content
// increments (the same content keeps it); an archive import into a lock
// path that holds a newer lock, and an install into a directory that holds
// an install of a newer lock, exit 3 naming both serials and write
// nothing, unless --allow-downgrade (TUF's rule against rollback). Equal
// and newer locks pass.
func TestE2ELockFreshness(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	h := src.Host
	e2ePush(t, h, map[string][]fixture.Bundle{
		"fr/web": {e2eBundle("web", "1.0.0"), e2eBundle("web", "1.1.0")},
	})
	env := clitest.New(t)
	e2eSignKey(t, env)
	lockAt := func(version string) {
		t.Helper()
		env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+h+"/fr/web:v"+version+"\n")
		env.MustRun("lock", "--sign-key", "cosign.key")
	}
	serial := func(e *clitest.Env, name string) int64 {
		t.Helper()
		return e2eReadLock(t, e, name).Serial
	}
	lockAt("1.0.0")
	if s := serial(env, "ferry.lock"); s != 0 {
		t.Fatalf("the first lock has serial %d, want 0 (absent)", s)
	}
	env.MustRun("mirror", "--to-archive", "old.tar")
	lockAt("1.1.0")
	if s := serial(env, "ferry.lock"); s != 1 {
		t.Fatalf("a lock written over another has serial %d, want 1", s)
	}
	newLock := env.ReadFile("ferry.lock")
	lockAt("1.1.0")
	if env.ReadFile("ferry.lock") != newLock {
		t.Fatal("locking the same closure again changed the lock (its serial moved)")
	}
	env.MustRun("mirror", "--to-archive", "new.tar")
	_, files := tarEntries(t, env.Path("new.tar"))
	if s, err := lock.SerialOf(files[relocate.ArchiveLockFile]); err != nil || s != 1 {
		t.Fatalf("the archive's lock has serial %d (%v), want 1: the signed lock as it is", s, err)
	}

	private := registrytest.New(t)
	air := func() *clitest.Env {
		a := clitest.New(t)
		for _, f := range []string{"old.tar", "new.tar", "cosign.pub"} {
			if err := os.WriteFile(a.Path(f), []byte(env.ReadFile(f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	importArchive := func(a *clitest.Env, code int, archive, lockPath, to string, extra ...string) clitest.Result {
		args := append([]string{"mirror", "--from-archive", archive, "--to", private.Host + "/" + to, "--lock-key", "cosign.pub", "--lock", lockPath}, extra...)
		if code == 0 {
			return a.MustRun(args...)
		}
		return a.Expect(code, args)
	}

	t.Run("import", func(t *testing.T) {
		tests := []struct {
			name        string
			held, then  string // archives imported in turn into one lock path
			flags       []string
			code        int
			want        []string
			keepsSerial int64 // the lock path's serial afterwards
		}{
			{"newer over older", "old.tar", "new.tar", nil, 0, nil, 1},
			{"equal", "new.tar", "new.tar", nil, 0, nil, 1},
			{"older over newer", "new.tar", "old.tar", nil, 3,
				[]string{"old.tar's ferry.lock has serial 0, older than serial 1", "ferry.lock already holds", "--allow-downgrade"}, 1},
			{"older over newer, --allow-downgrade", "new.tar", "old.tar", []string{"--allow-downgrade"}, 0,
				[]string{"a downgrade was allowed"}, 0},
			{"newer over older, --allow-downgrade", "old.tar", "new.tar", []string{"--allow-downgrade"}, 0, nil, 1},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				a := air()
				to := "imp" + string(rune('a'+i))
				importArchive(a, 0, tt.held, "ferry.lock", to)
				before := a.ReadFile("ferry.lock")
				private.Reset()
				r := importArchive(a, tt.code, tt.then, "ferry.lock", to, tt.flags...)
				for _, w := range tt.want {
					if !strings.Contains(r.Stdout+r.Stderr, w) {
						t.Errorf("output lacks %q:\n%s%s", w, r.Stdout, r.Stderr)
					}
				}
				if tt.code != 0 {
					if n := manifestPuts(private); n != 0 {
						t.Errorf("%d manifests pushed before the refusal", n)
					}
					if a.ReadFile("ferry.lock") != before {
						t.Error("the refused import rewrote the lock")
					}
				}
				if s := serial(a, "ferry.lock"); s != tt.keepsSerial {
					t.Errorf("ferry.lock serial = %d, want %d", s, tt.keepsSerial)
				}
			})
		}
	})

	t.Run("install", func(t *testing.T) {
		a := air()
		importArchive(a, 0, "old.tar", "old.lock", "ins")
		importArchive(a, 0, "new.tar", "new.lock", "ins")
		tests := []struct {
			name       string
			held, then string // locks installed in turn into one directory
			flags      []string
			code       int
			want       []string
			serial     int64 // plan.json's serial afterwards
		}{
			{"newer over older", "old.lock", "new.lock", nil, 0, nil, 1},
			{"equal", "new.lock", "new.lock", nil, 0, nil, 1},
			{"older over newer", "new.lock", "old.lock", nil, 3,
				[]string{"the lock to install has serial 0, older than serial 1", "the install in", "--allow-downgrade"}, 1},
			{"older over newer, --allow-downgrade", "new.lock", "old.lock", []string{"--allow-downgrade"}, 0, nil, 0},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				dest := "out" + string(rune('a'+i))
				a.MustRun("install", "--lock", tt.held, "--lock-key", "cosign.pub", "--dest", dest)
				before := a.ReadFile(dest + "/" + install.PlanFile)
				args := append([]string{"install", "--lock", tt.then, "--lock-key", "cosign.pub", "--dest", dest}, tt.flags...)
				a.Expect(tt.code, args, tt.want...)
				if tt.code != 0 && a.ReadFile(dest+"/"+install.PlanFile) != before {
					t.Error("the refused install replaced the earlier one")
				}
				var plan install.Plan
				if err := json.Unmarshal([]byte(a.ReadFile(dest+"/"+install.PlanFile)), &plan); err != nil {
					t.Fatal(err)
				}
				if plan.Serial != tt.serial {
					t.Errorf("plan.json serial = %d, want %d", plan.Serial, tt.serial)
				}
			})
		}
	})
}
