package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/verify"
)

// e2eSnapshot lists every file under dir with its content, for "unchanged"
// checks.
func e2eSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestE2EVerifyAndInstallTampered tampers with blobs and manifests in the
// mirror's storage: verify lists every problem and exits 3, install
// refuses and leaves its destination as it was.
func TestE2EVerifyAndInstallTampered(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env, h := w.env, w.src.Host
	c := e2eClient(t)
	// A clean install to compare against after failed ones.
	env.MustRun("install", "--dest", "prev")
	prev := e2eSnapshot(t, env.Path("prev"))

	layerOf := func(source, image string) digest.Digest {
		t.Helper()
		p := w.lock.Package(h + source)
		for _, im := range p.Images {
			if im.Name == image {
				d := ocispec.Descriptor{MediaType: im.MediaType, Digest: digest.Digest(im.Digest), Size: im.Size}
				return e2eLayer(t, e2eRepo(t, c, p.Mirror), d).Digest
			}
		}
		t.Fatalf("%s has no image %s", source, image)
		return ""
	}
	dbLayer := layerOf("/fixtures/diamond/db", "mysql")
	nginxLayer := layerOf("/fixtures/diamond/app", "nginx")
	backup := map[string][]byte{}
	save := func(p string) {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		backup[p] = b
	}
	save(e2eBlobPath(w.mirror, dbLayer))
	save(e2eBlobPath(w.mirror, nginxLayer))
	restore := func() {
		for p, b := range backup {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	installFails := func(t *testing.T, wantCode int) {
		t.Helper()
		r := env.Run("install", "--dest", "fresh")
		if r.Code == 0 || (wantCode != 0 && r.Code != wantCode) {
			t.Errorf("install into a new directory: exit %d, want %d\n%s", r.Code, wantCode, r.Stderr)
		}
		e2eAbsent(t, env.Path("fresh"))
		r = env.Run("install", "--dest", "prev")
		if r.Code == 0 {
			t.Errorf("install over an earlier one succeeded")
		}
		if got := e2eSnapshot(t, env.Path("prev")); !maps.Equal(got, prev) {
			t.Errorf("a failed install changed the earlier install")
		}
		entries, _ := os.ReadDir(env.Dir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("temporary directory left behind: %s", e.Name())
			}
		}
	}
	problems := func(t *testing.T, args ...string) []verify.Problem {
		t.Helper()
		r := env.Expect(3, append([]string{"verify", "-o", "json"}, args...))
		var rep verify.Report
		if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.Stdout)
		}
		return rep.Problems
	}

	t.Run("same size: only --deep", func(t *testing.T) {
		defer restore()
		e2eTamper(t, w.mirror, dbLayer, true)
		env.Expect(0, []string{"verify"})
		r := env.Expect(3, []string{"verify", "--deep"}, h+"/fixtures/diamond/db: digest: ", dbLayer.String(), "1 problems")
		if strings.Count(r.Stdout, "\n") != 1 {
			t.Errorf("want one problem line:\n%s", r.Stdout)
		}
		ps := problems(t, "--deep")
		if len(ps) != 1 || ps[0].Kind != verify.ProblemDigest || !strings.HasSuffix(ps[0].Ref, "@"+dbLayer.String()) {
			t.Errorf("problems = %+v", ps)
		}
		installFails(t, 3)
	})

	t.Run("other size: plain verify", func(t *testing.T) {
		defer restore()
		e2eTamper(t, w.mirror, dbLayer, false)
		env.Expect(3, []string{"verify"}, "size", dbLayer.String())
		installFails(t, 0)
	})

	t.Run("every problem listed", func(t *testing.T) {
		defer restore()
		e2eTamper(t, w.mirror, dbLayer, false)
		e2eTamper(t, w.mirror, nginxLayer, true)
		text := env.Expect(3, []string{"verify", "--deep"}, "2 problems")
		ps := problems(t, "--deep")
		if len(ps) != 2 {
			t.Fatalf("problems = %+v", ps)
		}
		got := []string{ps[0].Package + " " + ps[0].Kind, ps[1].Package + " " + ps[1].Kind}
		slices.Sort(got)
		if want := []string{h + "/fixtures/diamond/app digest", h + "/fixtures/diamond/db size"}; !slices.Equal(got, want) {
			t.Errorf("problems = %v, want %v", got, want)
		}
		for _, p := range ps {
			if !strings.Contains(text.Stdout, p.String()) {
				t.Errorf("text output lacks %q:\n%s", p.String(), text.Stdout)
			}
		}
		// Without --deep only the size problem shows.
		if ps := problems(t); len(ps) != 1 || ps[0].Kind != verify.ProblemSize {
			t.Errorf("plain problems = %+v", ps)
		}
	})

	t.Run("missing manifest", func(t *testing.T) {
		p := w.lock.Package(h + "/fixtures/diamond/web")
		var inv string
		for _, im := range p.Images {
			if im.Name == "invocation" {
				inv = im.Digest
			}
		}
		d := digest.Digest(inv)
		link := filepath.Join(w.mirror.Root, "docker", "registry", "v2", "repositories", strings.TrimPrefix(p.Mirror, w.mirror.Host+"/"),
			"_manifests", "revisions", d.Algorithm().String(), d.Encoded(), "link")
		b, err := os.ReadFile(link)
		if err != nil {
			t.Fatal(err)
		}
		defer os.WriteFile(link, b, 0o644)
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		env.Expect(3, []string{"verify"}, h+"/fixtures/diamond/web: missing: "+p.Mirror+"@"+inv)
		installFails(t, 0)
	})

	// Everything restored: clean again, and an install replaces the old one.
	env.Expect(0, []string{"verify", "--deep"})
	env.MustRun("install", "--dest", "prev")
}
