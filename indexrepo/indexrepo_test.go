package indexrepo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
)

// A toy format: an archive is the text "toy NAME VERSION\n" (and any
// padding), its artifact one layer holding it; the index is YAML.

var errToyMismatch = errors.New("toy archive does not match the index's digest")

type toyEntry struct {
	Version string   `yaml:"version"`
	URLs    []string `yaml:"urls"`
	Digest  string   `yaml:"digest,omitempty"`
}

func toyTag(version string) string { return strings.ReplaceAll(version, "+", "_") }

func parseToy(data []byte) (Index, error) {
	var idx struct {
		Entries map[string][]toyEntry `yaml:"entries"`
	}
	if err := yaml.Unmarshal(data, &idx); err != nil {
		return nil, err
	}
	out := Index{}
	for name, es := range idx.Entries {
		for _, e := range es {
			out[name] = append(out[name], Version{Tag: toyTag(e.Version), Version: e.Version, URLs: e.URLs, Digest: e.Digest, Entry: e})
		}
	}
	return out, nil
}

func buildToy(_ context.Context, d *Download) (Artifact, error) {
	f := strings.Fields(strings.SplitN(string(d.Data), "\n", 2)[0])
	if len(f) != 3 || f[0] != "toy" {
		return Artifact{}, fmt.Errorf("%s is not a toy archive", SafeURL(d.URL))
	}
	if d.Listed && (f[1] != d.Name || f[2] != d.Version.Entry.(toyEntry).Version) {
		return Artifact{}, fmt.Errorf("%s holds toy %s version %s", SafeURL(d.URL), f[1], f[2])
	}
	blobs := map[digest.Digest][]byte{}
	add := func(mediaType string, b []byte) ocispec.Descriptor {
		desc := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b))}
		blobs[desc.Digest] = b
		return desc
	}
	cfg, err := json.Marshal(map[string]string{"name": f[1], "version": f[2]})
	if err != nil {
		return Artifact{}, err
	}
	m, err := json.Marshal(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    add("application/vnd.example.toy.config.v1+json", cfg),
		Layers:    []ocispec.Descriptor{add("application/vnd.example.toy.layer.v1", d.Data)},
	})
	if err != nil {
		return Artifact{}, err
	}
	return Artifact{Blobs: blobs, Manifest: add(ocispec.MediaTypeImageManifest, m), Tag: toyTag(f[2])}, nil
}

// toyMaxArchive is the toy rules' archive size cap.
const toyMaxArchive = 256

var toyRules = Rules{
	Noun:              "toy",
	RepoNoun:          "toy repository",
	MaxIndexSize:      1 << 20,
	MaxArchiveSize:    toyMaxArchive,
	ParseIndex:        parseToy,
	Build:             buildToy,
	ErrDigestMismatch: errToyMismatch,
}

func toyArchive(name, version string) []byte { return []byte("toy " + name + " " + version + "\n") }

