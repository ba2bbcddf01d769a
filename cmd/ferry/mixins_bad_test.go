package main_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

func mxYAML(feed string, mixins ...string) string {
	s := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmixins:\n"
	for _, m := range mixins {
		name, version, _ := strings.Cut(m, "@")
		s += "  - name: " + name + "\n    feed: " + feed + "\n"
		if version != "" {
			s += "    version: \"" + version + "\"\n"
		}
	}
	return s
}

// TestMixinsBadInput feeds bad input to ferry lock and ferry mirror: each
// fails with a clear error and the right exit code, and leaves the lock as
// it was (absent, or byte-identical).
func TestMixinsBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mixins  []string
		prelock bool // lock successfully first, then break the feed
		break_  func(fs *mixintest.FeedServer)
		args    func(mirror string) []string
		code    int
		want    []string
	}{
		{
			name:   "malformed feed",
			mixins: []string{"exec@1.x"},
			break_: func(fs *mixintest.FeedServer) { fs.Malformed(true) },
			code:   1,
			want:   []string{"mixin exec", "not an Atom feed"},
		},
		{
			name:   "no matching version",
			mixins: []string{"exec@2.x"},
			code:   1,
			want:   []string{`mixin exec: no version satisfies "2.x"`, "versions: v1.0.0 v1.2.3 v1.3.0-beta.1"},
		},
		{
			name:   "mixin not in the feed",
			mixins: []string{"nope"},
			code:   1,
			want:   []string{"mixin nope: not in feed", "mixins: exec helm3"},
		},
		{
			name:   "invalid constraint",
			mixins: []string{"exec@>>1"},
			code:   2,
			want:   []string{`invalid version constraint ">>1"`},
		},
		{
			name:   "404 on one binary",
			mixins: []string{"exec@1.x", "helm3"},
			break_: func(fs *mixintest.FeedServer) { fs.NotFound("v1.2.3", "helm3-linux-arm64") },
			code:   1,
			want:   []string{"helm3-linux-arm64", "404"},
		},
		{
			name:    "relock: digest differs from the lock",
			mixins:  []string{"exec@1.x"},
			prelock: true,
			break_:  func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-darwin-amd64", 0) },
			code:    3,
			want:    []string{"exec-darwin-amd64", "does not match ferry.lock"},
		},
		{
			name:    "relock --update: size differs from the lock",
			mixins:  []string{"exec@1.x"},
			prelock: true,
			break_:  func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-windows-amd64.exe", 5) },
			args:    func(string) []string { return []string{"lock", "--update"} },
			code:    3,
			want:    []string{"exec-windows-amd64.exe", "does not match ferry.lock"},
		},
		{
			name:    "mirror --lock: download differs from the lock",
			mixins:  []string{"exec@1.x"},
			prelock: true,
			break_:  func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-linux-arm64", 0) },
			args:    func(to string) []string { return []string{"mirror", "--lock", "ferry.lock", "--to", to} },
			code:    3,
			want:    []string{"exec-linux-arm64", "does not match ferry.lock"},
		},
		{
			name:    "mirror from ferry.yaml: download differs from the lock",
			mixins:  []string{"exec@1.x"},
			prelock: true,
			break_:  func(fs *mixintest.FeedServer) { fs.Swap("v1.2.3", "exec-linux-amd64", 0) },
			args:    func(to string) []string { return []string{"mirror", "--to", to} },
			code:    3,
			want:    []string{"exec-linux-amd64", "does not match ferry.lock"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := mixintest.NewFeed(t)
			mirror := registrytest.New(t)
			env := mxEnv(t, fs)
			env.WriteFile("ferry.yaml", mxYAML(fs.URL, tt.mixins...))
			before := ""
			if tt.prelock {
				env.MustRun("lock")
				before = env.ReadFile("ferry.lock")
			}
			if tt.break_ != nil {
				tt.break_(fs)
			}
			args := []string{"lock"}
			if tt.args != nil {
				args = tt.args(mirror.Host + "/mirror")
			}
			mirror.Reset()
			env.Expect(tt.code, args, tt.want...)
			if tt.prelock {
				if env.ReadFile("ferry.lock") != before {
					t.Errorf("the lock changed")
				}
			} else if _, err := os.Stat(env.Path("ferry.lock")); !os.IsNotExist(err) {
				t.Errorf("a lock was written: %v", err)
			}
			for _, r := range mirror.Requests() {
				if r.Method == "PUT" || r.Method == "POST" {
					t.Errorf("the mirror was written to: %s %s", r.Method, r.Path)
				}
			}
			if got := mxDirEntries(t, env.Dir); !slices.Equal(got, []string{".docker", "ferry.yaml"}) && !slices.Equal(got, []string{".docker", "ferry.lock", "ferry.yaml"}) {
				t.Errorf("the working directory holds %q", got)
			}
		})
	}
}

