package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/verify"
)

// TestE2ELockIncomplete: a lock cut short, or with a root or dependency
// edited away, is refused by every command that reads it, with exit 2
// naming what is missing, before anything is copied or installed.
func TestE2ELockIncomplete(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	full := env.ReadFile("ferry.lock")
	if n := len(w.lock.Resolved()); n < 6 {
		t.Fatalf("the fixture lock has %d packages; the test needs more", n)
	}
	// Cut at the package entry nearest the middle, so what is left is
	// still YAML (a cut anywhere is refused as well).
	i := strings.Index(full[len(full)/2:], "\n  - source:")
	if i < 0 {
		t.Fatal("no package entry after the middle of the lock")
	}
	cut := full[:len(full)/2+i+1]
	root := w.lock.Roots[0]
	dep := w.lock.Package(w.cat.Diamond[:strings.LastIndex(w.cat.Diamond, ":")]).Dependencies[0]
	gone := digest.FromString("gone").String()
	depSource, _, _ := strings.Cut(dep.Resolved, "@")
	cases := []struct {
		name string
		lock string
		want string
	}{
		{"cut in half", cut, "is not in the lock"},
		{"cut anywhere", full[:len(full)/2], "bad.lock: "},
		{"root removed", strings.Replace(full, "  - "+root+"\n", "  - "+root+"-gone\n", 1), "root " + root + "-gone is not in the lock"},
		{"dependency at another digest", strings.ReplaceAll(full, "resolved: "+dep.Resolved, "resolved: "+depSource+"@"+gone), depSource + "@" + gone + " is not in the lock"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.lock == full {
				t.Fatal("the case changed nothing")
			}
			env.WriteFile("bad.lock", tc.lock)
			for _, args := range [][]string{
				{"verify", "--lock", "bad.lock"},
				{"verify", "--deep", "--lock", "bad.lock"},
				{"install", "--lock", "bad.lock", "--dest", "out"},
				{"mirror", "--lock", "bad.lock"},
				{"why", "--lock", "bad.lock", "db"},
			} {
				r := env.Run(args...)
				if r.Code != 2 || !strings.Contains(r.Stderr, tc.want) || !strings.Contains(r.Stderr, "bad.lock") {
					t.Errorf("ferry %s: exit %d, want 2 naming bad.lock and %q:\n%s", strings.Join(args, " "), r.Code, tc.want, r.Stderr)
				}
			}
			e2eAbsent(t, env.Path("out"))
		})
	}
}

// TestE2ELockEditedImage: an image digest edited in the lock is not in the
// package's manifest graph: verify, shallow and deep, reports it (exit 3)
// naming the package and the image.
func TestE2ELockEditedImage(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	l := e2eReadLock(t, env, "ferry.lock")
	var p *lock.Package
	for _, q := range l.Resolved() {
		if len(q.Images) > 0 {
			p = q
			break
		}
	}
	if p == nil {
		t.Fatal("no package with images in the fixture lock")
	}
	edited := digest.FromString("not an image of " + p.Source).String()
	name := p.Images[0].Name
	p.Images[0].Digest = edited
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	for _, deep := range []bool{false, true} {
		t.Run(fmt.Sprintf("deep=%v", deep), func(t *testing.T) {
			args := []string{}
			if deep {
				args = append(args, "--deep")
			}
			problems := e2eProblems(t, env, args...)
			found := false
			for _, pr := range problems {
				switch {
				case pr.Kind == verify.ProblemImage && pr.Package == p.Source && strings.Contains(pr.Detail, name+"@"+edited):
					found = true
				case deep && pr.Kind == verify.ProblemImage && pr.Package == p.Source && strings.Contains(pr.Detail, "does not record"):
					// --deep reads the bundle again: the image whose digest
					// was replaced is one images[] no longer records.
				default:
					t.Errorf("unexpected problem: %s", pr)
				}
			}
			if !found {
				t.Errorf("no %s problem for %s image %s in %v", verify.ProblemImage, p.Source, name, problems)
			}
		})
	}
	// Mirroring and installing read the same manifests: the edited image
	// is refused before it reaches a mirror or relocation-mapping.json.
	t.Run("mirror", func(t *testing.T) {
		env.Expect(exitcode.Mismatch, []string{"mirror", "--lock", "ferry.lock", "--to", w.mirror.Host + "/again"}, p.Source, edited)
	})
	t.Run("install", func(t *testing.T) {
		env.Expect(exitcode.Mismatch, []string{"install", "--dest", "out"}, p.Source, edited)
		if _, err := os.Stat(env.Path("out")); !os.IsNotExist(err) {
			t.Errorf("install wrote out/ for a lock with an edited image: %v", err)
		}
	})
}

