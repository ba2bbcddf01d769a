package kudo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/serve"
)

// servedPackage is a package artifact pushed for the serve tests.
type servedPackage struct {
	repo     string // below the server
	fix      fixture
	dotSlash bool
	tarball  []byte
	manifest digest.Digest
}

func (p *servedPackage) tag() string { return versionTag(p.fix.app, p.fix.opv) }

// startKudoServer runs `ferry serve` (serve.Start with the KUDO
// repository mounted at RepoPath, as cmd/ferry does), pushes each
// package's artifact (Artifact, as `ferry mirror` builds it) to it over
// HTTP with oras, and binds the handler.
func startKudoServer(t *testing.T, pkgs []*servedPackage) (srv *serve.Server, root string) {
	t.Helper()
	ctx := context.Background()
	h := NewRepoHandler()
	root = t.TempDir()
	srv, err := serve.Start(ctx, serve.Options{Root: root, Addr: "127.0.0.1:0", Extra: map[string]http.Handler{RepoPath: h}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := h.Bind(srv.Registry()); err != nil {
		t.Fatal(err)
	}
	c := registrytest.Client(t)
	for _, p := range pkgs {
		p.tarball = tgz(t, p.fix.files(t), p.dotSlash)
		blobs, desc, err := Artifact(p.tarball, Config{Name: p.fix.name, AppVersion: p.fix.app, OperatorVersion: p.fix.opv, Repository: "https://operators.example.com/v1"})
		if err != nil {
			t.Fatal(err)
		}
		r := registrytest.Repository(t, c, srv.Addr+"/"+p.repo)
		for d, b := range blobs {
			if d == desc.Digest {
				continue
			}
			if err := r.Push(ctx, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: d, Size: int64(len(b))}, bytes.NewReader(b)); err != nil {
				t.Fatalf("push %s: %v", p.repo, err)
			}
		}
		if err := r.PushReference(ctx, desc, bytes.NewReader(blobs[desc.Digest]), p.tag()); err != nil {
			t.Fatalf("push %s:%s: %v", p.repo, p.tag(), err)
		}
		p.manifest = desc.Digest
	}
	// Something that is not a KUDO package, in a repository of its own.
	other := registrytest.Repository(t, c, srv.Addr+"/misc/thing")
	if _, err := oras.PackManifest(ctx, other, oras.PackManifestVersion1_1, "application/vnd.example.thing", oras.PackManifestOptions{}); err != nil {
		t.Fatal(err)
	}
	return srv, root
}

// sha256Hex is a tarball's digest as KUDO's index records it.
func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// httpGet downloads u; an error for a status other than 200 or a body
// cut short.
func httpGet(u string) ([]byte, error) {
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return b, err
	}
	if resp.StatusCode != http.StatusOK {
		return b, fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b, nil
}

// readIndex downloads base/index.yaml and parses it with ParseIndex, the
// reader ferry uses for KUDO's own repositories.
func readIndex(t *testing.T, base string) (*IndexFile, []byte) {
	t.Helper()
	raw, err := httpGet(base + "/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	idx, err := ParseIndex(raw)
	if err != nil {
		t.Fatalf("ParseIndex: %v\n%s", err, raw)
	}
	return idx, raw
}

// tarballThrough opens source with a RepoCache (as `ferry resolve` and
// `ferry mirror` read a KUDO repository), resolves tag and reads the
// package layer of the artifact it builds: the tarball the repository
// served, checked against the index's digest.
func tarballThrough(cache *RepoCache, source, tag string) ([]byte, error) {
	ctx := context.Background()
	r, err := cache.Open(source, http.DefaultClient)
	if err != nil {
		return nil, err
	}
	desc, err := r.Resolve(ctx, tag)
	if err != nil {
		return nil, err
	}
	mb, err := content.FetchAll(ctx, r, desc)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(mb, &m); err != nil {
		return nil, err
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != PackageLayerMediaType {
		return nil, fmt.Errorf("artifact layers %+v", m.Layers)
	}
	return content.FetchAll(ctx, r, m.Layers[0])
}

func repoTags(t *testing.T, cache *RepoCache, source string) []string {
	t.Helper()
	r, err := cache.Open(source, http.DefaultClient)
	if err != nil {
		t.Fatalf("open %s: %v", source, err)
	}
	var out []string
	if err := r.Tags(context.Background(), "", func(tags []string) error { out = append(out, tags...); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestServeKudoRepository: `ferry serve` answers a KUDO repository from
// the package artifacts it stores. ferry's own KUDO repository reader
// (ParseIndex, RepoCache) reads its index.yaml and downloads each
// tarball, which is the pushed one byte for byte, with the index's
// sha256; the first repository in catalog order answers a version
// several hold; artifacts that are not KUDO packages, or stored under
// another name, are not listed.
func TestServeKudoRepository(t *testing.T) {
	pkgs := []*servedPackage{
		{repo: "mirror/kudo-operators/kafka", fix: kafka("2.8.0", "1.0.0", TaskSpec{Package: "zookeeper"})},
		{repo: "mirror/kudo-operators/kafka", fix: kafka("2.8.0", "1.1.0", TaskSpec{Package: "zookeeper"}), dotSlash: true},
		{repo: "mirror/kudo-operators/zookeeper", fix: zookeeper("3.6.3", "0.3.0")},
		{repo: "mirror/kudo-operators/zookeeper", fix: zookeeper("", "0.2.0")},
		// Later in catalog order, other bytes: not served.
		{repo: "zz/kudo-operators/kafka", fix: kafka("2.8.0", "1.0.0", TaskSpec{Package: "zookeeper"}), dotSlash: true},
		// Stored under another operator's name: not listed.
		{repo: "mirror/kudo-operators/other", fix: zookeeper("3.7.0", "0.4.0")},
	}
	srv, _ := startKudoServer(t, pkgs)
	if bytes.Equal(pkgs[0].tarball, pkgs[4].tarball) {
		t.Fatal("the fixture's duplicate has the same bytes: the first-wins check cannot fail")
	}
	base := "http://" + srv.Addr + "/kudo"
	idx, raw := readIndex(t, base)
	for _, want := range []string{"apiVersion: v1\n", "\ngenerated: "} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("index.yaml lacks %q:\n%s", want, raw)
		}
	}
	var names []string
	for n := range idx.Entries {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"kafka", "zookeeper"}) {
		t.Errorf("index lists %v, want kafka and zookeeper", names)
	}
	cache := NewRepoCache()
	tests := []struct {
		name string
		pkg  *servedPackage
		tags []string // the operator's versions, newest first
	}{
		{name: "kafka 1.0.0", pkg: pkgs[0], tags: []string{"2.8.0_1.1.0", "2.8.0_1.0.0"}},
		{name: "kafka 1.1.0 (./ names)", pkg: pkgs[1], tags: []string{"2.8.0_1.1.0", "2.8.0_1.0.0"}},
		{name: "zookeeper with appVersion", pkg: pkgs[2], tags: []string{"3.6.3_0.3.0", "0.2.0"}},
		{name: "zookeeper without appVersion", pkg: pkgs[3], tags: []string{"3.6.3_0.3.0", "0.2.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pkg
			var got []string
			var entry *IndexVersion
			for _, v := range idx.Entries[p.fix.name] {
				got = append(got, v.Tag())
				if v.Tag() == p.tag() {
					entry = v
				}
			}
			if !slices.Equal(got, tt.tags) {
				t.Errorf("index versions %v, want %v", got, tt.tags)
			}
			if entry == nil {
				t.Fatalf("index has no %s %s", p.fix.name, p.tag())
			}
			if entry.Name != p.fix.name || entry.AppVersion != p.fix.app || entry.OperatorVersion != p.fix.opv {
				t.Errorf("entry %+v, want %s %s %s", entry, p.fix.name, p.fix.app, p.fix.opv)
			}
			if want := sha256Hex(p.tarball); entry.Digest != want {
				t.Errorf("digest %s, want the tarball's sha256 %s", entry.Digest, want)
			}
			if want := base + "/" + p.fix.name + "-" + p.tag() + ".tgz"; !slices.Equal(entry.URLs, []string{want}) {
				t.Errorf("urls %v, want [%s]", entry.URLs, want)
			}
			data, err := httpGet(entry.URLs[0])
			if err != nil || !bytes.Equal(data, p.tarball) {
				t.Errorf("GET %s: %v; the pushed tarball: %v", entry.URLs[0], err, bytes.Equal(data, p.tarball))
			}
			if tags := repoTags(t, cache, Source(base, p.fix.name)); !slices.Equal(tags, tt.tags) {
				t.Errorf("RepoCache tags %v, want %v", tags, tt.tags)
			}
			data, err = tarballThrough(cache, Source(base, p.fix.name), p.tag())
			if err != nil {
				t.Fatalf("reading %s %s through RepoCache: %v", p.fix.name, p.tag(), err)
			}
			if !bytes.Equal(data, p.tarball) {
				t.Error("the tarball RepoCache read is not the pushed one")
			}
			pk, err := LoadArchive(data)
			if err != nil || pk.Operator.Name != p.fix.name || pk.Version() != p.tag() {
				t.Errorf("loading the download: %v", err)
			}
		})
	}
	for _, p := range []string{"/kudo/kafka-9.9.9.tgz", "/kudo/thing-1.0.0.tgz", "/kudo/other-3.7.0_0.4.0.tgz", "/kudo/zookeeper-3.7.0_0.4.0.tgz", "/kudo/kafka-2.8.0_1.0.0.zip", "/kudo/misc"} {
		resp, err := http.Get("http://" + srv.Addr + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", p, resp.Status)
		}
	}
}

// TestServeKudoRepositoryChecks: with a lock, only the locked packages
// (kind kudo.operator) are listed and downloadable (others: 404 saying
// why, and a log line); a package whose stored tarball was altered is
// cut off, whatever the lock, and ferry's reader refuses it.
func TestServeKudoRepositoryChecks(t *testing.T) {
	pkgs := []*servedPackage{
		{repo: "m/kudo-operators/kafka", fix: kafka("2.8.0", "1.0.0", TaskSpec{Package: "zookeeper"})},
		{repo: "m/kudo-operators/kafka", fix: kafka("2.8.0", "1.1.0", TaskSpec{Package: "zookeeper"})},
		{repo: "m/kudo-operators/zookeeper", fix: zookeeper("3.6.3", "0.3.0")},
	}
	srv, root := startKudoServer(t, pkgs)
	l := &lock.Lock{Packages: []lock.Package{
		{Source: "kudo+https://operators.example.com/v1/kafka", Kind: format.KindKudoOperator, Version: "2.8.0_1.0.0", Digest: pkgs[0].manifest.String(), Mirror: "mirror.example.com/m/kudo-operators/kafka"},
		{Source: "kudo+https://operators.example.com/v1/zookeeper", Kind: format.KindKudoOperator, Version: "3.6.3_0.3.0", Digest: pkgs[2].manifest.String(), Mirror: "mirror.example.com/m/kudo-operators/zookeeper"},
		// Another kind with kafka 1.1.0's digest does not unlock it.
		{Source: "example.com/x", Kind: format.KindArtifact, Digest: pkgs[1].manifest.String()},
	}}
	var mu sync.Mutex
	var logged []string
	locked := NewRepoHandler()
	if err := locked.BindLocked(srv.Registry(), l, func(f string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, args...))
	}); err != nil {
		t.Fatal(err)
	}
	ls := httptest.NewServer(locked)
	t.Cleanup(ls.Close)
	lockedBase, openBase := ls.URL+"/kudo", "http://"+srv.Addr+"/kudo"

	// Tamper with zookeeper's stored tarball, keeping its size.
	layer := sha256Hex(pkgs[2].tarball)
	p := filepath.Join(root, "docker", "registry", "v2", "blobs", "sha256", layer[:2], layer, "data")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-10] ^= 0xff
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}

	idx, _ := readIndex(t, lockedBase)
	if vs := idx.Entries["kafka"]; len(vs) != 1 || vs[0].Tag() != "2.8.0_1.0.0" {
		t.Errorf("locked index lists kafka %+v, want 2.8.0_1.0.0 only", vs)
	}
	// The index is built from manifests and configs: an altered tarball
	// is still listed, with the digest it must have.
	if vs := idx.Entries["zookeeper"]; len(vs) != 1 || vs[0].Digest != layer {
		t.Errorf("locked index lists zookeeper %+v, want 3.6.3_0.3.0 with digest %s", vs, layer)
	}
	tests := []struct {
		name, base, file string
		wantErr          string // "": the download is the pushed tarball
		tarball          []byte
	}{
		{name: "locked", base: lockedBase, file: "kafka-2.8.0_1.0.0.tgz", tarball: pkgs[0].tarball},
		{name: "not locked", base: lockedBase, file: "kafka-2.8.0_1.1.0.tgz", wantErr: "the lock holds"},
		{name: "unlocked server serves it", base: openBase, file: "kafka-2.8.0_1.1.0.tgz", tarball: pkgs[1].tarball},
		{name: "altered tarball, locked", base: lockedBase, file: "zookeeper-3.6.3_0.3.0.tgz", wantErr: "EOF"},
		{name: "altered tarball, unlocked", base: openBase, file: "zookeeper-3.6.3_0.3.0.tgz", wantErr: "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := httpGet(tt.base + "/" + tt.file)
			if tt.wantErr == "" {
				if err != nil || !bytes.Equal(data, tt.tarball) {
					t.Errorf("GET %s: %v (%d bytes), want the pushed tarball", tt.file, err, len(data))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("GET %s: %v (%d bytes), want an error mentioning %q", tt.file, err, len(data), tt.wantErr)
			}
			if bytes.Equal(data, tt.tarball) {
				t.Errorf("GET %s: got the whole tarball", tt.file)
			}
		})
	}
	readers := []struct {
		name, base, operator, tag string
		wantTags                  []string
	}{
		{name: "locked: one kafka", base: lockedBase, operator: "kafka", tag: "2.8.0_1.0.0", wantTags: []string{"2.8.0_1.0.0"}},
		{name: "altered tarball, locked", base: lockedBase, operator: "zookeeper", tag: "3.6.3_0.3.0", wantTags: []string{"3.6.3_0.3.0"}},
		{name: "altered tarball, unlocked", base: openBase, operator: "zookeeper", tag: "3.6.3_0.3.0", wantTags: []string{"3.6.3_0.3.0"}},
	}
	for _, tt := range readers {
		t.Run("RepoCache "+tt.name, func(t *testing.T) {
			cache := NewRepoCache()
			src := Source(tt.base, tt.operator)
			if tags := repoTags(t, cache, src); !slices.Equal(tags, tt.wantTags) {
				t.Errorf("tags %v, want %v", tags, tt.wantTags)
			}
			data, err := tarballThrough(cache, src, tt.tag)
			if tt.operator == "zookeeper" {
				if err == nil {
					t.Errorf("read the altered tarball (%d bytes) without an error", len(data))
				}
				return
			}
			if err != nil || !bytes.Equal(data, pkgs[0].tarball) {
				t.Errorf("read %s: %v, want the pushed tarball", tt.tag, err)
			}
		})
	}
	resp, err := http.Get(lockedBase + "/kafka-2.8.0_1.1.0.tgz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "the lock holds") {
		t.Errorf("unlocked package: %s %q, want 404 saying why", resp.Status, body)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(logged, "\n")
	for _, w := range []string{"operator index: leaving out operator kafka 2.8.0_1.1.0", "operator download refused: operator kafka 2.8.0_1.1.0", "operator download cut off: m/kudo-operators/zookeeper"} {
		if !strings.Contains(joined, w) {
			t.Errorf("log %q does not say %q", joined, w)
		}
	}
}

// TestServeKudoUnbound: the handler answers 503 until ferry serve binds
// it to the running registry.
func TestServeKudoUnbound(t *testing.T) {
	s := httptest.NewServer(NewRepoHandler())
	t.Cleanup(s.Close)
	resp, err := http.Get(s.URL + "/kudo/index.yaml")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("unbound: %s, want 503", resp.Status)
	}
}
