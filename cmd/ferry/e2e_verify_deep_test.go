package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EVerifyDeepOncePerDigest: `ferry verify --deep` reads each blob
// once however many mirror repositories hold it (the bytes read are the
// unique bytes, as the summary says), and still proves that each
// repository holds every blob its packages need: a shared blob unlinked
// from one repository is reported missing there (exit 3).
func TestE2EVerifyDeepOncePerDigest(t *testing.T) {
	t.Parallel()
	var wire registrytest.BlobReads
	src := registrytest.New(t)
	mirror := registrytest.New(t, registrytest.WithWrap(wire.Wrap))
	c := e2eClient(t)
	// One bundle pushed to three repositories: the same seed, so every
	// blob (invocation and component images) is in each of them.
	b := fixture.Bundle{Name: "shared", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"base"}}
	var roots []string
	for _, name := range []string{"a", "b", "c"} {
		if _, err := fixture.PushBundle(context.Background(), e2eRepo(t, c, src.Host+"/shared/"+name), src.Host+"/shared", b); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, "  - ref: "+src.Host+"/shared/"+name+":v1.0.0\n")
	}
	env := e2eEnv(t)
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n"+strings.Join(roots, "")+"mirror:\n  to: "+mirror.Host+"/mirror\n")
	env.MustRun("lock")
	env.MustRun("mirror", "-j", "2")
	// Which repositories link each blob, from the mirror's storage.
	repos := filepath.Join(mirror.Root, "docker", "registry", "v2", "repositories")
	holders := map[string][]string{}
	err := filepath.WalkDir(repos, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "link" || filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))) != "_layers" {
			return err
		}
		rel, err := filepath.Rel(repos, p)
		if err != nil {
			return err
		}
		repo, rest, _ := strings.Cut(filepath.ToSlash(rel), "/_layers/")
		dg := strings.Replace(strings.TrimSuffix(rest, "/link"), "/", ":", 1) // sha256/HEX
		holders[dg] = append(holders[dg], repo)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	wire.Reset()
	r := env.Expect(0, []string{"verify", "--deep", "-j", "4"}, "re-hashed")
	gets, read := wire.Counts()
	var unique int64
	var shared digest.Digest
	for d, n := range gets {
		if n != 1 {
			t.Errorf("blob %s read %d times", d, n)
		}
		fi, err := os.Stat(e2eBlobPath(mirror, d))
		if err != nil {
			t.Fatal(err)
		}
		unique += fi.Size()
		if len(holders[d.String()]) > 1 && (shared == "" || d < shared) {
			shared = d
		}
	}
	if read != unique || len(gets) == 0 {
		t.Errorf("read %d bytes in %d GETs, the unique bytes are %d", read, len(gets), unique)
	}
	if !strings.Contains(r.Stdout+r.Stderr, fmt.Sprintf("re-hashed: %d unique blobs, ", len(gets))) {
		t.Errorf("the summary does not give the unique blobs:\n%s%s", r.Stdout, r.Stderr)
	}
	if shared == "" {
		t.Fatalf("no blob the verify read is linked in two mirror repositories: %v", holders)
	}

	// Unlinked from one repository: still missing there.
	repo := holders[shared.String()][0]
	link := filepath.Join(repos, filepath.FromSlash(repo), "_layers", shared.Algorithm().String(), shared.Encoded())
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	wire.Reset()
	env.Expect(3, []string{"verify", "--deep", "-j", "4"}, "missing: "+mirror.Host+"/"+repo+"@"+shared.String())
	after, _ := wire.Counts()
	for d, n := range after {
		if n != 1 {
			t.Errorf("after the unlink, blob %s read %d times", d, n)
		}
	}
}