// TestE2ELockCheckedBothWays: the lock is checked against the package
// the other way round too (issue 28): an image the package carries that
// images[] no longer records, and a package kind edited into another,
// are exit 3 from verify --deep and from install, naming the field,
// because the format that claims the manifest reads it again (at the
// mirror; from what install fetched).
func TestE2ELockCheckedBothWays(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	full := env.ReadFile("ferry.lock")
	for _, tc := range []struct {
		name, kind, want string
		edit             func(p *lock.Package) bool
	}{
		{"image deleted from images[]", verify.ProblemImage, "does not record", func(p *lock.Package) bool {
			if len(p.Images) == 0 {
				return false
			}
			p.Images = p.Images[1:]
			return true
		}},
		{"kind edited", verify.ProblemKind, `the lock has kind "helm.chart"`, func(p *lock.Package) bool {
			if len(p.Images) == 0 {
				return false
			}
			p.Kind = "helm.chart"
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := lock.Parse([]byte(full))
			if err != nil {
				t.Fatal(err)
			}
			var edited *lock.Package
			for _, p := range l.Resolved() {
				if tc.edit(p) {
					edited = p
					break
				}
			}
			if edited == nil {
				t.Fatal("no package to edit in the fixture lock")
			}
			if err := l.Write(env.Path("edited.lock")); err != nil {
				t.Fatal(err)
			}
			env.Expect(exitcode.Mismatch, []string{"verify", "--lock", "edited.lock", "--deep"}, edited.Source, tc.want)
			found := false
			for _, pr := range e2eProblems(t, env, "--lock", "edited.lock", "--deep") {
				if pr.Kind == tc.kind && pr.Package == edited.Source {
					found = true
				}
			}
			if !found {
				t.Errorf("no %s problem for %s", tc.kind, edited.Source)
			}
			// install reads the package again from what it fetched, and
			// refuses before relocation-mapping.json names anything.
			out := "out-" + tc.kind
			env.Expect(exitcode.Mismatch, []string{"install", "--lock", "edited.lock", "--dest", out}, edited.Source, tc.want)
			if _, err := os.Stat(env.Path(out)); !os.IsNotExist(err) {
				t.Errorf("install wrote %s for an edited lock: %v", out, err)
			}
		})
	}
	env.MustRun("verify", "--deep")
	env.MustRun("install", "--dest", "out")
}

// headerRewriter lets a test change a response's headers just before
// they are sent.
type headerRewriter struct {
	http.ResponseWriter
	edit  func(http.Header)
	wrote bool
}

func (w *headerRewriter) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.edit(w.Header())
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *headerRewriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// TestE2EManifestJudgedByBytes: whatever headers the registry sends with
// a manifest (Content-Type text/html, another manifest type, no
// Docker-Content-Digest, a wrong one), the lock records the digest of the
// bytes and the media type of the content; content that is not a
// manifest, or does not hash to the digest announced, is refused.
func TestE2EManifestJudgedByBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	html := "<!DOCTYPE html><html><body>Please sign in</body></html>"
	cases := []struct {
		name string
		// edit changes the headers of a manifest GET; body, when set,
		// replaces the response entirely.
		edit func(http.Header)
		body string
		// wantErr is what the failure says; "" when the lock must be
		// written with the bytes' digest and media type.
		wantErr []string
	}{
		{name: "Content-Type text/html", edit: func(h http.Header) { h.Set("Content-Type", "text/html; charset=utf-8") }},
		{name: "another manifest media type", edit: func(h http.Header) { h.Set("Content-Type", "application/vnd.docker.distribution.manifest.v2+json") }},
		{name: "no Docker-Content-Digest", edit: func(h http.Header) { h.Del("Docker-Content-Digest") }},
		{name: "no Docker-Content-Digest, text/html", edit: func(h http.Header) {
			h.Del("Docker-Content-Digest")
			h.Set("Content-Type", "text/html")
		}},
		{name: "wrong Docker-Content-Digest", edit: func(h http.Header) { h.Set("Docker-Content-Digest", digest.FromString("x").String()) },
			wantErr: []string{"acme/app:v1.0.0", digest.FromString("x").String()}},
		{name: "an HTML page with status 200", body: html,
			wantErr: []string{"acme/app:v1.0.0", "not an OCI or Docker manifest", "not JSON", "text/html"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var armed bool
			src := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !armed || r.Method != http.MethodGet || !strings.Contains(r.URL.Path, "/manifests/v1.0.0") {
						next.ServeHTTP(w, r)
						return
					}
					if tc.body != "" {
						w.Header().Set("Content-Type", "text/html")
						w.Header().Set("Content-Length", fmt.Sprint(len(tc.body)))
						w.Header().Set("Docker-Content-Digest", digest.FromString(tc.body).String())
						_, _ = w.Write([]byte(tc.body))
						return
					}
					next.ServeHTTP(&headerRewriter{ResponseWriter: w, edit: tc.edit}, r)
				})
			}))
			c := e2eClient(t)
			ref := src.Host + "/acme/app"
			root, err := fixture.PushBundle(ctx, e2eRepo(t, c, ref), ref, e2eBundle("app", "1.0.0"))
			if err != nil {
				t.Fatal(err)
			}
			armed = true
			env := e2eEnv(t)
			r := env.Run("lock", ref+":v1.0.0")
			if tc.wantErr != nil {
				if r.Code == 0 {
					t.Fatalf("ferry lock accepted it:\n%s", env.ReadFile("ferry.lock"))
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(r.Stderr, w) {
						t.Errorf("stderr lacks %q:\n%s", w, r.Stderr)
					}
				}
				e2eAbsent(t, env.Path("ferry.lock"))
				return
			}
			if r.Code != 0 {
				t.Fatalf("ferry lock: exit %d\n%s", r.Code, r.Stderr)
			}
			p := e2eReadLock(t, env, "ferry.lock").Package(ref)
			if p == nil || p.Digest != root.Digest.String() || p.MediaType != ocispec.MediaTypeImageIndex || p.Size != root.Size {
				t.Errorf("locked %+v, want the bytes' digest %s, %s and %d bytes", p, root.Digest, ocispec.MediaTypeImageIndex, root.Size)
			}
		})
	}
}
