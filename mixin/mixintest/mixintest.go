// Package mixintest serves Porter mixin feeds built by code, for tests: an
// Atom feed on 127.0.0.1 listing versions of mixins for several platforms,
// with binaries of deterministic pseudo-random content, and knobs to break
// it (a 404 on one binary, a swapped binary, a malformed feed).
package mixintest

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Default fixture contents.
var (
	// DefaultMixins are the mixins served.
	DefaultMixins = []string{"exec", "helm3"}
	// DefaultVersions are the versions of every mixin, one a prerelease.
	DefaultVersions = []string{"v1.0.0", "v1.2.3", "v1.3.0-beta.1"}
	// DefaultPlatforms are the platforms every version is published for.
	DefaultPlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64"}
)

// Options changes what NewFeed serves; zero fields take the defaults.
type Options struct {
	Mixins    []string
	Versions  []string
	Platforms []string
}

// FeedServer serves a mixin feed at URL and its binaries at
// BASE/mixins/VERSION/NAME-OS-ARCH[.exe], the layout of cdn.porter.sh.
type FeedServer struct {
	// URL is the feed's URL, http://127.0.0.1:PORT/mixins/atom.xml.
	URL string
	// Base is http://127.0.0.1:PORT.
	Base string
	// Mixins, Versions and Platforms are what the feed lists.
	Mixins, Versions, Platforms []string

	srv *httptest.Server

	mu        sync.Mutex
	missing   map[string]bool
	replaced  map[string][]byte
	malformed bool
	requests  []string
}

// NewFeed starts a feed server on 127.0.0.1 and closes it when the test
// ends. opts may be omitted.
func NewFeed(t testing.TB, opts ...Options) *FeedServer {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	s := &FeedServer{
		Mixins:    orDefault(o.Mixins, DefaultMixins),
		Versions:  orDefault(o.Versions, DefaultVersions),
		Platforms: orDefault(o.Platforms, DefaultPlatforms),
		missing:   map[string]bool{},
		replaced:  map[string][]byte{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.Base = s.srv.URL
	s.URL = s.Base + "/mixins/atom.xml"
	t.Cleanup(s.Close)
	return s
}

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return append([]string(nil), def...)
	}
	return append([]string(nil), v...)
}

// Close stops the server; later requests fail to connect.
func (s *FeedServer) Close() { s.srv.Close() }

// FileName returns NAME-OS-ARCH[.exe] for a platform "os/arch".
func FileName(name, platform string) string {
	goos, goarch, _ := strings.Cut(platform, "/")
	n := name + "-" + goos + "-" + goarch
	if goos == "windows" {
		n += ".exe"
	}
	return n
}

// Files returns the file names of one version of mixin name.
func (s *FeedServer) Files(name string) []string {
	out := make([]string, len(s.Platforms))
	for i, p := range s.Platforms {
		out[i] = FileName(name, p)
	}
	return out
}

// FileURL returns the download URL of a file of a version.
func (s *FeedServer) FileURL(version, file string) string {
	return s.Base + "/mixins/" + version + "/" + file
}

// Content returns the original bytes of a file of a version: a few KiB,
// pseudo-random, different for every file and the same in every run.
func Content(version, file string) []byte {
	return pseudoRandom("ferry-mixintest/" + version + "/" + file)
}

func pseudoRandom(seed string) []byte {
	sum := sha256.Sum256([]byte(seed))
	r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), binary.LittleEndian.Uint64(sum[8:16])))
	b := make([]byte, 2048+r.IntN(4096))
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// Bytes returns what the server currently serves for a file of a version.
func (s *FeedServer) Bytes(version, file string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b, ok := s.replaced[version+"/"+file]; ok {
		return b
	}
	return Content(version, file)
}

// NotFound makes the server answer 404 for one file of a version.
func (s *FeedServer) NotFound(version, file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.missing[version+"/"+file] = true
}

// Swap changes the bytes of one file of a version, as an upstream that
// re-publishes a binary under the same version would; sizeDelta adds that
// many bytes (0 keeps the size).
func (s *FeedServer) Swap(version, file string, sizeDelta int) {
	b := pseudoRandom("swapped/" + version + "/" + file)
	orig := Content(version, file)
	n := len(orig) + sizeDelta
	for len(b) < n {
		b = append(b, b...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replaced[version+"/"+file] = b[:n]
}

// Malformed makes the feed answer with a document that is not Atom XML.
func (s *FeedServer) Malformed(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.malformed = on
}

// Requests returns the paths requested so far.
func (s *FeedServer) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Updated returns the <updated> time of a version: versions are published
// a month apart, in the order of Versions.
func (s *FeedServer) Updated(version string) time.Time {
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, v := range s.Versions {
		if v == version {
			return base.AddDate(0, i, 0)
		}
	}
	return base
}

func (s *FeedServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.URL.Path)
	malformed := s.malformed
	s.mu.Unlock()
	if r.URL.Path == "/mixins/atom.xml" {
		w.Header().Set("Content-Type", "application/atom+xml")
		if malformed {
			fmt.Fprint(w, "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><category term=\"exec\"></entry>")
			return
		}
		fmt.Fprint(w, s.feed())
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/mixins/")
	version, file, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 || !s.lists(version, file) {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	missing := s.missing[version+"/"+file]
	s.mu.Unlock()
	if missing {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Write(s.Bytes(version, file))
}

func (s *FeedServer) lists(version, file string) bool {
	for _, v := range s.Versions {
		if v != version {
			continue
		}
		for _, m := range s.Mixins {
			for _, f := range s.Files(m) {
				if f == file {
					return true
				}
			}
		}
	}
	return false
}

// feed renders the Atom feed the way cdn.porter.sh's is laid out.
func (s *FeedServer) feed() string {
	var b strings.Builder
	b.WriteString(`<feed xmlns="http://www.w3.org/2005/Atom">` + "\n")
	fmt.Fprintf(&b, "  <id>%s/mixins</id>\n  <title>Test Mixins</title>\n", s.Base)
	fmt.Fprintf(&b, "  <updated>%s</updated>\n", s.Updated(s.Versions[len(s.Versions)-1]).Format(time.RFC3339))
	fmt.Fprintf(&b, "  <link rel=\"self\" href=\"%s\"/>\n", s.URL)
	b.WriteString("  <author><name>ferry tests</name></author>\n")
	for _, m := range s.Mixins {
		fmt.Fprintf(&b, "  <category term=\"%s\"/>\n", m)
	}
	for i := len(s.Versions) - 1; i >= 0; i-- {
		v := s.Versions[i]
		for _, m := range s.Mixins {
			b.WriteString("  <entry>\n")
			fmt.Fprintf(&b, "    <id>%s/mixins/%s/%s</id>\n", s.Base, v, m)
			fmt.Fprintf(&b, "    <title>%s @ %s</title>\n", m, v)
			fmt.Fprintf(&b, "    <updated>%s</updated>\n", s.Updated(v).Format(time.RFC3339))
			fmt.Fprintf(&b, "    <category term=\"%s\"/>\n", m)
			fmt.Fprintf(&b, "    <content>%s</content>\n", v)
			for _, f := range s.Files(m) {
				fmt.Fprintf(&b, "    <link rel=\"download\" href=\"%s\"/>\n", s.FileURL(v, f))
			}
			b.WriteString("  </entry>\n")
		}
	}
	b.WriteString("</feed>\n")
	return b.String()
}
