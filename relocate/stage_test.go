package relocate_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

func TestStaging(t *testing.T) {
	dir := t.TempDir()
	dest := filepath.Join(dir, "closure.tar")
	st, err := relocate.OpenStage(dest, "aaaa")
	if err != nil {
		t.Fatal(err)
	}
	if st.Dir != relocate.StagePath(dest, "aaaa") || st.Resumed {
		t.Fatalf("stage %+v", st)
	}
	// A second run on the same staging is kept out while the first holds it.
	if _, err := relocate.OpenStage(dest, "aaaa"); !errors.Is(err, relocate.ErrStageInUse) {
		t.Errorf("second open: %v, want ErrStageInUse", err)
	}
	if err := os.WriteFile(filepath.Join(st.Dir, "blob"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	st.Close()
	st, err = relocate.OpenStage(dest, "aaaa")
	if err != nil || !st.Resumed {
		t.Fatalf("reopen: %+v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir, "blob")); err != nil {
		t.Errorf("reopened staging lost its content: %v", err)
	}
	st.Close()

	// A directory with a staging name that ferry did not make is refused
	// and never removed, by a run or by gc.
	foreign := relocate.StagePath(dest, "ffff")
	if err := os.MkdirAll(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "mine"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.OpenStage(dest, "ffff"); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("open over a foreign directory: %v", err)
	}

	// Another key removes the stale staging of the same destination, not
	// the foreign directory.
	st, err = relocate.OpenStage(dest, "bbbb")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(relocate.StagePath(dest, "aaaa")); !os.IsNotExist(err) {
		t.Errorf("stale staging kept: %v", err)
	}
	st.Close()
	found, err := relocate.FindStaging([]string{dir})
	if err != nil || len(found) != 1 || found[0] != relocate.StagePath(dest, "bbbb") {
		t.Fatalf("FindStaging = %v, %v", found, err)
	}
	if found2, _ := relocate.FindStaging([]string{dest}); len(found2) != 1 {
		t.Errorf("FindStaging(dest) = %v", found2)
	}
	n, err := relocate.RemoveStaging(found[0])
	if err != nil || n <= 0 {
		t.Errorf("RemoveStaging = %d, %v", n, err)
	}
	if _, err := relocate.RemoveStaging(foreign); err == nil {
		t.Errorf("removed a foreign directory")
	}
	if b, err := os.ReadFile(filepath.Join(foreign, "mine")); err != nil || string(b) != "x" {
		t.Errorf("foreign directory changed: %v", err)
	}
}

// writeTar writes entries (name, body) into a tar file in a new directory.
func writeTar(t *testing.T, entries [][2]string) string {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.tar")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadArchiveLockRefusesAmbiguousEntries(t *testing.T) {
	mk := func(src string) string {
		l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: "sha256:" + strings.Repeat("0", 64),
			Packages: []lock.Package{{Source: src, Kind: "oci.artifact", Version: "v1",
				Digest: "sha256:" + strings.Repeat("1", 64), MediaType: "application/vnd.oci.image.manifest.v1+json", Size: 2}}}
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	first, second := mk("r.io/first"), mk("r.io/second")
	layout := [][2]string{{"oci-layout", `{"imageLayoutVersion":"1.0.0"}`}, {"index.json", `{"schemaVersion":2,"manifests":[]}`}}
	tests := []struct {
		name    string
		entries [][2]string
		bad     string // the entry the error names; empty: accepted
	}{
		{"one lock", append(layout, [2]string{"ferry.lock", first}), ""},
		{"dot-slash names", [][2]string{{"./oci-layout", "{}"}, {"./ferry.lock", first}}, ""},
		{"two locks", append(layout, [2]string{"ferry.lock", first}, [2]string{"ferry.lock", second}), "ferry.lock"},
		{"two locks, one as ./", append(layout, [2]string{"ferry.lock", first}, [2]string{"./ferry.lock", second}), "./ferry.lock"},
		{"a blob twice", append(layout, [2]string{"blobs/sha256/ab", "x"}, [2]string{"blobs//sha256/ab", "y"}, [2]string{"ferry.lock", first}), "blobs//sha256/ab"},
		{"escaping", append(layout, [2]string{"../escaped", "x"}, [2]string{"ferry.lock", first}), "../escaped"},
		{"escaping after cleaning", append(layout, [2]string{"blobs/../../x", "x"}, [2]string{"ferry.lock", first}), "blobs/../../x"},
		{"absolute", append(layout, [2]string{"/etc/x", "x"}, [2]string{"ferry.lock", first}), "/etc/x"},
		// Over the cap (lowered below): refused whole, not cut at the cap
		// and parsed.
		{"oversized lock", append(layout, [2]string{"ferry.lock", first + strings.Repeat("#\n", 4096)}), "ferry.lock"},
	}
	old := lock.MaxFileSize
	lock.MaxFileSize = int64(len(first)) + 1024
	defer func() { lock.MaxFileSize = old }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := relocate.ReadArchiveLock(writeTar(t, tt.entries))
			if tt.bad == "" {
				if err != nil || l.Packages[0].Source != "r.io/first" {
					t.Fatalf("ReadArchiveLock = %v, %v", l, err)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), `"`+tt.bad+`"`) {
				t.Errorf("err = %v (exit %d), want exit 2 naming %q", err, exitcode.Of(err), tt.bad)
			}
		})
	}
}