// toyManifest is the manifest digest the rules build for an archive.
func toyManifest(t *testing.T, name, version string, data []byte) digest.Digest {
	t.Helper()
	a, err := buildToy(context.Background(), &Download{Name: name, Version: Version{Entry: toyEntry{Version: version}}, Listed: true, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return a.Manifest.Digest
}

// TestRepository: versions of a toy repository on a real HTTP server,
// opened through a Cache, read and refused as the rules and the index
// say.
func TestRepository(t *testing.T) {
	s := indexrepotest.New(t)
	good := toyArchive("web", "2.0.0+meta")
	old := toyArchive("web", "1.0.0")
	other := toyArchive("web", "0.9.0")
	big := append(toyArchive("web", "0.7.0"), make([]byte, toyMaxArchive)...)
	swapped := toyArchive("db", "0.6.0")
	s.Put("/r/web-2.0.0.tgz", good)
	s.Put("/files/web-1.0.0.tgz", old)
	s.Put("/r/web-0.9.0.tgz", other)
	s.Put("/r/web-0.7.0.tgz", big)
	s.Put("/r/web-0.6.0.tgz", swapped)
	s.Put("/r/db-1.0.0.tgz", toyArchive("db", "1.0.0"))
	s.Put("/loose/bad-tag.tgz", toyArchive("bad", "not/a/tag"))
	s.Put("/loose/web-3.0.0.tgz", toyArchive("web", "3.0.0"))
	index := fmt.Sprintf(`entries:
  web:
  - {version: 2.0.0+meta, urls: [web-2.0.0.tgz], digest: "sha256:%s"}
  - {version: 1.0.0, urls: [%s/files/web-1.0.0.tgz], digest: "%s"}
  - {version: 0.9.0, urls: [web-0.9.0.tgz], digest: "%s"}
  - {version: 0.8.0, urls: [web-0.8.0.tgz]}
  - {version: 0.7.0, urls: [web-0.7.0.tgz]}
  - {version: 0.6.0, urls: [web-0.6.0.tgz]}
  - {version: 0.5.0, urls: []}
  - {version: "bad tag", urls: [web-0.5.0.tgz]}
  db:
  - {version: 1.0.0, urls: [db-1.0.0.tgz]}
`, digest.FromBytes(good).Encoded(), s.URL, strings.ToUpper(digest.FromBytes(old).Encoded()), digest.FromBytes(old).Encoded())
	s.Put("/r/index.yaml", []byte(index))
	s.Put("/malformed/index.yaml", []byte("entries: [\n"))
	repoURL := s.URL + "/r"
	goodManifest := toyManifest(t, "web", "2.0.0+meta", good)
	oldManifest := toyManifest(t, "web", "1.0.0", old)
	elsewhere := digest.FromString("elsewhere")
	ctx := context.Background()

	resolve := func(ref string) func(*Cache) (any, error) {
		return func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			d, err := r.Resolve(ctx, ref)
			return d.Digest, err
		}
	}
	tests := []struct {
		name   string
		run    func(c *Cache) (any, error)
		want   any      // the result, when no error
		is     error    // the error wraps it
		msg    []string // the error says them
		code   int      // the error's exit code, when not 0
		counts map[string]int
	}{
		{name: "tag", run: resolve("2.0.0_meta"), want: goodManifest,
			counts: map[string]int{"/r/index.yaml": 1, "/r/web-2.0.0.tgz": 1, "/files/web-1.0.0.tgz": 0}},
		{name: "version as the format writes it", run: resolve("2.0.0+meta"), want: goodManifest},
		{name: "absolute URL, upper-case bare digest", run: resolve("1.0.0"), want: oldManifest},
		{name: "tag pinned to its digest", run: resolve("1.0.0@" + oldManifest.String()), want: oldManifest},
		{name: "tag pinned to another digest", run: resolve("2.0.0_meta@" + oldManifest.String()), is: errdef.ErrNotFound,
			msg: []string{"toy " + repoURL + "/web: version 2.0.0+meta is " + goodManifest.String()}},
		{name: "missing version", run: resolve("9.9.9"), is: errdef.ErrNotFound, msg: []string{"toy " + repoURL + "/web: version 9.9.9"}},
		{name: "invalid tag is not listed", run: resolve("bad tag"), is: errdef.ErrNotFound},
		{name: "digest mismatch", run: resolve("0.9.0"), is: errToyMismatch, code: exitcode.Mismatch,
			msg: []string{"toy " + repoURL + "/web version 0.9.0", repoURL + "/web-0.9.0.tgz",
				"the index says sha256:" + digest.FromBytes(old).Encoded(), "the download is sha256:" + digest.FromBytes(other).Encoded()}},
		{name: "archive missing", run: resolve("0.8.0"), is: ErrHTTPNotFound, msg: []string{repoURL + "/web-0.8.0.tgz", "404"}},
		{name: "archive over the size cap", run: resolve("0.7.0"), msg: []string{"web-0.7.0.tgz", fmt.Sprintf("more than the %d", toyMaxArchive)}},
		{name: "archive of another package", run: resolve("0.6.0"), msg: []string{"version 0.6.0", "holds toy db version 0.6.0"}},
		{name: "no URL", run: resolve("0.5.0"), msg: []string{"version 0.5.0: the index lists no URL"}},
		{name: "manifest by digest after Tags", run: func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			before := s.Count("/files/web-1.0.0.tgz")
			var tags []string
			if err := r.Tags(ctx, "", func(ts []string) error { tags = append(tags, ts...); return nil }); err != nil {
				return nil, err
			}
			if n := s.Count("/files/web-1.0.0.tgz") - before; n != 0 {
				return nil, fmt.Errorf("Tags downloaded an archive %d times", n)
			}
			desc, rc, err := r.FetchReference(ctx, oldManifest.String())
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			return fmt.Sprint(tags, desc.Digest == oldManifest, digest.FromBytes(b) == oldManifest), err
		}, want: fmt.Sprint([]string{"2.0.0_meta", "1.0.0", "0.9.0", "0.8.0", "0.7.0", "0.6.0", "0.5.0"}, true, true)},
		{name: "tags after last", run: func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			var tags []string
			err = r.Tags(ctx, "0.7.0", func(ts []string) error { tags = append(tags, ts...); return nil })
			return fmt.Sprint(tags), err
		}, want: fmt.Sprint([]string{"0.6.0", "0.5.0"})},
		{name: "layer by the index's digest builds that version only", run: func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			return r.Exists(ctx, ocispec.Descriptor{Digest: digest.FromBytes(old), Size: int64(len(old))})
		}, want: true, counts: map[string]int{"/files/web-1.0.0.tgz": 1, "/r/web-2.0.0.tgz": 0}},
		{name: "unknown digest meets a mismatch", run: resolve(elsewhere.String()), is: errToyMismatch,
			msg: []string{"no version is " + elsewhere.String(), "not found", digest.FromBytes(other).Encoded()}},
		{name: "unknown blob does not exist", run: func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			return r.Exists(ctx, ocispec.Descriptor{Digest: elsewhere, Size: 9})
		}, want: false},
		{name: "wrong size", run: func(c *Cache) (any, error) {
			r, err := c.Open(ctx, &toyRules, repoURL, "web", nil)
			if err != nil {
				return nil, err
			}
			_, err = r.Fetch(ctx, ocispec.Descriptor{Digest: digest.FromBytes(good), Size: 1})
			return nil, err
		}, is: errdef.ErrNotFound, msg: []string{fmt.Sprintf("has %d bytes, not 1", len(good))}},
		{name: "built once, index read once", run: func(c *Cache) (any, error) {
			var wg sync.WaitGroup
			errs := make([]error, 8)
			for i := range errs {
				wg.Go(func() {
					name := []string{"web", "db"}[i%2]
					r, err := c.Open(ctx, &toyRules, repoURL, name, nil)
					if err == nil {
						_, err = r.Resolve(ctx, "1.0.0")
					}
					errs[i] = err
				})
			}
			wg.Wait()
			return nil, errors.Join(errs...)
		}, counts: map[string]int{"/r/index.yaml": 1, "/files/web-1.0.0.tgz": 1, "/r/db-1.0.0.tgz": 1}},
		{name: "package not in the index", run: func(c *Cache) (any, error) {
			return c.Open(ctx, &toyRules, repoURL, "cache", nil)
		}, is: errdef.ErrNotFound, msg: []string{`toy "cache": not in the index of toy repository ` + repoURL, "it lists: db, web"}},
		{name: "credentials are never printed", run: func(c *Cache) (any, error) {
			return c.Open(ctx, &toyRules, strings.Replace(repoURL, "http://", "http://ada:s3cr3t@", 1), "cache", nil)
		}, is: errdef.ErrNotFound, msg: []string{"toy repository " + repoURL + " ("}},
		{name: "malformed index", run: func(c *Cache) (any, error) {
			return c.Open(ctx, &toyRules, s.URL+"/malformed", "web", nil)
		}, msg: []string{"toy repository " + s.URL + "/malformed: malformed index.yaml"}},
		{name: "no index", run: func(c *Cache) (any, error) {
			return c.Open(ctx, &toyRules, s.URL+"/none", "web", nil)
		}, is: ErrHTTPNotFound, msg: []string{"toy repository " + s.URL + "/none: reading index.yaml", "404"}},
		{name: "archive by URL learns its tag", run: func(c *Cache) (any, error) {
			r := c.OpenArchive(&toyRules, s.URL+"/loose", "web-3.0.0.tgz", s.URL+"/loose/web-3.0.0.tgz", nil)
			var tags []string
			if err := r.Tags(ctx, "", func(ts []string) error { tags = append(tags, ts...); return nil }); err != nil {
				return nil, err
			}
			d, err := r.Resolve(ctx, "3.0.0")
			return fmt.Sprint(tags, d.Digest == toyManifest(t, "web", "3.0.0", toyArchive("web", "3.0.0"))), err
		}, want: fmt.Sprint([]string{"3.0.0"}, true), counts: map[string]int{"/loose/web-3.0.0.tgz": 1, "/loose/index.yaml": 0}},
		{name: "archive by URL with no valid tag", run: func(c *Cache) (any, error) {
			r := c.OpenArchive(&toyRules, s.URL+"/loose", "bad-tag.tgz", s.URL+"/loose/bad-tag.tgz", nil)
			return r.Resolve(ctx, "x")
		}, msg: []string{"toy " + s.URL + "/loose/bad-tag.tgz: version \"not/a/tag\" cannot be an OCI tag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := map[string]int{}
			for p := range tt.counts {
				before[p] = s.Count(p)
			}
			got, err := tt.run(&Cache{})
			if tt.is == nil && tt.msg == nil {
				if err != nil {
					t.Fatal(err)
				}
				if tt.want != nil && got != tt.want {
					t.Errorf("got %v, want %v", got, tt.want)
				}
			} else {
				if err == nil {
					t.Fatalf("no error (got %v)", got)
				}
				if tt.is != nil && !errors.Is(err, tt.is) {
					t.Errorf("error %q does not wrap %v", err, tt.is)
				}
				for _, m := range tt.msg {
					if !strings.Contains(err.Error(), m) {
						t.Errorf("error %q does not say %q", err, m)
					}
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error %q prints a password", err)
				}
				if tt.code != 0 && exitcode.Of(err) != tt.code {
					t.Errorf("exit code %d, want %d", exitcode.Of(err), tt.code)
				}
			}
			for p, n := range tt.counts {
				if d := s.Count(p) - before[p]; d != n {
					t.Errorf("%s: %d GETs, want %d", p, d, n)
				}
			}
		})
	}
}

