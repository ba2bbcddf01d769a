package mixin

import (
	"bytes"
	"io"
	"net/url"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// FuzzParseFeed checks that every version a parsed feed offers is within
// what the rest of ferry relies on: a mixin name and version, files whose
// names are safe path components of that mixin with the OS and
// architecture they name, absolute URLs without credentials, and that
// Names, Versions and Lookup agree. Seeds are the realworld Porter feed
// and small variants of it.
func FuzzParseFeed(f *testing.F) {
	doc, err := os.ReadFile(realworldFeed)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc, "https://cdn.porter.sh/mixins/atom.xml")
	f.Add(doc, "")
	f.Add([]byte(`<feed><entry><id>1</id><updated>2024-01-02T03:04:05Z</updated><category term="exec"/><content>v1.0.0</content><link rel="download" href="v1.0.0/exec-linux-amd64"/><link rel="download" href="https://u:p@x/exec-windows-amd64.exe"/></entry></feed>`), "http://127.0.0.1:8080/mixins/atom.xml")
	f.Fuzz(func(t *testing.T, data []byte, source string) {
		feed, err := ParseFeed(bytes.NewReader(data), source)
		if err != nil {
			return
		}
		if len(feed.Warnings) > maxWarnings+1 {
			t.Fatalf("kept %d warnings, over the cap of %d", len(feed.Warnings), maxWarnings+1)
		}
		names := feed.Names()
		if !sort.StringsAreSorted(names) {
			t.Fatalf("Names() not sorted: %q", names)
		}
		for _, n := range names {
			versions := feed.Versions(n)
			if len(versions) == 0 {
				t.Fatalf("mixin %q listed without versions", n)
			}
			for _, v := range versions {
				checkFeedVersion(t, n, v)
				got, ok := feed.Lookup(n, v.Version)
				if !ok || got.Version != v.Version || got.Mixin != n || len(got.Files) != len(v.Files) {
					t.Fatalf("Lookup(%q, %q) = %+v, %v; Versions has %+v", n, v.Version, got, ok, v)
				}
			}
		}
	})
}

// checkFeedVersion checks one version of mixin name from a parsed feed.
func checkFeedVersion(t *testing.T, name string, v Version) {
	t.Helper()
	if v.Mixin != name || v.Mixin == "" || v.Version == "" || v.Mixin != strings.TrimSpace(v.Mixin) || v.Version != strings.TrimSpace(v.Version) {
		t.Fatalf("version %+v of mixin %q: empty or untrimmed name or version", v, name)
	}
	if v.Updated.IsZero() {
		t.Fatalf("version %s %s without an updated time", name, v.Version)
	}
	for _, file := range v.Files {
		if err := CheckName(file.Name); err != nil {
			t.Fatalf("version %s %s: file %q: %v", name, v.Version, file.Name, err)
		}
		if file.Name != BinaryName(name, file.OS, file.Arch) {
			t.Fatalf("version %s %s: file %q is not %s for %s/%s", name, v.Version, file.Name, BinaryName(name, file.OS, file.Arch), file.OS, file.Arch)
		}
		if hasUserinfo(file.URL) {
			t.Fatalf("version %s %s: URL with credentials kept: %q", name, v.Version, file.URL)
		}
		u, err := url.Parse(file.URL)
		if err != nil {
			t.Fatalf("version %s %s: URL %q does not parse: %v", name, v.Version, file.URL, err)
		}
		if u.User != nil {
			t.Fatalf("version %s %s: URL with credentials kept: %q", name, v.Version, file.URL)
		}
	}
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// repeating repeats its pattern forever.
type repeating struct {
	pattern []byte
	off     int
}

func (e *repeating) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[e.off]
		e.off = (e.off + 1) % len(e.pattern)
	}
	return len(p), nil
}

// TestParseFeedCap checks that a feed larger than maxFeedSize is refused
// after reading at most maxFeedSize bytes of it, however it goes on, and
// that a feed within the cap keeps no more than it indexes: a feed of
// skipped entries keeps a bounded list of warnings, not one per entry.
func TestParseFeedCap(t *testing.T) {
	const limit = 1 << 20
	defer func(old int64) { maxFeedSize = old }(maxFeedSize)
	maxFeedSize = limit
	skipped := bytes.Repeat([]byte("<entry/>"), (limit-32)/len("<entry/>"))
	tests := []struct {
		name  string
		body  io.Reader
		parse bool
	}{
		{"endless entries", io.MultiReader(strings.NewReader("<feed>"), &repeating{pattern: []byte(`<entry><category term="exec"/><content>v1</content><updated>2024-01-02T03:04:05Z</updated></entry>`)}), false},
		{"endless skipped entries", io.MultiReader(strings.NewReader("<feed>"), &repeating{pattern: []byte(`<entry/>`)}), false},
		{"endless text", io.MultiReader(strings.NewReader("<feed><id>"), &repeating{pattern: []byte("x")}), false},
		{"skipped entries up to the cap", io.MultiReader(strings.NewReader("<feed>"), bytes.NewReader(skipped), strings.NewReader("</feed>")), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &countingReader{r: tt.body}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			feed, err := ParseFeed(c, "https://example.com/atom.xml")
			if c.n > limit {
				t.Fatalf("read %d bytes, over the %d-byte cap", c.n, limit)
			}
			if !tt.parse {
				if err == nil {
					t.Fatal("a feed over the cap parsed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if n := len(feed.Warnings); n > maxWarnings+1 {
				t.Errorf("kept %d warnings, want at most %d", n, maxWarnings+1)
			}
			if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > limit {
				t.Errorf("a parsed %d-byte feed of skipped entries holds %d bytes", c.n, kept)
			}
			runtime.KeepAlive(feed)
		})
	}
}
