package lock_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

// wide is a lock of 21 packages: two roots, each depending on ten
// packages, the last of which is shared, plus two versions of one
// source (so one root is SOURCE@DIGEST) and a replaced source.
func wide() *lock.Lock {
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: digest.FromString("inputs").String()}
	pkg := func(src, version string) lock.Package {
		return lock.Package{Source: src, Version: version, Digest: digest.FromString(src + version).String(), Kind: "porter.bundle"}
	}
	dep := func(p lock.Package) lock.Dependency {
		return lock.Dependency{Name: p.Source[strings.LastIndex(p.Source, "/")+1:], Ref: p.Source + ":" + p.Version, Resolved: p.Source + "@" + p.Digest}
	}
	shared := pkg("r.io/shared", "v1.0.0")
	shared.Replaces = []string{"r.io/old-shared"}
	l.Packages = append(l.Packages, shared, lock.Package{Source: "r.io/old-shared", ReplacedBy: "r.io/shared"})
	for _, root := range []struct{ src, version string }{{"r.io/app", "v1.0.0"}, {"r.io/app", "v2.0.0"}} {
		r := pkg(root.src, root.version)
		for i := range 9 {
			d := pkg(fmt.Sprintf("r.io/%s-dep%d", root.version, i), "v1.0.0")
			r.Dependencies = append(r.Dependencies, dep(d))
			l.Packages = append(l.Packages, d)
		}
		old := dep(shared)
		old.Resolved = "r.io/old-shared@" + shared.Digest // through the replacement
		r.Dependencies = append(r.Dependencies, old)
		l.Packages = append(l.Packages, r)
		l.Roots = append(l.Roots, r.Source+"@"+r.Digest)
	}
	return l
}

// TestParseIncomplete: a lock that is not whole (cut short, a root or a
// dependency edited away) is refused when it is read, naming what is
// missing, with exit code 2; the intact lock is accepted.
func TestParseIncomplete(t *testing.T) {
	full, err := wide().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	text := string(full)
	// cutAtPackage cuts the lock at the package entry nearest its middle,
	// so what is left still parses as YAML.
	cutAtPackage := func(s string) string {
		i := strings.Index(s[len(s)/2:], "\n  - source:")
		if i < 0 {
			t.Fatal("no package entry after the middle")
		}
		return s[:len(s)/2+i+1]
	}
	dApp1 := digest.FromString("r.io/appv1.0.0").String()
	dDep := digest.FromString("r.io/v2.0.0-dep3v1.0.0").String()
	tests := []struct {
		name string
		data string
		want []string // "" for the intact lock
	}{
		{"intact", text, nil},
		{"intact, built by hand", string(mustMarshal(t, diamond())), nil},
		{"cut in half at a package", cutAtPackage(text), []string{"not in the lock", "run ferry lock"}},
		{"cut in half anywhere", text[:len(text)/2], nil /* any error */},
		{"a root missing", strings.Replace(text, "- r.io/app@"+dApp1, "- r.io/app@"+digest.FromString("gone").String(), 1),
			[]string{"root r.io/app@" + digest.FromString("gone").String() + " is not in the lock"}},
		{"a root source missing", strings.Replace(text, "roots:\n", "roots:\n  - r.io/nope\n", 1), []string{"root r.io/nope is not in the lock"}},
		{"a dependency at a missing digest", strings.Replace(text, "resolved: r.io/v2.0.0-dep3@"+dDep, "resolved: r.io/v2.0.0-dep3@"+digest.FromString("edited").String(), 1),
			[]string{"package r.io/app: dependency v2.0.0-dep3: r.io/v2.0.0-dep3@" + digest.FromString("edited").String() + " is not in the lock"}},
		{"a dependency's package removed", strings.Replace(text, "source: r.io/v2.0.0-dep3\n", "source: r.io/v2.0.0-dep3x\n", 1),
			[]string{"dependency v2.0.0-dep3: r.io/v2.0.0-dep3@" + dDep + " is not in the lock"}},
		{"credentials in a source", strings.Replace(text, "source: r.io/shared\n", "source: u:pw-MARKER@r.io/shared\n", 1), []string{`package source "REDACTED@r.io/shared" holds credentials`}},
		{"credentials in a mirror", strings.Replace(text, "source: r.io/shared\n", "source: r.io/shared\n    mirror: https://u:pw-MARKER@m.io/x\n", 1), []string{"package mirror", "holds credentials"}},
		{"credentials in a section", strings.Replace(string(mustMarshal(t, diamond())), "feed: https://feed", "feed: https://u:pw-MARKER@feed", 1), []string{`mixins "https://REDACTED@feed" holds credentials`}},
		{"a replacement missing", strings.Replace(text, "replacedBy: r.io/shared", "replacedBy: r.io/gone", 1), []string{"replaced by r.io/gone, which is not in the lock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := lock.Parse([]byte(tt.data))
			intact := tt.want == nil && !strings.HasPrefix(tt.name, "cut")
			if intact {
				if err != nil {
					t.Fatalf("Parse refused an intact lock: %v", err)
				}
				if strings.HasPrefix(tt.name, "intact,") {
					return
				}
				if len(l.Resolved()) != 21 || len(l.Roots) != 2 {
					t.Fatalf("parsed %d packages and %d roots, want 21 and 2", len(l.Resolved()), len(l.Roots))
				}
				return
			}
			if tt.data == text {
				t.Fatal("the case changed nothing")
			}
			if err == nil {
				t.Fatalf("Parse accepted a lock of %d packages:\n%s", len(l.Packages), tt.data)
			}
			if strings.Contains(err.Error(), "MARKER") {
				t.Errorf("the error shows the password: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			path := filepath.Join(t.TempDir(), "ferry.lock")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := lock.Read(path); exitcode.Of(err) != exitcode.Usage {
				t.Errorf("Read: %v (exit %d), want exit 2", err, exitcode.Of(err))
			}
		})
	}
}

func mustMarshal(t *testing.T, l *lock.Lock) []byte {
	t.Helper()
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReadTooLarge: a lock over MaxFileSize is refused from its size,
// before it is read, with exit code 2 naming the file and the cap.
func TestReadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ferry.lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the test never holds the file's bytes.
	if err := f.Truncate(lock.MaxFileSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = lock.Read(path)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "64.0 MiB") {
		t.Errorf("Read = %v (exit %d), want exit 2 naming %s and the 64 MiB cap", err, exitcode.Of(err), path)
	}
}

// TestSignaturesRecordedEmpty pins that a package whose signatures were
// recorded and found none keeps "signatures: []" through a write and a
// read, while one never recorded stays without the key: an import pushes
// no artifact the first names, and whatever it finds for the second.
func TestSignaturesRecordedEmpty(t *testing.T) {
	d := "sha256:" + strings.Repeat("1", 64)
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: d, Packages: []lock.Package{
		{Source: "r.io/recorded", Version: "v1", Digest: d, Signatures: lock.Signatures{}},
		{Source: "r.io/old", Version: "v1", Digest: d},
	}}
	b, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "signatures: []"); n != 1 {
		t.Fatalf("%d empty signature lists written:\n%s", n, b)
	}
	back, err := lock.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := back.Package("r.io/recorded").Signatures; s == nil || len(s) != 0 {
		t.Errorf("recorded-empty list read back as %#v", s)
	}
	if s := back.Package("r.io/old").Signatures; s != nil {
		t.Errorf("never-recorded list read back as %#v", s)
	}
}