// faultOnce answers the first request matching match with 503, once per
// key, and lets every later one through.
type faultOnce struct {
	mu    sync.Mutex
	match func(*http.Request) (string, bool)
	hit   map[string]int
}

func (f *faultOnce) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key, ok := f.match(r); ok {
			f.mu.Lock()
			f.hit[key]++
			n := f.hit[key]
			f.mu.Unlock()
			if n == 1 {
				http.Error(w, `{"errors":[{"code":"UNAVAILABLE","message":"injected"}]}`, http.StatusServiceUnavailable)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// TestMirrorRetriesFailedUploads: every blob upload's final PUT fails
// once with 503; the copy re-reads the content and pushes again, and the
// mirror run succeeds.
func TestMirrorRetriesFailedUploads(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	f := &faultOnce{hit: map[string]int{}, match: func(r *http.Request) (string, bool) {
		d := r.URL.Query().Get("digest")
		return d, r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/blobs/uploads/") && d != ""
	}}
	faulty := registrytest.New(t, registrytest.WithWrap(f.wrap))
	to, _ := relocate.ParseMapping(faulty.Host + "/r")
	rep, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.hit) == 0 {
		t.Fatal("no upload was faulted")
	}
	for d, n := range f.hit {
		if n != 2 {
			t.Errorf("%s: %d PUTs, want 2 (one failed, one retried)", d, n)
		}
	}
	for _, p := range rep.Packages {
		root := l.Package(p.Source)
		if !p.Nodes.Has(digest.Digest(root.Digest)) || p.Nodes.Len() < 3 {
			t.Errorf("%s: nodes lack the root or are too few (%d)", p.Source, p.Nodes.Len())
		}
		for _, im := range root.Images {
			if !p.Nodes.Has(digest.Digest(im.Digest)) {
				t.Errorf("%s: image %s not among the graph's nodes", p.Source, im.Digest)
			}
		}
	}
}

// TestToArchiveKeepsGoingAndResumes: one package's blob cannot be read;
// the other packages are still archived, the error names the failing one,
// the staging stays, and the next run fetches only what was missing, then
// removes the staging.
func TestToArchiveKeepsGoingAndResumes(t *testing.T) {
	ctx := context.Background()
	src, _, c, l := pipelinetest.MirroredLock(t)
	db := l.Package(src.Host + "/p/db")
	var mu sync.Mutex
	broken := false
	var gets []string
	proxy := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			fail := broken && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/p/db/blobs/sha256:")
			if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:") {
				gets = append(gets, r.URL.Path)
			}
			mu.Unlock()
			if fail {
				http.Error(w, `{"errors":[{"code":"DENIED","message":"injected"}]}`, http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
		})
	}))
	// The source content, copied to the proxy registry under the same paths.
	to, _ := relocate.ParseMapping(proxy.Host)
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to}); err != nil {
		t.Fatal(err)
	}
	moved := *l
	moved.Packages = append([]lock.Package(nil), l.Packages...)
	for i := range moved.Packages {
		moved.Packages[i].Source = proxy.Host + strings.TrimPrefix(moved.Packages[i].Source, src.Host)
		moved.Packages[i].Mirror = ""
	}
	moved.Roots = nil
	for _, r := range l.Roots {
		moved.Roots = append(moved.Roots, proxy.Host+strings.TrimPrefix(r, src.Host))
	}
	mu.Lock()
	broken, gets = true, nil
	mu.Unlock()
	dest := filepath.Join(t.TempDir(), "closure.tar")
	_, err := relocate.ToArchive(ctx, &moved, dest, relocate.Options{Source: c, Concurrency: 2}, nil)
	if err == nil || !strings.Contains(err.Error(), proxy.Host+"/p/db") || strings.Contains(err.Error(), "/p/app:") {
		t.Fatalf("err = %v, want one naming only p/db", err)
	}
	staging, _ := relocate.FindStaging([]string{dest})
	if len(staging) != 1 {
		t.Fatalf("staging after a failure: %v", staging)
	}
	mu.Lock()
	first := map[string]bool{}
	for _, g := range gets {
		if strings.Contains(g, "/p/app/") {
			first[g[strings.LastIndex(g, "/")+1:]] = true
		}
	}
	broken, gets = false, nil
	mu.Unlock()
	if len(first) == 0 {
		t.Fatal("p/app was not copied beside the failing p/db")
	}
	rep, err := relocate.ToArchive(ctx, &moved, dest, relocate.Options{Source: c, Concurrency: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	for _, g := range gets {
		if first[g[strings.LastIndex(g, "/")+1:]] {
			t.Errorf("re-run fetched %s again", g)
		}
	}
	mu.Unlock()
	if staging, _ := relocate.FindStaging([]string{dest}); len(staging) != 0 {
		t.Errorf("staging left after success: %v", staging)
	}
	if len(rep.Packages) != 2 {
		t.Errorf("report: %+v", rep.Packages)
	}
	f, err := os.Open(dest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names := map[string]bool{}
	for tr := tar.NewReader(f); ; {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names[h.Name] = true
	}
	for _, want := range []string{relocate.ArchiveLockFile, "index.json", "blobs/sha256/" + strings.TrimPrefix(db.Digest, "sha256:")} {
		if !names[want] {
			t.Errorf("archive lacks %s", want)
		}
	}
	if names[relocate.StageMarker] {
		t.Errorf("the staging marker went into the archive")
	}
}
