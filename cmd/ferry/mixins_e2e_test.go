package main_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/file"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

func mxDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func mxClient(t *testing.T) *client.Client {
	t.Helper()
	c := registrytest.Client(t)
	return c
}

// mxEnv is a clitest.Env whose default mixin feed is fs.
func mxEnv(t *testing.T, fs *mixintest.FeedServer) *clitest.Env {
	t.Helper()
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+fs.URL, "XDG_CACHE_HOME="+filepath.Join(t.TempDir(), "cache"))
	return env
}

func mxReadLock(t *testing.T, env *clitest.Env, name string) *lock.Lock {
	t.Helper()
	l, err := lock.Read(env.Path(name))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// mxMixins returns the mixins l locks (its `mixins` section).
func mxMixins(t *testing.T, l *lock.Lock) []mixin.Locked {
	t.Helper()
	ms, err := mixin.FromLock(l)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// mxEntries lists the locked mixins as NAME@VERSION[CONSTRAINT]:BINARIES.
func mxEntries(t *testing.T, l *lock.Lock) []string {
	t.Helper()
	var out []string
	for _, m := range mxMixins(t, l) {
		out = append(out, m.Name+"@"+m.Version+"["+m.Constraint+"]:"+strings.Join(m.Keys(), ","))
	}
	return out
}

// mxCheckBinaries checks every locked binary against the bytes the feed
// publishes.
func mxCheckBinaries(t *testing.T, fs *mixintest.FeedServer, l *lock.Lock) {
	t.Helper()
	for _, m := range mxMixins(t, l) {
		if m.Feed != fs.URL {
			t.Errorf("mixin %s %s: feed %q, want %q", m.Name, m.Version, m.Feed, fs.URL)
		}
		for _, k := range m.Keys() {
			b := m.Binaries[k]
			orig := mixintest.Content(m.Version, k)
			if b.Digest != mxDigest(orig) || b.Size != int64(len(orig)) || b.URL != fs.FileURL(m.Version, k) {
				t.Errorf("mixin %s %s: %s locked %+v, the feed has %s (%d bytes)", m.Name, m.Version, k, b, mxDigest(orig), len(orig))
			}
		}
	}
}

// mxDirEntries lists a directory's names, recursively, relative to it.
func mxDirEntries(t *testing.T, dir string) []string {
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

func mxSeed(t *testing.T) (*registrytest.Registry, *fixture.Catalog) {
	t.Helper()
	reg := registrytest.New(t)
	cat, err := fixture.Seed(context.Background(), mxClient(t), reg.Host)
	if err != nil {
		t.Fatal(err)
	}
	return reg, cat
}

// TestMixinsEndToEnd runs the whole mixin pipeline through the real
// binary: ferry.yaml mixins and a bundle's mixins are locked (acceptance
// 1-2), mirrored as OCI artifacts that oras pulls back byte for byte (3),
// verified (3), installed into PORTER_HOME with the feed offline (4), and
// served to Porter's mirror protocol by `ferry serve` (5).
func TestMixinsEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	_, cat := mxSeed(t)
	mirror := registrytest.New(t)
	env := mxEnv(t, fs)
	host := runtime.GOOS + "/" + runtime.GOARCH
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+cat.Mixins+`
mixins:
  - name: exec
    version: 1.x
    feed: `+fs.URL+`
  - name: helm3
    version: v1.0.0
platforms: [darwin/arm64, `+host+`]
`)
	r := env.MustRun("lock")
	// The bundle's helm3 has no version: latest, with a warning.
	if !strings.Contains(r.Stderr, `mixin "helm3"`) || !strings.Contains(r.Stderr, "latest") {
		t.Errorf("no warning for the bundle's versionless helm3:\n%s", r.Stderr)
	}
	l := mxReadLock(t, env, "ferry.lock")
	want := func(name string) string {
		keys := []string{name + "-darwin-arm64", name + "-linux-amd64", mixin.BinaryName(name, runtime.GOOS, runtime.GOARCH)}
		slices.Sort(keys)
		return strings.Join(slices.Compact(keys), ",")
	}
	if got, w := mxEntries(t, l), []string{
		"exec@v1.2.3[1.x, v1.2.3]:" + want("exec"), // ferry.yaml 1.x and the bundle's exact v1.2.3 agree
		"helm3@v1.0.0[v1.0.0]:" + want("helm3"),    // ferry.yaml
		"helm3@v1.2.3[latest]:" + want("helm3"),    // the bundle's versionless helm3: latest
	}; !slices.Equal(got, w) {
		t.Fatalf("locked mixins\n%q\nwant\n%q", got, w)
	}
	mxCheckBinaries(t, fs, l)
	if got := mxDirEntries(t, env.Dir); !slices.Equal(got, []string{".docker", "ferry.lock", "ferry.yaml"}) {
		t.Errorf("the working directory holds %q: downloads must not land there", got)
	}
	before := env.ReadFile("ferry.lock")
	env.MustRun("lock")
	if env.ReadFile("ferry.lock") != before {
		t.Errorf("a second ferry lock changed the lock")
	}

	// Mirror: one artifact per mixin version, digests in the lock.
	to := mirror.Host + "/mirror"
	env.MustRun("mirror", "--to", to)
	l = mxReadLock(t, env, "ferry.lock")
	c := mxClient(t)
	for _, m := range mxMixins(t, l) {
		repoName := to + "/porter-mixins/" + m.Name
		if !strings.HasPrefix(m.Mirror, repoName+"@sha256:") {
			t.Errorf("mixin %s %s: mirror %q, want %s@sha256:…", m.Name, m.Version, m.Mirror, repoName)
		}
		// `oras pull` gives back the feed's bytes.
		repo, err := c.Repository(repoName)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		store, err := file.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := oras.Copy(ctx, repo, m.Version, store, m.Version, oras.DefaultCopyOptions); err != nil {
			t.Fatal(err)
		}
		store.Close()
		for _, k := range m.Keys() {
			got, err := os.ReadFile(filepath.Join(dir, k))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, mixintest.Content(m.Version, k)) {
				t.Errorf("oras pull %s:%s: %s differs from the feed's bytes", repoName, m.Version, k)
			}
		}
	}
	env.MustRun("verify")
	env.MustRun("verify", "--deep")
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", to) // from the lock alone, again

	// Install with the feed offline.
	fs.Close()
	env.MustRun("install", "--porter-home", "home")
	env.MustRun("install", "--porter-home", "home") // over an earlier install
	env.MustRun("install", "--dest", "inst", "--porter-home", "home2")
	if _, err := os.Stat(env.Path("inst/plan.json")); err != nil {
		t.Errorf("--dest with --porter-home: %v", err)
	}
	clientFile := "exec"
	if runtime.GOOS == "windows" {
		clientFile += ".exe"
	}
	locked := mxMixins(t, l)
	exec123 := locked[0]
	helm123 := locked[2]
	// The versioned cache of Porter's Mixin Versioning proposal:
	// mixins/SOURCE/NAME/VERSION, SOURCE the binaries' base URL.
	cache := "mixins/" + strings.ReplaceAll(strings.TrimPrefix(fs.Base, "http://"), ":", "_") + "/mixins/"
	for _, home := range []string{"home", "home2"} {
		for rel, wantDigest := range map[string]string{
			"mixins/exec/" + clientFile:                       exec123.Binaries[mixin.BinaryName("exec", runtime.GOOS, runtime.GOARCH)].Digest,
			"mixins/exec/runtimes/exec-runtime":               exec123.Binaries["exec-linux-amd64"].Digest,
			"mixins/helm3/runtimes/helm3-runtime":             helm123.Binaries["helm3-linux-amd64"].Digest, // the highest locked helm3
			cache + "exec/v1.2.3/" + clientFile:               exec123.Binaries[mixin.BinaryName("exec", runtime.GOOS, runtime.GOARCH)].Digest,
			cache + "exec/v1.2.3/runtimes/exec-linux-amd64":   exec123.Binaries["exec-linux-amd64"].Digest,
			cache + "helm3/v1.0.0/runtimes/helm3-linux-amd64": locked[1].Binaries["helm3-linux-amd64"].Digest, // every locked version
			cache + "helm3/v1.2.3/runtimes/helm3-linux-amd64": helm123.Binaries["helm3-linux-amd64"].Digest,
		} {
			p := filepath.Join(env.Path(home), filepath.FromSlash(rel))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if got := mxDigest(b); got != wantDigest {
				t.Errorf("%s/%s is %s, want %s", home, rel, got, wantDigest)
			}
			if st, _ := os.Stat(p); runtime.GOOS != "windows" && st.Mode().Perm() != 0o755 {
				t.Errorf("%s/%s mode %v", home, rel, st.Mode())
			}
		}
		// 9 of the flat layout, 16 of the cache (SOURCE, 2 directories,
		// then exec/, helm3/ and 3 versions of VERSION/{CLIENT,runtimes/RUNTIME}).
		if got := mxDirEntries(t, env.Path(home)); len(got) != 25 {
			t.Errorf("%s holds %q, want mixins/{exec,helm3}/{CLIENT,runtimes/RUNTIME} and the versioned cache", home, got)
		}
	}

	// Serve Porter's mirror protocol from the mirror's storage, under any
	// prefix, through the real binary.
	mirror.Stop()
	addr, _ := clitest.Serve(t, mirror.Root)
	for _, tt := range []struct {
		name, version string
		entry         mixin.Locked
	}{
		{"exec", "v1.2.3", exec123},
		{"helm3", "v1.0.0", locked[1]},
		{"helm3", "latest", helm123},
	} {
		t.Run("porter mixins install "+tt.name+" --version "+tt.version, func(t *testing.T) {
			clientBytes, runtimeBytes := mxPorterMixinsInstall(t, "http://"+addr, tt.name, tt.version, runtime.GOOS, runtime.GOARCH)
			if got, w := mxDigest(clientBytes), tt.entry.Binaries[mixin.BinaryName(tt.name, runtime.GOOS, runtime.GOARCH)].Digest; got != w {
				t.Errorf("client %s, locked %s", got, w)
			}
			if got, w := mxDigest(runtimeBytes), tt.entry.Binaries[tt.name+"-linux-amd64"].Digest; got != w {
				t.Errorf("runtime %s, locked %s", got, w)
			}
		})
	}
}

