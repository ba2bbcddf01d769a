package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
)

// TestE2ERollbackRefused: `ferry lock` refuses, with exit 3 naming the
// tag and the declared version, a bundle that a version range finds under
// a newer tag than the version it declares (an older release moved under
// a newer tag); honest tags lock.
func TestE2ERollbackRefused(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	h := src.Host
	e2ePush(t, h, map[string][]fixture.Bundle{
		// v1.0.0, moved under v1.1.0 too.
		"rb/moved":  {{Name: "moved", Version: "1.0.0", Tags: []string{"v1.0.0", "v1.1.0"}}},
		"rb/honest": {e2eBundle("honest", "1.0.0"), e2eBundle("honest", "1.1.0")},
		// A parent whose dependency range reaches the moved tag.
		"rb/app": {e2eBundle("app", "1.0.0", fixture.Dep{Name: "moved", Bundle: h + "/rb/moved:v1.0.0", Ranges: []string{"^1.0"}})},
	})
	tests := []struct {
		name    string
		args    []string
		code    int
		want    []string
		version string // the locked version of the first root, when it locks
	}{
		{"a range picks the moved tag", []string{"lock", h + "/rb/moved", "--version", "^1.0"}, 3,
			[]string{h + "/rb/moved:v1.1.0", "declares version 1.0.0", "names version 1.1.0"}, ""},
		{"an explicit moved tag", []string{"lock", h + "/rb/moved:v1.1.0"}, 3,
			[]string{h + "/rb/moved:v1.1.0", "declares version 1.0.0"}, ""},
		{"a dependency's range picks the moved tag", []string{"lock", h + "/rb/app:v1.0.0"}, 3,
			[]string{h + "/rb/app:v1.0.0 -> " + h + "/rb/moved", "declares version 1.0.0"}, ""},
		{"a range that stops below the moved tag", []string{"lock", h + "/rb/moved", "--version", "~1.0.0"}, 0, nil, "v1.0.0"},
		{"a range over honest tags", []string{"lock", h + "/rb/honest", "--version", "^1.0"}, 0, nil, "v1.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := e2eEnv(t)
			env.Expect(tt.code, tt.args, tt.want...)
			if tt.code != 0 {
				e2eAbsent(t, env.Path("ferry.lock"))
				return
			}
			l := e2eReadLock(t, env, "ferry.lock")
			if len(l.Roots) != 1 || l.Package(l.Roots[0]).Version != tt.version {
				t.Errorf("locked %+v, want version %s", l.Roots, tt.version)
			}
		})
	}
}

// TestE2EDiffReplaced: `ferry diff` lists a digest replaced under an
// unchanged version first, as "! REPLACED", with a warning, and under its
// own key in -o json; --exit-code exits 1 when the locks differ and 0 when
// they do not, as git diff --exit-code does.
func TestE2EDiffReplaced(t *testing.T) {
	t.Parallel()
	src := registrytest.New(t)
	h := src.Host
	e2ePush(t, h, map[string][]fixture.Bundle{
		"df/web": {e2eBundle("web", "1.0.0")},
		"df/db":  {e2eBundle("db", "1.0.0")},
	})
	env := e2eEnv(t)
	lockAll := func(name string, args ...string) {
		t.Helper()
		env.MustRun(append([]string{"lock", h + "/df/web", h + "/df/db", "--version", "^1.0", "--lock", name}, args...)...)
	}
	lockAll("old.lock")
	// web v1.0.0 is published again with other content, same version;
	// db gets a new release.
	e2ePush(t, h, map[string][]fixture.Bundle{
		"df/web": {{Name: "web", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"nginx"}}},
		"df/db":  {e2eBundle("db", "1.1.0")},
	})
	lockAll("new.lock")
	// A lock of the new state with web's version moved too: no replacement.
	e2ePush(t, h, map[string][]fixture.Bundle{"df/web": {e2eBundle("web", "1.1.0")}})
	lockAll("newer.lock")

	webLine := "! REPLACED package " + h + "/df/web v1.0.0"
	dbLine := "~ package " + h + "/df/db v1.0.0 -> v1.1.0"
	tests := []struct {
		name     string
		args     []string
		code     int
		lines    []string // stdout lines, in order (prefixes)
		warning  bool
		replaced int // with -o json: len(replaced), changes
		changes  int
	}{
		{"identical", []string{"diff", "old.lock", "old.lock"}, 0, nil, false, 0, 0},
		{"identical, --exit-code", []string{"diff", "--exit-code", "old.lock", "old.lock"}, 0, nil, false, 0, 0},
		{"replaced first", []string{"diff", "old.lock", "new.lock"}, 0, []string{webLine, dbLine}, true, 1, 1},
		{"replaced, --exit-code", []string{"diff", "--exit-code", "old.lock", "new.lock"}, 1, []string{webLine, dbLine}, true, 1, 1},
		{"versions only, --exit-code", []string{"diff", "--exit-code", "old.lock", "newer.lock"}, 1,
			[]string{dbLine, "~ package " + h + "/df/web v1.0.0 -> v1.1.0"}, false, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := env.Expect(tt.code, tt.args)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
				if l != "" {
					got = append(got, l)
				}
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("stdout:\n%s\nwant lines %q", r.Stdout, tt.lines)
			}
			for i, w := range tt.lines {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("line %d = %q, want %q…", i, got[i], w)
				}
			}
			if warned := strings.Contains(r.Stderr, "WARNING") && strings.Contains(r.Stderr, "unchanged version"); warned != tt.warning {
				t.Errorf("warning on stderr = %v, want %v:\n%s", warned, tt.warning, r.Stderr)
			}
			j := env.Expect(tt.code, append(append([]string(nil), tt.args...), "-o", "json"))
			var out struct {
				Identical bool          `json:"identical"`
				Replaced  []lock.Change `json:"replaced"`
				Changes   []lock.Change `json:"changes"`
			}
			if err := json.Unmarshal([]byte(j.Stdout), &out); err != nil {
				t.Fatalf("-o json: %v\n%s", err, j.Stdout)
			}
			if out.Identical != (tt.replaced+tt.changes == 0) || len(out.Replaced) != tt.replaced || len(out.Changes) != tt.changes {
				t.Errorf("-o json = %s", j.Stdout)
			}
			for _, c := range out.Replaced {
				if c.Op != lock.OpReplaced || c.Name != h+"/df/web" || c.OldVersion != c.NewVersion || c.OldDigest == c.NewDigest {
					t.Errorf("replaced %+v", c)
				}
			}
		})
	}
}
