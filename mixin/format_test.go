package mixin

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/resolve"
)

// newRun returns a run with its own download directory.
func newRun(t *testing.T) *ferry.Run {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "downloads")
	return &ferry.Run{
		Client:      registrytest.Client(t),
		Concurrency: 4,
		Downloads: func() (string, error) {
			return dir, os.MkdirAll(dir, 0o755)
		},
		Warn: func(msg string) { t.Log("warning: " + msg) },
	}
}

// inputs builds a ferry.yaml with the mixin format's sections.
func inputs(t *testing.T, sections map[string]any) *mirrorset.MirrorSet {
	t.Helper()
	m := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind}
	for k, v := range sections {
		if err := m.SetSection(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// bundleGraph is a resolved graph of one bundle recording mixins.
func bundleGraph(mixins ...format.Mixin) *resolve.Graph {
	const src = "registry.example/acme/app"
	return &resolve.Graph{
		Roots: []string{src},
		Packages: map[string]*resolve.Package{src: {
			ID: src, Source: src, Version: "v1.0.0", Kind: format.KindPorterBundle,
			Meta: &format.Metadata{Kind: format.KindPorterBundle, Mixins: mixins},
		}},
	}
}

// refusedURL returns an http URL on a loopback port nothing listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mixins/atom.xml"
}

func TestCheckSections(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string // "" for no error
	}{
		{name: "valid", yaml: "mixins: [{name: exec, version: 1.x, feed: https://cdn.porter.sh/mixins/atom.xml}]\nplatforms: [linux/amd64]\nbundleMixins: true\n"},
		{name: "path in name", yaml: "mixins: [{name: ../exec}]\n", want: "invalid name"},
		{name: "empty name", yaml: "mixins: [{version: v1}]\n", want: "invalid name"},
		{name: "unknown entry key", yaml: "mixins: [{name: exec, vesion: v1}]\n", want: `unknown key "vesion"`},
		{name: "two feeds", yaml: "mixins: [{name: exec, feed: https://a/atom.xml}, {name: exec, feed: https://b/atom.xml}]\n", want: "two feeds"},
		{name: "credentials in feed", yaml: "mixins: [{name: exec, feed: 'https://u:secret@a/atom.xml'}]\n", want: "credentials"},
		{name: "feed scheme", yaml: "mixins: [{name: exec, feed: 'ftp://a/atom.xml'}]\n", want: "unsupported scheme"},
		{name: "platform without arch", yaml: "platforms: [linux]\n", want: "not OS/ARCH"},
		{name: "platform with two slashes", yaml: "platforms: [linux/arm/v7]\n", want: "not OS/ARCH"},
		{name: "bundleMixins not a bool", yaml: "bundleMixins: sometimes\n", want: "bundleMixins"},
		{name: "mixins not a list", yaml: "mixins: exec\n", want: "mixins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m mirrorset.MirrorSet
			if err := yaml.Unmarshal([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+tt.yaml), &m); err != nil {
				t.Fatal(err)
			}
			err := Format{}.CheckSections(&m)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if exitcode.Of(err) != exitcode.Usage {
				t.Errorf("exit %d, want %d", exitcode.Of(err), exitcode.Usage)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the error echoes the password: %v", err)
			}
		})
	}
}