// TestMixinsKeepLockedVersions: a later ferry lock keeps a locked version
// while it satisfies the constraint; --update moves it.
func TestMixinsKeepLockedVersions(t *testing.T) {
	t.Parallel()
	fs := mixintest.NewFeed(t)
	env := mxEnv(t, fs)
	steps := []struct {
		mixins []string
		args   []string
		want   string
	}{
		{[]string{"exec@v1.0.0"}, []string{"lock"}, "exec@v1.0.0[v1.0.0]"},
		{[]string{"exec@1.x"}, []string{"lock"}, "exec@v1.0.0[1.x]"},                            // kept: v1.0.0 satisfies 1.x (--update NAME the lock lacks: exit 2, TestCLIStrictBadInput)
		{[]string{"exec@1.x"}, []string{"lock", "--update=exec"}, "exec@v1.2.3[1.x]"},           // moved
		{[]string{"exec@~1.0"}, []string{"lock"}, "exec@v1.0.0[~1.0]"},                          // v1.2.3 no longer satisfies
		{[]string{"exec"}, []string{"lock", "--update"}, "exec@v1.2.3[latest]"},                 // latest skips the prerelease
		{[]string{"exec@>=1.3.0-0"}, []string{"lock"}, "exec@v1.3.0-beta.1[>=1.3.0-0]"},         // a constraint naming a prerelease
		{[]string{"exec@v1.3.0-beta.1"}, []string{"lock"}, "exec@v1.3.0-beta.1[v1.3.0-beta.1]"}, // exact
	}
	for i, st := range steps {
		env.WriteFile("ferry.yaml", mxYAML(fs.URL, st.mixins...))
		env.MustRun(st.args...)
		l := mxReadLock(t, env, "ferry.lock")
		var got []string
		for _, e := range mxEntries(t, l) {
			got = append(got, e[:strings.Index(e, "]")+1])
		}
		if len(got) != 1 || got[0] != st.want {
			t.Errorf("step %d (%v %v): locked %q, want %s", i, st.mixins, st.args, got, st.want)
		}
		mxCheckBinaries(t, fs, l)
	}
}

// TestMixinsFromPorterYAML: `ferry lock porter.yaml` takes the mixins and
// the required bundles of a porter.yaml as roots, and the mixins of those
// bundles too.
func TestMixinsFromPorterYAML(t *testing.T) {
	t.Parallel()
	fs := mixintest.NewFeed(t)
	_, cat := mxSeed(t)
	env := mxEnv(t, fs)
	env.WriteFile("porter.yaml", `schemaVersion: 1.0.1
name: app
version: 0.1.0
registry: example.com/acme
mixins:
  - exec@1.x
  - helm3:
      clientVersion: v3.8.0
dependencies:
  requires:
    - name: tool
      bundle:
        reference: `+cat.Mixins+`
install:
  - exec:
      command: ./install.sh
`)
	env.MustRun("lock", "porter.yaml", "--lock", "app.lock")
	l := mxReadLock(t, env, "app.lock")
	var got []string
	for _, e := range mxEntries(t, l) {
		got = append(got, e[:strings.Index(e, "]")+1])
	}
	if want := []string{"exec@v1.2.3[1.x, v1.2.3]", "helm3@v1.2.3[latest]"}; !slices.Equal(got, want) {
		t.Errorf("locked mixins %q, want %q", got, want)
	}
	mxCheckBinaries(t, fs, l)
	tool := strings.TrimSuffix(cat.Mixins, ":v1.0.0")
	if l.Package(tool) == nil {
		t.Errorf("the required bundle %s is not locked: %+v", tool, l.Packages)
	}
}