// TestGet: the capped GET and the URL helpers.
func TestGet(t *testing.T) {
	s := indexrepotest.New(t)
	s.Put("/small", []byte("12345"))
	s.Put("/large", make([]byte, 1000))
	tests := []struct {
		name string
		url  string
		max  int64
		want string
		is   error
		msg  string
	}{
		{name: "within the cap", url: s.URL + "/small", max: 5, want: "12345"},
		{name: "over the cap", url: s.URL + "/large", max: 999, msg: "1000 bytes, more than the 999 allowed"},
		{name: "404", url: s.URL + "/none", max: 10, is: ErrHTTPNotFound, msg: "GET " + s.URL + "/none"},
		{name: "credentials stripped", url: strings.Replace(s.URL, "http://", "http://u:s3cr3t@", 1) + "/none", max: 10, is: ErrHTTPNotFound, msg: "GET " + s.URL + "/none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Get(context.Background(), http.DefaultClient, tt.url, tt.max)
			if tt.msg == "" {
				if err != nil || string(b) != tt.want {
					t.Fatalf("Get = %q, %v; want %q", b, err, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.msg) || strings.Contains(err.Error(), "s3cr3t") {
				t.Fatalf("error %v, want one saying %q and no password", err, tt.msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
		})
	}
	for _, tt := range []struct{ base, ref, want string }{
		{"https://h.example/a/b", "x.tgz", "https://h.example/a/b/x.tgz"},
		{"https://h.example/a/b/", "../x.tgz", "https://h.example/a/x.tgz"},
		{"https://h.example/a", "https://cdn.example/x.tgz", "https://cdn.example/x.tgz"},
	} {
		if got, err := ResolveURL(tt.base, tt.ref); err != nil || got != tt.want {
			t.Errorf("ResolveURL(%q, %q) = %q, %v; want %q", tt.base, tt.ref, got, err, tt.want)
		}
	}
	if got := SafeURL("https://ada:pw@h.example/r"); got != "https://h.example/r" {
		t.Errorf("SafeURL = %q, want the URL without its userinfo", got)
	}
}

// TestAtMirror: a repository opened at a mirror (OpenMirror) reads an
// archive URL below the source repository's URL at the mirror, as a copy
// of the repository serves it; other URLs, and every URL of a repository
// opened at its own URL, are read as written.
func TestAtMirror(t *testing.T) {
	const src = "https://kudo-repository.storage.googleapis.com/v1"
	tests := []struct{ source, repo, u, want string }{
		{src, "http://127.0.0.1:1/v1", src + "/kafka-1.0.tgz", "http://127.0.0.1:1/v1/kafka-1.0.tgz"},
		{src + "/", "http://127.0.0.1:1/m/", src + "/sub/kafka-1.0.tgz", "http://127.0.0.1:1/m/sub/kafka-1.0.tgz"},
		{src, "http://127.0.0.1:1/v1", "https://kudo-repository.storage.googleapis.com/v10/kafka-1.0.tgz", "https://kudo-repository.storage.googleapis.com/v10/kafka-1.0.tgz"},
		{src, "http://127.0.0.1:1/v1", "https://elsewhere.example/kafka-1.0.tgz", "https://elsewhere.example/kafka-1.0.tgz"},
		{src, src, src + "/kafka-1.0.tgz", src + "/kafka-1.0.tgz"},
	}
	for _, tt := range tests {
		r := &Repository{sourceURL: tt.source, repoURL: tt.repo}
		if got := r.atMirror(tt.u); got != tt.want {
			t.Errorf("source %s at %s: %s is read at %s, want %s", tt.source, tt.repo, tt.u, got, tt.want)
		}
	}
}