// TestLockBundleMixins: a bundle's recorded mixins are locked only when
// the user asks, from the bundle's url when it records one, and its
// recorded digests must match the downloads.
func TestLockBundleMixins(t *testing.T) {
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64", "darwin/arm64"}})
	other := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64", "darwin/arm64"}})
	refused := refusedURL(t)
	digest := func(v, f string) string { return digestOf(mixintest.Content(v, f)) }
	recorded := map[string]string{
		"exec-linux-amd64":  digest("v1.2.3", "exec-linux-amd64"),
		"exec-darwin-arm64": strings.TrimPrefix(digest("v1.2.3", "exec-darwin-arm64"), "sha256:"), // bare hex, as the proposal's examples
	}
	zero := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name     string
		sections map[string]any
		mixins   []format.Mixin
		want     []string // NAME@VERSION[CONSTRAINT] feed
		code     int      // exit code of the error; 0: none
		errWant  []string
		warn     string
	}{
		{
			name:   "not asked: no feed is contacted",
			mixins: []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: refused}, {Name: "helm3"}},
			warn:   "bundles record mixins exec, helm3, which are not locked",
		},
		{
			name:     "named in ferry.yaml",
			sections: map[string]any{KeyMixins: []Entry{{Name: "exec", Version: "1.x", Feed: fs.URL}}},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.0.0"}, {Name: "helm3", Version: "v1.0.0", URL: refused}},
			want:     []string{"exec@v1.0.0[v1.0.0] " + fs.URL, "exec@v1.2.3[1.x] " + fs.URL},
		},
		{
			name:     "bundleMixins: every bundle mixin, from its recorded feed",
			sections: map[string]any{KeyBundleMixins: true},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.URL}, {Name: "helm3", URL: fs.URL}},
			want:     []string{"exec@v1.2.3[v1.2.3] " + fs.URL, "helm3@v1.2.3[latest] " + fs.URL},
		},
		{
			name:     "recorded url is a download location",
			sections: map[string]any{KeyBundleMixins: true},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.Base + "/mixins/", Binaries: recorded}},
			want:     []string{"exec@v1.2.3[v1.2.3] " + fs.Base + "/mixins/"},
		},
		{
			name:     "the recorded url wins over the ferry.yaml entry's feed",
			sections: map[string]any{KeyMixins: []Entry{{Name: "exec", Version: "1.x", Feed: fs.URL}}},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.0.0", URL: other.URL}},
			want:     []string{"exec@v1.0.0[v1.0.0] " + other.URL, "exec@v1.2.3[1.x] " + fs.URL},
		},
		{
			name:     "the ferry.yaml entry and the recorded url pick one version: one entry",
			sections: map[string]any{KeyMixins: []Entry{{Name: "exec", Version: "1.x", Feed: fs.URL}}},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.Base + "/mixins/", Binaries: recorded}},
			want:     []string{"exec@v1.2.3[1.x, v1.2.3] " + fs.URL},
		},
		{
			name:     "named without a recorded url: the entry's feed",
			sections: map[string]any{KeyMixins: []Entry{{Name: "exec", Version: "v1.0.0", Feed: fs.URL}}},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", Binaries: recorded}},
			want:     []string{"exec@v1.0.0[v1.0.0] " + fs.URL, "exec@v1.2.3[v1.2.3] " + fs.URL},
		},
		{
			name:     "recorded digest differs",
			sections: map[string]any{KeyBundleMixins: true},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.URL, Binaries: map[string]string{"exec-linux-amd64": zero}}},
			code:     exitcode.Mismatch,
			errWant:  []string{"registry.example/acme/app:v1.0.0", "exec-linux-amd64", zero, digest("v1.2.3", "exec-linux-amd64")},
		},
		{
			name:     "recorded digest differs, download location",
			sections: map[string]any{KeyBundleMixins: true},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.Base + "/mixins/", Binaries: map[string]string{"exec-linux-amd64": zero, "exec-darwin-arm64": recorded["exec-darwin-arm64"]}}},
			code:     exitcode.Mismatch,
			errWant:  []string{"registry.example/acme/app:v1.0.0", "exec-linux-amd64", zero},
		},
		{
			name:     "recorded binary name of another mixin",
			sections: map[string]any{KeyBundleMixins: true},
			mixins:   []format.Mixin{{Name: "exec", Version: "v1.2.3", URL: fs.Base + "/mixins/", Binaries: map[string]string{"../../x-linux-amd64": zero}}},
			code:     exitcode.Failure,
			errWant:  []string{"registry.example/acme/app:v1.0.0", "recorded binary"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(FeedEnv, refused)
			in := inputs(t, tt.sections)
			// The test feed's platforms.
			if err := in.SetSection(KeyPlatforms, []string{"linux/amd64", "darwin/arm64"}); err != nil {
				t.Fatal(err)
			}
			l := &lock.Lock{}
			run := newRun(t)
			var warnings []string
			run.Warn = func(msg string) { warnings = append(warnings, msg) }
			err := Format{}.Lock(context.Background(), run, in, bundleGraph(tt.mixins...), l, nil)
			if tt.warn != "" && (len(warnings) != 1 || !strings.Contains(warnings[0], tt.warn)) {
				t.Errorf("warnings %q, want one with %q", warnings, tt.warn)
			}
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("no error; locked %+v", l.Sections)
				}
				if got := exitcode.Of(err); got != tt.code {
					t.Errorf("exit %d, want %d: %v", got, tt.code, err)
				}
				for _, w := range tt.errWant {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q: %v", w, err)
					}
				}
				if _, ok := l.Sections[KeyMixins]; ok {
					t.Errorf("a failed lock wrote its section")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			locked, err := FromLock(l)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range locked {
				got = append(got, m.Name+"@"+m.Version+"["+m.Constraint+"] "+m.Feed)
				for k, b := range m.Binaries {
					if b.Digest != digest(m.Version, k) {
						t.Errorf("%s %s: %s locked %s", m.Name, m.Version, k, b.Digest)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("locked %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLockKeepsAndUpdates: a version prev locks is kept while it
// satisfies its request, unless Update names the mixin; a malformed
// previous section is bad input.
func TestLockKeepsAndUpdates(t *testing.T) {
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	ctx := context.Background()
	lockWith := func(version string, prev *lock.Lock, update func(string) bool) (*lock.Lock, error) {
		run := newRun(t)
		run.Update = update
		l := &lock.Lock{}
		in := inputs(t, map[string]any{KeyMixins: []Entry{{Name: "exec", Version: version, Feed: fs.URL}}})
		return l, Format{}.Lock(ctx, run, in, nil, l, prev)
	}
	first, err := lockWith("v1.0.0", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bad := &lock.Lock{}
	if err := bad.SetSection(KeyMixins, []Locked{{Name: "exec", Version: "v1.0.0"}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, constraint string
		prev             *lock.Lock
		update           func(string) bool
		want             string
		code             int
	}{
		{name: "kept", constraint: "1.x", prev: first, want: "v1.0.0"},
		{name: "another name updated", constraint: "1.x", prev: first, update: func(n string) bool { return n == "helm3" }, want: "v1.0.0"},
		{name: "updated", constraint: "1.x", prev: first, update: func(n string) bool { return n == "exec" }, want: "v1.2.3"},
		{name: "no longer satisfies", constraint: ">=1.1.0 <2", prev: first, want: "v1.2.3"},
		{name: "malformed previous section", constraint: "1.x", prev: bad, code: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := lockWith(tt.constraint, tt.prev, tt.update)
			if tt.code != 0 {
				if exitcode.Of(err) != tt.code {
					t.Fatalf("error %v (exit %d), want exit %d", err, exitcode.Of(err), tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			locked, err := FromLock(l)
			if err != nil {
				t.Fatal(err)
			}
			if len(locked) != 1 || locked[0].Version != tt.want {
				t.Errorf("locked %+v, want exec %s", locked, tt.want)
			}
		})
	}
}

func TestFromLock(t *testing.T) {
	good := Locked{Name: "exec", Feed: "https://f/atom.xml", Version: "v1.2.3", Binaries: map[string]Binary{
		"exec-linux-amd64": {Digest: "sha256:" + strings.Repeat("a", 64), Size: 1, URL: "https://f/v1.2.3/exec-linux-amd64"},
	}}
	noBinaries := good
	noBinaries.Binaries = nil
	tests := []struct {
		name    string
		section any
		want    int
		errWant string
	}{
		{name: "none", want: 0},
		{name: "one", section: []Locked{good}, want: 1},
		{name: "locked twice", section: []Locked{good, good}, errWant: "locked twice"},
		{name: "no binaries", section: []Locked{noBinaries}, errWant: "no binaries"},
		{name: "not a list", section: map[string]string{"exec": "v1"}, errWant: "mixins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &lock.Lock{}
			if tt.section != nil {
				if err := l.SetSection(KeyMixins, tt.section); err != nil {
					t.Fatal(err)
				}
			}
			got, err := FromLock(l)
			if tt.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWant) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("error %v, want exit 2 with %q", err, tt.errWant)
				}
				// lock.Parse runs the same check.
				l.APIVersion, l.Kind = lock.APIVersion, lock.Kind
				data, merr := l.Marshal()
				if merr != nil {
					t.Fatal(merr)
				}
				if _, perr := lock.Parse(data); perr == nil {
					t.Errorf("lock.Parse accepted the malformed section")
				}
				return
			}
			if err != nil || len(got) != tt.want {
				t.Fatalf("got %d entries, %v; want %d", len(got), err, tt.want)
			}
		})
	}
}

func TestBaseURLAndSourceDir(t *testing.T) {
	bin := func(u string) Binary { return Binary{Digest: "sha256:" + strings.Repeat("a", 64), Size: 1, URL: u} }
	tests := []struct {
		name   string
		locked Locked
		base   string
		source string
	}{
		{
			name: "Porter's feed",
			locked: Locked{Name: "exec", Version: "v1.2.3", Feed: "https://cdn.porter.sh/mixins/atom.xml", Binaries: map[string]Binary{
				"exec-linux-amd64":  bin("https://cdn.porter.sh/mixins/v1.2.3/exec-linux-amd64"),
				"exec-darwin-amd64": bin("https://cdn.porter.sh/mixins/v1.2.3/exec-darwin-amd64"),
			}},
			base:   "https://cdn.porter.sh/mixins/",
			source: "cdn.porter.sh/mixins",
		},
		{
			name: "GitHub releases, port",
			locked: Locked{Name: "az", Version: "v1.0.0", Feed: "http://127.0.0.1:5000/feed.xml", Binaries: map[string]Binary{
				"az-linux-amd64": bin("http://127.0.0.1:5000/getporter/az-mixin/releases/download/v1.0.0/az-linux-amd64"),
			}},
			base:   "http://127.0.0.1:5000/getporter/az-mixin/releases/download/",
			source: "127.0.0.1_5000/getporter/az-mixin/releases/download",
		},
		{
			name: "no common layout: the feed's directory",
			locked: Locked{Name: "exec", Version: "v1.2.3", Feed: "https://feeds.example/porter/atom.xml", Binaries: map[string]Binary{
				"exec-linux-amd64":  bin("https://a.example/exec-linux-amd64"),
				"exec-darwin-amd64": bin("https://b.example/v1.2.3/exec-darwin-amd64"),
			}},
			base:   "https://feeds.example/porter/",
			source: "feeds.example/porter",
		},
		{
			name: "file feed",
			locked: Locked{Name: "exec", Version: "v1", Feed: "file:///srv/feed/atom.xml", Binaries: map[string]Binary{
				"exec-linux-amd64": bin("file:///srv/feed/v1/exec-linux-amd64"),
			}},
			base:   "file:///srv/feed/",
			source: "file/srv/feed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.locked.BaseURL(); got != tt.base {
				t.Errorf("BaseURL %q, want %q", got, tt.base)
			}
			src, err := SourceDir(&tt.locked)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(src, "/"); got != tt.source {
				t.Errorf("SourceDir %q, want %q", got, tt.source)
			}
		})
	}
}

func TestWritePorterLock(t *testing.T) {
	d := func(c string) string { return "sha256:" + strings.Repeat(c, 64) }
	exec := Locked{Name: "exec", Feed: "https://cdn.porter.sh/mixins/atom.xml", Constraint: "1.x", Version: "v1.2.3", Binaries: map[string]Binary{
		"exec-linux-amd64":  {Digest: d("b"), Size: 2, URL: "https://cdn.porter.sh/mixins/v1.2.3/exec-linux-amd64"},
		"exec-darwin-amd64": {Digest: d("a"), Size: 1, URL: "https://cdn.porter.sh/mixins/v1.2.3/exec-darwin-amd64"},
	}}
	exec100 := exec
	exec100.Version = "v1.0.0"
	tests := []struct {
		name   string
		locked []Locked
		want   string
		code   int
	}{
		{
			name:   "the proposal's shape",
			locked: []Locked{exec},
			want: `mixins:
    exec:
        source: https://cdn.porter.sh/mixins/atom.xml
        url: https://cdn.porter.sh/mixins/
        version: v1.2.3
        binaries:
            exec-darwin-amd64:
                digest: ` + d("a") + `
            exec-linux-amd64:
                digest: ` + d("b") + `
`,
		},
		{name: "two versions of one mixin", locked: []Locked{exec, exec100}, code: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, PorterLockFile)
			err := WritePorterLock(p, tt.locked)
			if tt.code != 0 {
				if exitcode.Of(err) != tt.code {
					t.Fatalf("error %v, want exit %d", err, tt.code)
				}
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was written", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("wrote\n%s\nwant\n%s", b, tt.want)
			}
			if names := entries(t, dir); !slices.Equal(names, []string{PorterLockFile}) {
				t.Errorf("the directory holds %q: a staged file was left", names)
			}
		})
	}
}

func TestRequested(t *testing.T) {
	mk := func(name, version, constraint, feed string) Locked {
		return Locked{Name: name, Version: version, Constraint: constraint, Feed: feed}
	}
	locked := []Locked{
		mk("exec", "v1.0.0", "v1.0.0", "https://a/atom.xml"), // a required bundle's
		mk("exec", "v1.2.3", "1.x, v1.2.3", "https://a/atom.xml"),
		mk("helm3", "v1.2.3", "latest", "https://a/atom.xml"),
		mk("az", "v2.0.0", ">= 2.0, < 3", "https://b/atom.xml"),
	}
	tests := []struct {
		name    string
		entries []Entry
		want    []string
		errWant string
	}{
		{name: "by constraint", entries: []Entry{{Name: "exec", Version: "1.x"}, {Name: "helm3"}}, want: []string{"exec@v1.2.3", "helm3@v1.2.3"}},
		{name: "exact", entries: []Entry{{Name: "exec", Version: "v1.0.0"}}, want: []string{"exec@v1.0.0"}},
		{name: "constraint with a comma", entries: []Entry{{Name: "az", Version: ">= 2.0, < 3", Feed: "https://b/atom.xml"}}, want: []string{"az@v2.0.0"}},
		{name: "other feed", entries: []Entry{{Name: "exec", Version: "1.x", Feed: "https://other/atom.xml"}}, errWant: "no version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Requested(inputs(t, map[string]any{KeyMixins: tt.entries}), locked)
			if tt.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errWant) {
					t.Fatalf("error %v, want %q", err, tt.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, m := range got {
				names = append(names, m.Name+"@"+m.Version)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("got %q, want %q", names, tt.want)
			}
		})
	}
}
