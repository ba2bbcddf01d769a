package mixin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/file"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func fileDigest(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return digestOf(b)
}

// entries lists the names below dir, recursively, relative to it.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

func TestEndToEnd(t *testing.T) {
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	c := registrytest.Client(t)
	hc := c.HTTPClient()

	feed, err := LoadFeed(ctx, hc, fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	locked, err := Fetch(ctx, hc, feed, "exec", "1.x", nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if locked.Version != "v1.2.3" || locked.Constraint != "1.x" || locked.Feed != fs.URL || locked.Name != "exec" {
		t.Fatalf("locked = %+v", locked)
	}
	if got, want := strings.Join(locked.Keys(), " "), "exec-darwin-amd64 exec-darwin-arm64 exec-linux-amd64 exec-linux-arm64 exec-windows-amd64.exe"; got != want {
		t.Fatalf("binaries %q, want %q", got, want)
	}
	for k, b := range locked.Binaries {
		orig := fs.Bytes("v1.2.3", k)
		if b.Digest != digestOf(orig) || b.Size != int64(len(orig)) || b.URL != fs.FileURL("v1.2.3", k) {
			t.Errorf("%s: locked %+v, feed has %s (%d bytes)", k, b, digestOf(orig), len(orig))
		}
		if got := fileDigest(t, filepath.Join(dir, k)); got != b.Digest {
			t.Errorf("%s on disk: %s", k, got)
		}
	}
	if got := entries(t, dir); len(got) != 5 {
		t.Errorf("dir holds %q, want only the 5 binaries", got)
	}

	// Mirror.
	var root atomic.Pointer[string]
	reg := registrytest.New(t, registrytest.WithWrap(catalogFromDisk(&root)))
	root.Store(&reg.Root)
	repoName := reg.Host + "/mirror/porter-mixins/exec"
	repo := registrytest.Repository(t, c, repoName)
	desc, err := Push(ctx, repo, locked, dir, client.RetryPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	locked.Mirror = repoName + "@" + desc.Digest.String()
	checkManifest(t, ctx, repo, locked)

	// Re-pushing is a no-op: same digest, no blob uploaded.
	reg.Reset()
	desc2, err := Push(ctx, repo, locked, dir, client.RetryPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if desc2.Digest != desc.Digest {
		t.Errorf("re-push digest %s, want %s", desc2.Digest, desc.Digest)
	}
	for _, r := range reg.Requests() {
		if strings.Contains(r.Path, "/blobs/uploads") {
			t.Errorf("re-push uploaded a blob: %s %s", r.Method, r.Path)
		}
	}

	// `oras pull` equivalent: copy the artifact into a file store.
	orasDir := t.TempDir()
	store, err := file.New(orasDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, repo, "v1.2.3", store, "v1.2.3", oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
	store.Close()
	pullDir := t.TempDir()
	if err := Pull(ctx, repo, "v1.2.3", locked, pullDir); err != nil {
		t.Fatal(err)
	}
	for _, k := range locked.Keys() {
		orig := fs.Bytes("v1.2.3", k)
		for _, d := range []string{orasDir, pullDir} {
			got, err := os.ReadFile(filepath.Join(d, k))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, orig) {
				t.Errorf("%s in %s differs from the feed's bytes", k, d)
			}
		}
	}

	// A second mixin, restricted to platforms, for the mirror protocol.
	helmDir := t.TempDir()
	helm, err := Fetch(ctx, hc, feed, "helm3", "", []string{"darwin/arm64"}, nil, helmDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(helm.Keys(), " "); got != "helm3-darwin-arm64 helm3-linux-amd64" || helm.Version != "v1.2.3" {
		t.Fatalf("helm3 %s binaries %q", helm.Version, got)
	}
	if _, err := Push(ctx, registrytest.Repository(t, c, reg.Host+"/mirror/porter-mixins/helm3"), helm, helmDir, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}
	// Another version of exec, so the served feed has a choice to make.
	oldDir := t.TempDir()
	old, err := Fetch(ctx, hc, feed, "exec", "v1.0.0", []string{"linux/amd64"}, nil, oldDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Push(ctx, repo, old, oldDir, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}

	// Install with the feed offline.
	fs.Close()
	for _, p := range []struct{ goos, goarch, client string }{
		{"linux", "amd64", "exec-linux-amd64"},
		{"windows", "amd64", "exec-windows-amd64.exe"},
		{"darwin", "arm64", "exec-darwin-arm64"},
	} {
		t.Run("install "+p.goos+"/"+p.goarch, func(t *testing.T) {
			home := t.TempDir()
			if err := InstallPorterHome(ctx, repo, locked, home, p.goos, p.goarch); err != nil {
				t.Fatal(err)
			}
			clientName := "exec"
			if p.goos == "windows" {
				clientName += ".exe"
			}
			want := map[string]string{
				"mixins/exec/" + clientName:         p.client,
				"mixins/exec/runtimes/exec-runtime": "exec-linux-amd64",
			}
			for rel, key := range want {
				path := filepath.Join(home, filepath.FromSlash(rel))
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o755 {
					t.Errorf("%s mode %v", rel, st.Mode())
				}
				if got := fileDigest(t, path); got != locked.Binaries[key].Digest {
					t.Errorf("%s = %s, want %s", rel, got, key)
				}
			}
			if got := entries(t, home); len(got) != 5 {
				t.Errorf("PORTER_HOME holds %q", got)
			}
		})
	}

	// Serve Porter's mirror protocol from the registry.
	regClient, err := c.Registry(reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	// A repository elsewhere in the registry is not served.
	if _, err := Push(ctx, registrytest.Repository(t, c, reg.Host+"/elsewhere/exec"), old, oldDir, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewHandler(&RegistryStore{Registry: regClient, Prefix: "mirror"}))
	defer srv.Close()
	served, err := LoadFeed(ctx, http.DefaultClient, srv.URL+"/mixins/atom.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range served.Names() {
		for _, v := range served.Versions(n) {
			got = append(got, n+"@"+v.Version+":"+fileNames(v.Files))
		}
	}
	if want := []string{
		"exec@v1.0.0:exec-linux-amd64",
		"exec@v1.2.3:exec-darwin-amd64 exec-darwin-arm64 exec-linux-amd64 exec-linux-arm64 exec-windows-amd64.exe",
		"helm3@v1.2.3:helm3-darwin-arm64 helm3-linux-amd64",
	}; !slices.Equal(got, want) || len(served.Warnings) != 0 {
		t.Errorf("served feed %q (warnings %q), want %q", got, served.Warnings, want)
	}
	for _, tt := range []struct {
		name, version, goos, goarch string
		lock                        *Locked
		client                      string
	}{
		{"exec", "v1.2.3", "linux", "amd64", locked, "exec-linux-amd64"},
		{"exec", "v1.2.3", "windows", "amd64", locked, "exec-windows-amd64.exe"},
		{"exec", "latest", "linux", "amd64", locked, "exec-linux-amd64"},
		{"exec", "v1.0.0", "linux", "amd64", old, "exec-linux-amd64"},
		{"helm3", "v1.2.3", "darwin", "arm64", helm, "helm3-darwin-arm64"},
	} {
		t.Run("porter mixins install "+tt.name+" --version "+tt.version+" "+tt.goos+"/"+tt.goarch, func(t *testing.T) {
			clientBytes, runtimeBytes := porterMixinsInstall(t, srv.URL, tt.name, tt.version, tt.goos, tt.goarch)
			if got, want := digestOf(clientBytes), tt.lock.Binaries[tt.client].Digest; got != want {
				t.Errorf("client %s, locked %s", got, want)
			}
			if got, want := digestOf(runtimeBytes), tt.lock.Binaries[tt.name+"-linux-amd64"].Digest; got != want {
				t.Errorf("runtime %s, locked %s", got, want)
			}
		})
	}
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/mixins/v9.9.9/exec-linux-amd64", http.StatusNotFound},
		{"/mixins/v1.2.3/exec-linux-s390x", http.StatusNotFound},
		{"/mixins/v1.2.3/nope-linux-amd64", http.StatusNotFound},
		{"/mixins/v1.2.3/exec", http.StatusNotFound},
		{"/mixins/v1.2.3/..%2f..%2fexec-linux-amd64", http.StatusNotFound},
		{"/v2/", http.StatusNotFound},
	} {
		resp, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
	}
}

// checkManifest checks the artifact's shape against PRODUCT.md.
func checkManifest(t *testing.T, ctx context.Context, repo *remote.Repository, locked *Locked) {
	t.Helper()
	desc, err := repo.Resolve(ctx, locked.Version)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest || m.ArtifactType != ArtifactType {
		t.Errorf("mediaType %s artifactType %s", m.MediaType, m.ArtifactType)
	}
	if m.Config.MediaType != ocispec.MediaTypeEmptyJSON || m.Config.Digest != ocispec.DescriptorEmptyJSON.Digest {
		t.Errorf("config %+v", m.Config)
	}
	var titles []string
	for _, l := range m.Layers {
		title := l.Annotations[ocispec.AnnotationTitle]
		titles = append(titles, title)
		b := locked.Binaries[title]
		if l.MediaType != LayerMediaType || l.Digest.String() != b.Digest || l.Size != b.Size {
			t.Errorf("layer %s: %+v, locked %+v", title, l, b)
		}
	}
	if !slices.Equal(titles, locked.Keys()) {
		t.Errorf("layer titles %q, want %q", titles, locked.Keys())
	}
}

// porterMixinsInstall does what `porter mixins install NAME --version
// VERSION --mirror MIRROR` does on goos/goarch: fetch MIRROR/mixins/atom.xml,
// look the version up (exact, or "latest"), find the download URLs whose
// path contains NAME-OS-ARCH and NAME-linux-amd64, and download them.
func porterMixinsInstall(t *testing.T, mirror, name, version, goos, goarch string) (clientBytes, runtimeBytes []byte) {
	t.Helper()
	feedURL, err := url.Parse(mirror)
	if err != nil {
		t.Fatal(err)
	}
	feedURL.Path = "/mixins/atom.xml"
	resp, err := http.Get(feedURL.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", feedURL, resp.Status)
	}
	feed, err := ParseFeed(resp.Body, feedURL.String())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := feed.Lookup(name, version)
	if !ok && version == "latest" {
		v, err = feed.Choose(name, "latest")
		ok = err == nil
	}
	if !ok {
		t.Fatalf("the feed at %s does not contain an entry for %s @ %s", feedURL, name, version)
	}
	find := func(os, arch string) string {
		match := name + "-" + os + "-" + arch
		for _, f := range v.Files {
			u, _ := url.Parse(f.URL)
			if strings.Contains(u.Path, match) {
				return f.URL
			}
		}
		return ""
	}
	clientURL := find(goos, goarch)
	runtimeURL := find("linux", "amd64")
	if clientURL == "" || runtimeURL == "" {
		t.Fatalf("%s @ %s did not publish a download for %s/%s or linux/amd64", name, version, goos, goarch)
	}
	return httpGet(t, clientURL), httpGet(t, runtimeURL)
}

func httpGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFetchBadInput(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	hc := c.HTTPClient()
	tests := []struct {
		name       string
		setup      func(fs *mixintest.FeedServer)
		constraint string
		platforms  []string
		prev       func(t *testing.T, fs *mixintest.FeedServer, feed *Feed) *Locked
		wantErr    []string
		wantCode   int
	}{
		{
			name:       "no matching version",
			constraint: "2.x",
			wantErr:    []string{`mixin exec: no version satisfies "2.x" in`, "(versions: v1.0.0 v1.2.3 v1.3.0-beta.1)"},
			wantCode:   exitcode.Failure,
		},
		{
			name:       "404 on one binary",
			setup:      func(fs *mixintest.FeedServer) { fs.NotFound("v1.2.3", "exec-darwin-arm64") },
			constraint: "1.x",
			wantErr:    []string{"/mixins/v1.2.3/exec-darwin-arm64", "404 Not Found"},
			wantCode:   exitcode.Failure,
		},
		{
			name:       "platform not published",
			constraint: "1.x",
			platforms:  []string{"windows/arm64"},
			wantErr:    []string{"mixin exec v1.2.3 publishes no binary for windows/arm64"},
			wantCode:   exitcode.Failure,
		},
		{
			name:       "malformed platform",
			constraint: "1.x",
			platforms:  []string{"linux"},
			wantErr:    []string{`platform "linux" is not OS/ARCH`},
			wantCode:   exitcode.Usage,
		},
		{
			name:       "binary swapped upstream, same size",
			constraint: "1.x",
			prev:       lockNow,
			setup:      func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-linux-amd64", 0) },
			wantErr:    []string{"exec-linux-amd64", "does not match ferry.lock", "locked sha256:"},
			wantCode:   exitcode.Mismatch,
		},
		{
			name:       "binary swapped upstream, other size",
			constraint: "1.x",
			prev:       lockNow,
			setup:      func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-windows-amd64.exe", 7) },
			wantErr:    []string{"exec-windows-amd64.exe", "does not match ferry.lock"},
			wantCode:   exitcode.Mismatch,
		},
		{
			name:       "locked binary no longer listed",
			constraint: "1.x",
			prev: func(t *testing.T, fs *mixintest.FeedServer, feed *Feed) *Locked {
				l := lockNow(t, fs, feed)
				l.Binaries["exec-linux-s390x"] = Binary{Digest: digestOf(nil), Size: 0}
				return l
			},
			wantErr:  []string{"exec-linux-s390x is in ferry.lock but the feed"},
			wantCode: exitcode.Mismatch,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := mixintest.NewFeed(t)
			feed, err := LoadFeed(ctx, hc, fs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			var prev *Locked
			if tt.prev != nil {
				prev = tt.prev(t, fs, feed)
			}
			if tt.setup != nil {
				tt.setup(fs)
			}
			dir := filepath.Join(t.TempDir(), "out")
			_, err = Fetch(ctx, hc, feed, "exec", tt.constraint, tt.platforms, prev, dir)
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if got := exitcode.Of(err); got != tt.wantCode {
				t.Errorf("exit code %d, want %d (%v)", got, tt.wantCode, err)
			}
			if got := entries(t, dir); len(got) != 0 {
				t.Errorf("Fetch wrote %q", got)
			}
		})
	}

	t.Run("malformed feed", func(t *testing.T) {
		fs := mixintest.NewFeed(t)
		fs.Malformed(true)
		if _, err := LoadFeed(ctx, hc, fs.URL, nil); err == nil || !strings.Contains(err.Error(), "not an Atom feed") {
			t.Fatalf("err = %v", err)
		}
	})

	t.Run("same version, unchanged binaries", func(t *testing.T) {
		fs := mixintest.NewFeed(t)
		feed, err := LoadFeed(ctx, hc, fs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		prev := lockNow(t, fs, feed)
		// A different version in prev is not compared.
		fs.Swap("v1.0.0", "exec-linux-amd64", 3)
		got, err := Fetch(ctx, hc, feed, "exec", "1.x", nil, prev, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Binaries, prev.Binaries) {
			t.Errorf("binaries changed: %+v", got.Binaries)
		}
		prevOld := *prev
		prevOld.Version = "v1.0.0"
		fs.Swap("v1.2.3", "exec-linux-amd64", 0)
		if _, err := Fetch(ctx, hc, feed, "exec", "1.x", nil, &prevOld, t.TempDir()); err != nil {
			t.Errorf("a lock of another version was compared: %v", err)
		}
	})
}

// lockNow fetches exec 1.x as it is now and returns its lock entry.
func lockNow(t *testing.T, fs *mixintest.FeedServer, feed *Feed) *Locked {
	t.Helper()
	l, err := Fetch(context.Background(), http.DefaultClient, feed, "exec", "1.x", nil, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestInstallBadInput(t *testing.T) {
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	c := registrytest.Client(t)
	hc := c.HTTPClient()
	feed, err := LoadFeed(ctx, hc, fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	full, err := Fetch(ctx, hc, feed, "exec", "1.x", nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := registrytest.New(t)
	repo := registrytest.Repository(t, c, reg.Host+"/mirror/porter-mixins/exec")
	// The mirror artifact lacks exec-darwin-arm64.
	partial := *full
	partial.Binaries = map[string]Binary{}
	for k, b := range full.Binaries {
		if k != "exec-darwin-arm64" {
			partial.Binaries[k] = b
		}
	}
	if _, err := Push(ctx, repo, &partial, dir, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}

	tampered := *full
	tampered.Binaries = map[string]Binary{}
	for k, b := range full.Binaries {
		tampered.Binaries[k] = b
	}
	tampered.Binaries["exec-linux-amd64"] = Binary{Digest: digestOf([]byte("other")), Size: 5, URL: "x"}

	evil := *full
	evil.Name = "../evil"
	evilKey := *full
	evilKey.Binaries = map[string]Binary{"../exec-linux-amd64": full.Binaries["exec-linux-amd64"]}

	tests := []struct {
		name         string
		lock         *Locked
		goos, goarch string
		wantErr      string
		wantCode     int
	}{
		{"binary missing from the artifact", full, "darwin", "arm64", "exec-darwin-arm64 is in ferry.lock but not in the mirror artifact", exitcode.Mismatch},
		{"digest differs from the lock", &tampered, "linux", "amd64", "exec-linux-amd64 in the mirror is sha256:", exitcode.Mismatch},
		{"client not locked", full, "plan9", "386", "ferry.lock has no client binary for plan9/386", exitcode.Failure},
		{"mixin name escapes", &evil, "linux", "amd64", `mixin "../evil"`, exitcode.Usage},
		{"binary name escapes", &evilKey, "linux", "amd64", "path separator", exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			err := InstallPorterHome(ctx, repo, tt.lock, home, tt.goos, tt.goarch)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if got := exitcode.Of(err); got != tt.wantCode {
				t.Errorf("exit code %d, want %d", got, tt.wantCode)
			}
			if got := entries(t, home); len(got) != 0 {
				t.Errorf("wrote %q", got)
			}
		})
	}

	t.Run("pull of an artifact missing a binary", func(t *testing.T) {
		dest := filepath.Join(t.TempDir(), "out")
		err := Pull(ctx, repo, full.Version, full, dest)
		if err == nil || !strings.Contains(err.Error(), "exec-darwin-arm64 is in ferry.lock but not in the mirror artifact") {
			t.Fatalf("err = %v", err)
		}
		if got := entries(t, dest); len(got) != 0 {
			t.Errorf("wrote %q", got)
		}
	})

	t.Run("push of a file that differs from the lock", func(t *testing.T) {
		swapped := *full
		swapped.Version = "v9.0.0"
		bad := t.TempDir()
		for _, k := range full.Keys() {
			data := fs.Bytes("v1.2.3", k)
			if k == "exec-linux-amd64" {
				data = append([]byte("x"), data[1:]...)
			}
			if err := os.WriteFile(filepath.Join(bad, k), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A fresh repository, so no blob is skipped as existing.
		_, err := Push(ctx, registrytest.Repository(t, c, reg.Host+"/other/porter-mixins/exec"), &swapped, bad, client.RetryPolicy{})
		if err == nil || !strings.Contains(err.Error(), "exec-linux-amd64 does not match ferry.lock") || exitcode.Of(err) != exitcode.Mismatch {
			t.Fatalf("err = %v", err)
		}
	})
}

// catalogFromDisk answers GET /v2/_catalog from the registry's storage
// directory when the embedded registry's own answer is empty: serve.Handler
// leaves configuration.Catalog.MaxEntries at 0, which makes distribution
// return no repositories at all. Once serve sets it, the real catalog is
// used unchanged.
func catalogFromDisk(rootp *atomic.Pointer[string]) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v2/_catalog" {
				next.ServeHTTP(w, r)
				return
			}
			root := ""
			if p := rootp.Load(); p != nil {
				root = *p
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var body struct {
				Repositories []string `json:"repositories"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || len(body.Repositories) > 0 || root == "" {
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				w.Write(rec.Body.Bytes())
				return
			}
			base := filepath.Join(root, "docker", "registry", "v2", "repositories")
			filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() && d.Name() == "_manifests" {
					rel, _ := filepath.Rel(base, filepath.Dir(p))
					body.Repositories = append(body.Repositories, filepath.ToSlash(rel))
					return filepath.SkipDir
				}
				return nil
			})
			slices.Sort(body.Repositories)
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(body)
		})
	}
}
