package install_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/install"
)

func TestSafeJoin(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"out":       outside,
		"up":        "..",
		"dir/inner": root + "/dir",
		"rel-in":    "dir",
		"abs-file":  "/etc/passwd",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		ok   bool
	}{
		{"plan.json", true},
		{"crossplane/01-provider.yaml", true},
		{"a/b/c/d", true},
		{"dir/inner/x", true},
		{"rel-in/x", true},
		{"./x", true},
		{"a..b", true},
		{"...", true},
		{"", false},
		{".", false},
		{"./", false},
		{"..", false},
		{"../x", false},
		{"a/../../x", false},
		{"a/../b", false},
		{"/etc/passwd", false},
		{"//host/share", false},
		{`..\x`, false},
		{`a\b`, false},
		{"C:/x", false},
		{"c:x", false},
		{"a\x00b", false},
		{"a\nb", false},
		{"out", false},
		{"out/x", false},
		{"up/x", false},
		{"abs-file", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := install.SafeJoin(root, tt.name)
			if tt.ok {
				if err != nil {
					t.Fatalf("SafeJoin(%q): %v", tt.name, err)
				}
				if !strings.HasPrefix(p, root+string(filepath.Separator)) {
					t.Fatalf("SafeJoin(%q) = %s, not below %s", tt.name, p, root)
				}
				return
			}
			if err == nil {
				t.Fatalf("SafeJoin(%q) = %s, want an error", tt.name, p)
			}
			if !errors.Is(err, install.ErrUnsafePath) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("SafeJoin(%q): %v (exit %d), want ErrUnsafePath and exit 2", tt.name, err, exitcode.Of(err))
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := install.WriteFile(root, "a/b/c.yaml", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "a/b/c.yaml")); err != nil || string(b) != "x" {
		t.Fatalf("read back %q, %v", b, err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link", "dirlink/new", "../escape", "/abs"} {
		if err := install.WriteFile(root, name, []byte("evil"), 0o644); !errors.Is(err, install.ErrUnsafePath) {
			t.Errorf("WriteFile(%q): %v, want ErrUnsafePath", name, err)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("a file outside the destination was overwritten: %q", b)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Fatalf("files were created outside the destination: %v", entries)
	}
}

func TestCheckTree(t *testing.T) {
	tests := []struct {
		name  string
		links map[string]string // path below root -> target ("ROOT" and "OUT" expanded)
		ok    bool
	}{
		{name: "no links", ok: true},
		{name: "link inside", links: map[string]string{"a/l": "../b"}, ok: true},
		{name: "absolute link inside", links: map[string]string{"a/l": "ROOT/b"}, ok: true},
		{name: "link to parent", links: map[string]string{"a/l": "../.."}},
		{name: "absolute link out", links: map[string]string{"a/l": "OUT"}},
		{name: "link to /etc", links: map[string]string{"l": "/etc/passwd"}},
		{name: "dangling", links: map[string]string{"l": "missing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, out := t.TempDir(), t.TempDir()
			for _, d := range []string{"a", "b"} {
				if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for p, target := range tt.links {
				target = strings.NewReplacer("ROOT", root, "OUT", out).Replace(target)
				if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}
			err := install.CheckTree(root)
			if tt.ok && err != nil {
				t.Fatalf("CheckTree: %v", err)
			}
			if !tt.ok && !errors.Is(err, install.ErrUnsafePath) {
				t.Fatalf("CheckTree: %v, want ErrUnsafePath", err)
			}
		})
	}
}

// FuzzSafeJoin checks that whatever name SafeJoin accepts lands strictly
// below the root, and that names with ".." components or absolute paths
// are never accepted.
func FuzzSafeJoin(f *testing.F) {
	for _, s := range []string{"plan.json", "a/b", "../x", "/abs", "a/../../b", `..\..\x`, "C:/x", ".", "", "a/./b", "x/..", "...."} {
		f.Add(s)
	}
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, name string) {
		p, err := install.SafeJoin(root, name)
		if err != nil {
			return
		}
		rel, rerr := filepath.Rel(root, p)
		if rerr != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			t.Fatalf("SafeJoin(%q) = %s, outside %s", name, p, root)
		}
		for _, c := range strings.Split(name, "/") {
			if c == ".." {
				t.Fatalf("SafeJoin accepted %q with a .. component", name)
			}
		}
		if strings.HasPrefix(name, "/") {
			t.Fatalf("SafeJoin accepted absolute %q", name)
		}
	})
}