// TestMixinsMirrorProblems: verify lists mixin problems in the mirror
// (exit 3), and install --porter-home refuses an artifact missing one
// binary, writing nothing.
func TestMixinsMirrorProblems(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fs := mixintest.NewFeed(t)
	mirror := registrytest.New(t)
	env := mxEnv(t, fs)
	env.WriteFile("ferry.yaml", mxYAML(fs.URL, "exec@1.x"))
	to := mirror.Host + "/mirror"
	env.MustRun("mirror", "--to", to)
	l := mxReadLock(t, env, "ferry.lock")
	m := mxMixins(t, l)[0]
	clientKey := mixin.BinaryName("exec", runtime.GOOS, runtime.GOARCH)

	// An artifact in another mirror that lacks the host's client binary,
	// and a lock that does not record where it was mirrored.
	other := registrytest.New(t)
	partial := m
	partial.Binaries = map[string]mixin.Binary{}
	for k, b := range m.Binaries {
		if k != clientKey {
			partial.Binaries[k] = b
		}
	}
	dir := t.TempDir()
	for k := range partial.Binaries {
		if err := os.WriteFile(filepath.Join(dir, k), mixintest.Content(m.Version, k), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repo, err := mxClient(t).Repository(other.Host + "/x/porter-mixins/exec")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mixin.Push(ctx, repo, &partial, dir, client.RetryPolicy{}); err != nil {
		t.Fatal(err)
	}
	unmirrored := *l
	unmirrored.Sections = nil
	m.Mirror = ""
	if err := mixin.SetLock(&unmirrored, []mixin.Locked{m}); err != nil {
		t.Fatal(err)
	}
	m = mxMixins(t, l)[0]
	if err := unmirrored.Write(env.Path("unmirrored.lock")); err != nil {
		t.Fatal(err)
	}

	fs.Close() // everything below reads the mirrors only
	env.Expect(3, []string{"verify", "--lock", "unmirrored.lock", "--mirror", other.Host + "/x"},
		"mixin exec v1.2.3: missing", "binary "+clientKey+" is in the lock but not in the mirror artifact")
	env.Expect(3, []string{"install", "--lock", "unmirrored.lock", "--mirror", other.Host + "/x", "--porter-home", "home"},
		clientKey, "not in the mirror artifact")
	env.Expect(3, []string{"install", "--lock", "unmirrored.lock", "--mirror", other.Host + "/x", "--porter-home", "home2", "--dest", "inst"},
		clientKey, "not in the mirror artifact")
	env.Expect(2, []string{"install", "--lock", "unmirrored.lock", "--porter-home", "home3"}, "has no mirror in the lock")
	env.Expect(3, []string{"verify", "--lock", "unmirrored.lock"}, "mixin exec v1.2.3: not-mirrored")
	for _, d := range []string{"home", "home2", "home3", "inst"} {
		if _, err := os.Stat(env.Path(d)); !os.IsNotExist(err) {
			t.Errorf("%s was written: %v", d, err)
		}
	}
	if got := mxDirEntries(t, env.Dir); !slices.Equal(got, []string{".docker", "ferry.lock", "ferry.yaml", "unmirrored.lock"}) {
		t.Errorf("the working directory holds %q", got)
	}

	// A binary missing from the mirror's storage.
	env.MustRun("verify", "--deep")
	_, hex, _ := strings.Cut(m.Binaries["exec-linux-arm64"].Digest, ":")
	link := filepath.Join(mirror.Root, "docker", "registry", "v2", "repositories", "mirror", "porter-mixins", "exec", "_layers", "sha256", hex)
	if err := os.RemoveAll(link); err != nil {
		t.Fatal(err)
	}
	env.Expect(3, []string{"verify"}, "mixin exec v1.2.3: missing", "binary exec-linux-arm64 is not in the mirror")
	env.Expect(3, []string{"verify", "-o", "json"}, `"package": "mixin exec v1.2.3"`)
}

// TestMixinsOfBundlesOnRequest: a bundle's recorded mixins are locked only
// when asked (ferry.yaml names them, bundleMixins: true, or
// --bundle-mixins); otherwise no feed is contacted.
func TestMixinsOfBundlesOnRequest(t *testing.T) {
	t.Parallel()
	fs := mixintest.NewFeed(t)
	_, cat := mxSeed(t)
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return "http://" + ln.Addr().String() + "/mixins/atom.xml"
	}()
	root := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: " + cat.Mixins + "\n"
	tests := []struct {
		name  string
		yaml  string
		feed  string
		flags []string
		want  []string
	}{
		{name: "not asked: the feed is never contacted", yaml: root, feed: refused},
		{name: "--bundle-mixins", yaml: root, feed: fs.URL, flags: []string{"--bundle-mixins"}, want: []string{"exec@v1.2.3[v1.2.3]", "helm3@v1.2.3[latest]"}},
		{name: "bundleMixins: true", yaml: root + "bundleMixins: true\n", feed: fs.URL, want: []string{"exec@v1.2.3[v1.2.3]", "helm3@v1.2.3[latest]"}},
		{name: "named in ferry.yaml", yaml: root + "mixins:\n  - name: exec\n    version: v1.0.0\n    feed: " + fs.URL + "\n", feed: refused, want: []string{"exec@v1.0.0[v1.0.0]", "exec@v1.2.3[v1.2.3]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := mxEnv(t, fs)
			env.Vars = append(env.Vars, mixin.FeedEnv+"="+tt.feed)
			env.WriteFile("ferry.yaml", tt.yaml)
			env.MustRun(append([]string{"lock"}, tt.flags...)...)
			var got []string
			for _, e := range mxEntries(t, mxReadLock(t, env, "ferry.lock")) {
				got = append(got, e[:strings.Index(e, "]")+1])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("locked %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMixinsPorterLock: `ferry lock porter.yaml --porter-lock` also writes
// Porter's porter.lock.yaml beside porter.yaml, with the mixins the
// porter.yaml declares (not those of the bundles it requires).
func TestMixinsPorterLock(t *testing.T) {
	t.Parallel()
	fs := mixintest.NewFeed(t)
	_, cat := mxSeed(t)
	env := mxEnv(t, fs)
	env.WriteFile("app/porter.yaml", `schemaVersion: 1.0.1
name: app
version: 0.1.0
registry: example.com/acme
mixins:
  - exec:
      mixin:
        version: v1.0.0
        source: `+fs.URL+`
  - helm3
dependencies:
  requires:
    - name: tool
      bundle:
        reference: `+cat.Mixins+`
`)
	env.MustRun("lock", "app/porter.yaml", "--porter-lock", "--lock", "app.lock")
	var pl PorterLockFile
	if err := yaml.Unmarshal([]byte(env.ReadFile("app/porter.lock.yaml")), &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Mixins) != 2 || pl.Mixins["exec"].Version != "v1.0.0" || pl.Mixins["helm3"].Version != "v1.2.3" {
		t.Fatalf("porter.lock.yaml mixins %+v", pl.Mixins)
	}
	for name, m := range pl.Mixins {
		if m.Source != fs.URL || m.URL != fs.Base+"/mixins/" || len(m.Binaries) == 0 {
			t.Errorf("%s: %+v", name, m)
		}
		for k, b := range m.Binaries {
			if b.Digest != mxDigest(mixintest.Content(m.Version, k)) {
				t.Errorf("%s %s: %s is %s", name, m.Version, k, b.Digest)
			}
		}
	}
	env.WriteFile("ferry.yaml", mxYAML(fs.URL, "exec"))
	env.Expect(2, []string{"lock", "--porter-lock"}, "--porter-lock needs a porter.yaml")
	if _, err := os.Stat(env.Path("ferry.lock")); !os.IsNotExist(err) {
		t.Errorf("a lock was written: %v", err)
	}
}

// PorterLockFile is porter.lock.yaml as the Mixin Versioning proposal
// writes it, read without ferry's types.
type PorterLockFile struct {
	Mixins map[string]struct {
		Source   string `yaml:"source"`
		URL      string `yaml:"url"`
		Version  string `yaml:"version"`
		Binaries map[string]struct {
			Digest string `yaml:"digest"`
		} `yaml:"binaries"`
	} `yaml:"mixins"`
}

// TestMixinsPorterLockRead: a porter.lock.yaml beside the porter.yaml
// ROOT is read (getporter/proposals pep/002-mixin-versioning.md, "Porter
// Lockfile": Porter installs what it locks): its versions are kept over
// the feed's latest, and a binary whose download differs from its digest
// exits 3 naming the file, the bundle and both digests, leaving
// porter.lock.yaml as it was.
func TestMixinsPorterLockRead(t *testing.T) {
	t.Parallel()
	fs := mixintest.NewFeed(t)
	env := mxEnv(t, fs)
	env.WriteFile("app/porter.yaml", "schemaVersion: 1.0.1\nname: app\nversion: 0.1.0\nmixins:\n  - exec\n  - helm3\n")
	env.MustRun("lock", "app/porter.yaml", "--porter-lock", "--lock", "a.lock")
	var pl PorterLockFile
	if err := yaml.Unmarshal([]byte(env.ReadFile("app/porter.lock.yaml")), &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Mixins["helm3"].Version != "v1.2.3" {
		t.Fatalf("porter.lock.yaml: helm3 %+v, want the latest, v1.2.3", pl.Mixins["helm3"])
	}

	// Reused: helm3 pinned at v1.0.0 by porter.lock.yaml stays there.
	h := pl.Mixins["helm3"]
	h.Version = "v1.0.0"
	for k := range h.Binaries {
		b := h.Binaries[k]
		b.Digest = mxDigest(mixintest.Content("v1.0.0", k))
		h.Binaries[k] = b
	}
	pl.Mixins["helm3"] = h
	data, err := yaml.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("app/porter.lock.yaml", string(data))
	env.MustRun("lock", "app/porter.yaml", "--lock", "b.lock")
	got := strings.Join(mxEntries(t, mxReadLock(t, env, "b.lock")), " ")
	if !strings.Contains(got, "helm3@v1.0.0[") || strings.Contains(got, "helm3@v1.2.3") {
		t.Errorf("lock with porter.lock.yaml pinning helm3 v1.0.0: %s", got)
	}
	// --update picks again.
	env.MustRun("lock", "app/porter.yaml", "--lock", "c.lock", "--update")
	if got := strings.Join(mxEntries(t, mxReadLock(t, env, "c.lock")), " "); !strings.Contains(got, "helm3@v1.2.3[") {
		t.Errorf("lock --update: %s", got)
	}

	// Enforced: a digest that is not the download's is exit 3.
	e := pl.Mixins["exec"]
	file := mixintest.FileName("exec", "linux/amd64")
	right := e.Binaries[file].Digest
	wrong := mxDigest([]byte("tampered"))
	b := e.Binaries[file]
	b.Digest = wrong
	e.Binaries[file] = b
	pl.Mixins["exec"] = e
	if data, err = yaml.Marshal(pl); err != nil {
		t.Fatal(err)
	}
	tampered := env.WriteFile("app/porter.lock.yaml", string(data))
	before, _ := os.ReadFile(tampered)
	env.Expect(3, []string{"lock", "app/porter.yaml", "--porter-lock", "--lock", "d.lock"}, "bundle app", file, wrong, right, "porter.lock.yaml")
	if after, _ := os.ReadFile(tampered); string(after) != string(before) {
		t.Errorf("porter.lock.yaml was rewritten after a digest mismatch")
	}
	if _, err := os.Stat(env.Path("d.lock")); !os.IsNotExist(err) {
		t.Errorf("a lock was written after a digest mismatch: %v", err)
	}
}