// mxPorterMixinsInstall does what `porter mixins install NAME --version
// VERSION --mirror MIRROR` does on goos/goarch (getporter/porter
// pkg/pkgmgmt: InstallOptions.defaultFeedURL, MixinFeed.Load and Search,
// MixinFileset.FindDownloadURL), without ferry's own feed parser: fetch
// path.Join(MIRROR, "mixins", "atom.xml"); index entries by their first
// <category term> and <content>; take VERSION exactly, or for "latest" the
// highest semver that is not a prerelease; use the rel="download" hrefs
// verbatim (Porter resolves nothing against the feed, so they must be
// absolute) and download the first whose path contains NAME-OS-ARCH
// (darwin/arm64 falling back to darwin/amd64), then NAME-linux-amd64.
func mxPorterMixinsInstall(t *testing.T, mirror, name, version, goos, goarch string) (clientBytes, runtimeBytes []byte) {
	t.Helper()
	mu, err := url.Parse(mirror)
	if err != nil {
		t.Fatal(err)
	}
	mu.Path = path.Join(mu.Path, "mixins", "atom.xml")
	feedURL := mu.String()
	body := mxGet(t, feedURL)
	var doc struct {
		Entries []struct {
			Categories []struct {
				Term string `xml:"term,attr"`
			} `xml:"category"`
			Content string `xml:"content"`
			Links   []struct {
				Rel  string `xml:"rel,attr"`
				Href string `xml:"href,attr"`
			} `xml:"link"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal(body, &doc); err != nil {
		t.Fatalf("porter could not parse %s: %v", feedURL, err)
	}
	versions := map[string][]string{}
	for _, e := range doc.Entries {
		if len(e.Categories) == 0 || e.Categories[0].Term != name || e.Content == "" {
			continue
		}
		var hrefs []string
		for _, l := range e.Links {
			if l.Rel == "download" {
				hrefs = append(hrefs, l.Href)
			}
		}
		versions[e.Content] = hrefs
	}
	hrefs, ok := versions[version]
	if !ok && version == "latest" {
		var best *semver.Version
		for v := range versions {
			sv, err := semver.NewVersion(v)
			if err == nil && sv.Prerelease() == "" && (best == nil || sv.GreaterThan(best)) {
				best = sv
			}
		}
		if best != nil {
			hrefs, ok = versions[best.Original()], true
		}
	}
	if !ok {
		t.Fatalf("the feed at %s does not contain an entry for %s @ %s:\n%s", feedURL, name, version, body)
	}
	var find func(os, arch string) string
	find = func(os, arch string) string {
		for _, h := range hrefs {
			u, err := url.Parse(h)
			if err == nil && strings.Contains(u.Path, name+"-"+os+"-"+arch) {
				if !u.IsAbs() {
					t.Fatalf("download link %q is relative: porter requests it as is and fails", h)
				}
				return h
			}
		}
		if os == "darwin" && arch == "arm64" {
			return find("darwin", "amd64")
		}
		t.Fatalf("%s @ %s did not publish a download for %s/%s", name, version, os, arch)
		return ""
	}
	return mxGet(t, find(goos, goarch)), mxGet(t, find("linux", "amd64"))
}

func mxGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", u, resp.Status, b)
	}
	return b
}
