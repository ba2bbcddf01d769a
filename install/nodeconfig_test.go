package install_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/containers/image/v5/docker/reference"
	"github.com/containers/image/v5/pkg/sysregistriesv2"
	"github.com/containers/image/v5/types"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// ---- containerd: hosts.toml read the way containerd reads it ----

// containerdHostFile is containerd's hostFileConfig with the root fields of
// parseHostsFile (core/remotes/docker/config/hosts.go): every key ferry
// writes must be one containerd knows.
type containerdHostFile struct {
	Server       string                            `toml:"server"`
	Capabilities []string                          `toml:"capabilities"`
	OverridePath bool                              `toml:"override_path"`
	Host         map[string]containerdHostSettings `toml:"host"`
}

type containerdHostSettings struct {
	Capabilities []string       `toml:"capabilities"`
	CACert       any            `toml:"ca"`
	Client       any            `toml:"client"`
	SkipVerify   *bool          `toml:"skip_verify"`
	Header       map[string]any `toml:"header"`
	OverridePath bool           `toml:"override_path"`
	DialTimeout  string         `toml:"dial_timeout"`
}

// containerdEndpoint is one registry host containerd tries, in order.
type containerdEndpoint struct {
	scheme, host, path string
	capabilities       []string
	mirror             bool // a [host] entry, not the server
}

// containerdEndpoints returns the hosts containerd tries for a reference on
// srcHost, given certs.d root: the host directory as HostDirFromRoot finds
// it (config_unix.go hostPaths: HOST_PORT_, HOST:PORT, _default), the
// [host] tables in file order (getSortedHosts), then the server; each URL
// path made as parseHostConfig makes it ("/v2" appended unless the path
// ends with it or override_path is set).
func containerdEndpoints(t *testing.T, root, srcHost string) []containerdEndpoint {
	t.Helper()
	var dir string
	candidates := []string{srcHost, "_default"}
	if i := strings.LastIndex(srcHost, ":"); i > 0 {
		candidates = append([]string{srcHost[:i] + "_" + srcHost[i+1:] + "_"}, candidates...)
	}
	for _, c := range candidates {
		if _, err := os.Stat(filepath.Join(root, c)); err == nil {
			dir = filepath.Join(root, c)
			break
		}
	}
	if dir == "" {
		t.Fatalf("containerd finds no host directory for %s in %s", srcHost, root)
	}
	data, err := os.ReadFile(filepath.Join(dir, "hosts.toml"))
	if err != nil {
		t.Fatal(err)
	}
	var f containerdHostFile
	md, err := toml.Decode(string(data), &f)
	if err != nil {
		t.Fatalf("%s/hosts.toml: %v\n%s", dir, err, data)
	}
	if u := md.Undecoded(); len(u) > 0 {
		t.Errorf("%s/hosts.toml: keys containerd does not read: %v", dir, u)
	}
	var order []string
	for _, k := range md.Keys() {
		if len(k) == 2 && k[0] == "host" {
			order = append(order, k[1])
		}
	}
	parse := func(server string, s containerdHostSettings, mirror bool) containerdEndpoint {
		if !strings.HasPrefix(server, "http") {
			server = "https://" + server
		}
		u, err := url.Parse(server)
		if err != nil {
			t.Fatalf("%s/hosts.toml: %v", dir, err)
		}
		e := containerdEndpoint{scheme: u.Scheme, host: u.Host, capabilities: s.Capabilities, mirror: mirror}
		if u.Path != "" {
			e.path = path.Clean(u.Path)
			if !strings.HasSuffix(e.path, "/v2") && !s.OverridePath {
				e.path += "/v2"
			}
		} else if !s.OverridePath {
			e.path = "/v2"
		}
		for _, c := range s.Capabilities {
			if !slices.Contains([]string{"pull", "resolve", "push", "referrers"}, strings.ToLower(c)) {
				t.Errorf("%s/hosts.toml: unknown capability %q", dir, c)
			}
		}
		return e
	}
	var out []containerdEndpoint
	for _, h := range order {
		out = append(out, parse(h, f.Host[h], true))
	}
	if f.Server == "" {
		t.Fatalf("%s/hosts.toml has no server", dir)
	}
	return append(out, parse(f.Server, containerdHostSettings{Capabilities: f.Capabilities, OverridePath: f.OverridePath}, false))
}

// url is the request URL containerd sends to e for repository repo (the
// reference's path below its host): core/remotes/docker/resolver.go
// newRequest joins "/", the host's path, the repository and the rest.
func (e containerdEndpoint) url(repo string, rest ...string) string {
	return e.scheme + "://" + e.host + path.Join(append([]string{"/", e.path, repo}, rest...)...)
}

// ---- CRI-O and Podman: the drop-in loaded by containers/image itself ----

// registriesSystem returns a SystemContext reading an empty registries.conf
// and the install's drop-in directory only.
func registriesSystem(t *testing.T, nodeDir string) *types.SystemContext {
	t.Helper()
	base := filepath.Join(t.TempDir(), "registries.conf")
	if err := os.WriteFile(base, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	sysregistriesv2.InvalidateCache()
	t.Cleanup(sysregistriesv2.InvalidateCache)
	return &types.SystemContext{SystemRegistriesConfPath: base, SystemRegistriesConfDirPath: filepath.Join(nodeDir, filepath.Dir(install.RegistriesConfDropIn))}
}

// pullSources returns where containers/image pulls ref from, in order,
// and whether each endpoint is insecure.
func pullSources(t *testing.T, sys *types.SystemContext, ref string) ([]string, []bool) {
	t.Helper()
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := sysregistriesv2.FindRegistry(sys, named.String())
	if err != nil {
		t.Fatalf("registries.conf.d: %v", err)
	}
	if reg == nil {
		return []string{named.String()}, []bool{false}
	}
	srcs, err := reg.PullSourcesFromReference(named)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	var insecure []bool
	for _, s := range srcs {
		refs = append(refs, s.Reference.String())
		insecure = append(insecure, s.Endpoint.Insecure)
	}
	return refs, insecure
}

// ---- OpenShift: the fields of github.com/openshift/api config/v1 ----

type openShiftMirrorSet struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		ImageDigestMirrors []openShiftImageMirrors `yaml:"imageDigestMirrors"`
		ImageTagMirrors    []openShiftImageMirrors `yaml:"imageTagMirrors"`
	} `yaml:"spec"`
}

type openShiftImageMirrors struct {
	Source             string   `yaml:"source"`
	Mirrors            []string `yaml:"mirrors"`
	MirrorSourcePolicy string   `yaml:"mirrorSourcePolicy"`
}

// The +kubebuilder:validation:Pattern of ImageDigestMirrors.Source and of
// ImageMirror in openshift/api config/v1/types_image_digest_mirror_set.go
// (the same in types_image_tag_mirror_set.go): the API server refuses a set
// whose fields do not match.
var (
	openShiftSource = regexp.MustCompile(`^\*(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+$|^((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(?::[0-9]+)?)(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?$`)
	openShiftMirror = regexp.MustCompile(`^((?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+)?(?::[0-9]+)?)(?:(?:/[a-z0-9]+(?:(?:(?:[._]|__|[-]*)[a-z0-9]+)+)?)+)?$`)
)

func readMirrorSet(t *testing.T, file, kind string) openShiftMirrorSet {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s openShiftMirrorSet
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("%s: %v\n%s", file, err, data)
	}
	if s.APIVersion != "config.openshift.io/v1" || s.Kind != kind || s.Metadata.Name == "" {
		t.Errorf("%s: apiVersion %q kind %q name %q, want config.openshift.io/v1 %s", file, s.APIVersion, s.Kind, s.Metadata.Name, kind)
	}
	for _, m := range append(s.Spec.ImageDigestMirrors, s.Spec.ImageTagMirrors...) {
		if !openShiftSource.MatchString(m.Source) {
			t.Errorf("%s: source %q fails openshift/api's pattern", file, m.Source)
		}
		for _, mi := range m.Mirrors {
			if !openShiftMirror.MatchString(mi) {
				t.Errorf("%s: mirror %q fails openshift/api's pattern", file, mi)
			}
		}
		if m.MirrorSourcePolicy != "" && m.MirrorSourcePolicy != "NeverContactSource" && m.MirrorSourcePolicy != "AllowContactingSource" {
			t.Errorf("%s: mirrorSourcePolicy %q", file, m.MirrorSourcePolicy)
		}
	}
	return s
}

// openShiftMirrorsFor applies the sets' rule to a repository: the entries
// whose source is the repository or a namespace of it, the most specific
// only, each mirror replacing the part matched by source.
func openShiftMirrorsFor(list []openShiftImageMirrors, repo string) []string {
	best := -1
	var out []string
	for _, m := range list {
		if repo != m.Source && !strings.HasPrefix(repo, m.Source+"/") {
			continue
		}
		if len(m.Source) > best {
			best, out = len(m.Source), nil
		}
		if len(m.Source) == best {
			for _, mi := range m.Mirrors {
				out = append(out, mi+strings.TrimPrefix(repo, m.Source))
			}
		}
	}
	return out
}

// ---- the tests ----

// wantMirror is what a node must do for one source repository.
type wantMirror struct {
	source     string // HOST/PATH
	mirror     string // HOST/PATH in the mirror
	digestOnly bool   // held by digest only (an image in another package's repository)
	plain      bool   // the mirror speaks plain HTTP
}

func TestNodeConfigFormats(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("containerd's host directories are checked with the Unix lookup order")
	}
	dg := func(s string) string { return digest.FromString(s).String() }
	pkgs := func(mirror func(string) string) []lock.Package {
		return []lock.Package{
			{Source: "docker.io/library/nginx", Kind: "image", Version: "1.27.0", Digest: dg("nginx"), Mirror: mirror("docker.io/library/nginx")},
			{Source: "ghcr.io/acme/app", Kind: "porter.bundle", Version: "v1.0.0", Digest: dg("app"), Mirror: mirror("ghcr.io/acme/app"),
				Images: []lock.Image{
					// Porter's bundle.json images: one in the bundle's
					// repository, one named elsewhere and relocated into it.
					{Name: "invocation", Ref: "ghcr.io/acme/app@" + dg("inv"), Digest: dg("inv")},
					{Name: "cache", Ref: "redis:7", Digest: dg("redis")},
				}},
			{Source: "127.0.0.1:5000/p/db", Kind: "crossplane.provider", Version: "v0.1.0", Digest: dg("db"), Mirror: mirror("127.0.0.1:5000/p/db")},
			// A chart from a classic Helm repository: no image a node pulls.
			{Source: "https://charts.example.com/stable/web", Kind: "helm.chart", Version: "1.0.0", Digest: dg("web"), Mirror: mirror("charts.example.com/stable/web")},
		}
	}
	mapping := func(m relocate.Mapping) func(string) string { return m.Repo }
	cases := []struct {
		name     string
		lockMap  relocate.Mapping  // how the lock's mirror fields were written
		override *relocate.Mapping // install --mirror
		plain    []string          // --plain-http
		want     []wantMirror
	}{
		{
			name:    "mirror with a prefix, HTTPS",
			lockMap: relocate.Mapping{Host: "registry.dr.example.com", Prefix: "mirror"},
			want: []wantMirror{
				{source: "127.0.0.1:5000/p/db", mirror: "registry.dr.example.com/mirror/p/db"},
				{source: "docker.io/library/nginx", mirror: "registry.dr.example.com/mirror/library/nginx"},
				{source: "docker.io/library/redis", mirror: "registry.dr.example.com/mirror/acme/app", digestOnly: true},
				{source: "ghcr.io/acme/app", mirror: "registry.dr.example.com/mirror/acme/app"},
			},
		},
		{
			name:     "loopback mirror without a prefix, from --mirror",
			lockMap:  relocate.Mapping{Host: "elsewhere.example.com", Prefix: "old"},
			override: &relocate.Mapping{Host: "127.0.0.1:5001"},
			want: []wantMirror{
				{source: "127.0.0.1:5000/p/db", mirror: "127.0.0.1:5001/p/db", plain: true},
				{source: "docker.io/library/nginx", mirror: "127.0.0.1:5001/library/nginx", plain: true},
				{source: "docker.io/library/redis", mirror: "127.0.0.1:5001/acme/app", digestOnly: true, plain: true},
				{source: "ghcr.io/acme/app", mirror: "127.0.0.1:5001/acme/app", plain: true},
			},
		},
		{
			name:    "--plain-http mirror with a two-level prefix",
			lockMap: relocate.Mapping{Host: "registry.internal:5000", Prefix: "a/b"},
			plain:   []string{"REGISTRY.internal:5000"},
			want: []wantMirror{
				{source: "127.0.0.1:5000/p/db", mirror: "registry.internal:5000/a/b/p/db", plain: true},
				{source: "docker.io/library/nginx", mirror: "registry.internal:5000/a/b/library/nginx", plain: true},
				{source: "docker.io/library/redis", mirror: "registry.internal:5000/a/b/acme/app", digestOnly: true, plain: true},
				{source: "ghcr.io/acme/app", mirror: "registry.internal:5000/a/b/acme/app", plain: true},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Packages: pkgs(mapping(tc.lockMap))}
			dir := t.TempDir()
			files, err := install.WriteNodeConfig(dir, l, install.NodeConfigOptions{Mirror: tc.override, PlainHTTP: tc.plain})
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := []string{
				"node/containerd/certs.d/127.0.0.1_5000_/hosts.toml",
				"node/containerd/certs.d/docker.io/hosts.toml",
				"node/containerd/certs.d/ghcr.io/hosts.toml",
				"node/openshift/imagedigestmirrorset.yaml",
				"node/openshift/imagetagmirrorset.yaml",
				"node/registries.conf.d/50-ferry-mirror.conf",
			}
			if !slices.Equal(files, wantFiles) {
				t.Errorf("files = %v, want %v", files, wantFiles)
			}
			nodeDir := filepath.Join(dir, install.NodeDir)
			certs := filepath.Join(nodeDir, filepath.FromSlash(install.ContainerdCertsDir))
			sys := registriesSystem(t, nodeDir)
			idms := readMirrorSet(t, filepath.Join(nodeDir, install.DigestMirrorSetFile), "ImageDigestMirrorSet")
			itms := readMirrorSet(t, filepath.Join(nodeDir, install.TagMirrorSetFile), "ImageTagMirrorSet")
			if len(idms.Spec.ImageTagMirrors) > 0 || len(itms.Spec.ImageDigestMirrors) > 0 {
				t.Errorf("a set holds the other kind's list")
			}
			d := dg("content")
			for _, w := range tc.want {
				srcHost, srcRepo, _ := strings.Cut(w.source, "/")
				mHost, mRepo, _ := strings.Cut(w.mirror, "/")
				scheme := "https"
				if w.plain {
					scheme = "http"
				}

				// containerd: the mirror first, then the source.
				eps := containerdEndpoints(t, certs, srcHost)
				server := eps[len(eps)-1]
				wantServer := "https://" + srcHost + "/v2/" + srcRepo + "/manifests/" + d
				switch {
				case srcHost == "docker.io":
					wantServer = "https://registry-1.docker.io/v2/" + srcRepo + "/manifests/" + d
				case strings.HasPrefix(srcHost, "127.0.0.1"):
					wantServer = "http://" + srcHost + "/v2/" + srcRepo + "/manifests/" + d
				}
				if got := server.url(srcRepo, "manifests", d); got != wantServer {
					t.Errorf("containerd %s: server URL %s, want %s", w.source, got, wantServer)
				}
				first := eps[0]
				mirrorURL := scheme + "://" + mHost + "/v2/" + mRepo + "/manifests/" + d
				if w.digestOnly {
					// containerd maps hosts, not repositories: the file
					// says it leaves this one to the source.
					if got := first.url(srcRepo, "manifests", d); got == mirrorURL {
						t.Errorf("containerd %s: unexpectedly redirected", w.source)
					}
					data, _ := os.ReadFile(filepath.Join(certs, srcHost, "hosts.toml"))
					if !strings.Contains(string(data), "not redirected") || !strings.Contains(string(data), w.source+" -> "+w.mirror) {
						t.Errorf("containerd %s: hosts.toml does not say it is not redirected:\n%s", w.source, data)
					}
				} else {
					if !first.mirror || first.url(srcRepo, "manifests", d) != mirrorURL {
						t.Errorf("containerd %s: first tries %s, want %s", w.source, first.url(srcRepo, "manifests", d), mirrorURL)
					}
					if !slices.Contains(first.capabilities, "pull") || !slices.Contains(first.capabilities, "resolve") {
						t.Errorf("containerd %s: capabilities %v", w.source, first.capabilities)
					}
				}

				// containers/image: digest pulls always, tag pulls unless
				// digest-only, go to the mirror first; the source last.
				refs, insecure := pullSources(t, sys, w.source+"@"+d)
				if len(refs) != 2 || refs[0] != w.mirror+"@"+d || insecure[0] != w.plain || refs[1] != w.source+"@"+d {
					t.Errorf("registries.conf %s@digest: pulls %v (insecure %v), want [%s@%s %s@%s]", w.source, refs, insecure, w.mirror, d, w.source, d)
				}
				refs, _ = pullSources(t, sys, w.source+":v9")
				wantTag := []string{w.mirror + ":v9", w.source + ":v9"}
				if w.digestOnly {
					wantTag = wantTag[1:]
				}
				if !slices.Equal(refs, wantTag) {
					t.Errorf("registries.conf %s:v9: pulls %v, want %v", w.source, refs, wantTag)
				}

				// OpenShift: digest set always, tag set unless digest-only.
				if got := openShiftMirrorsFor(idms.Spec.ImageDigestMirrors, w.source); !slices.Equal(got, []string{w.mirror}) {
					t.Errorf("ImageDigestMirrorSet %s: mirrors %v, want %s", w.source, got, w.mirror)
				}
				got := openShiftMirrorsFor(itms.Spec.ImageTagMirrors, w.source)
				if w.digestOnly != (len(got) == 0) || (!w.digestOnly && !slices.Equal(got, []string{w.mirror})) {
					t.Errorf("ImageTagMirrorSet %s: mirrors %v, want %s (digest only: %v)", w.source, got, w.mirror, w.digestOnly)
				}
			}
			// What the mirror does not hold is left alone: a repository
			// beside a mirrored one, one whose name extends it, a Helm
			// HTTP repository's chart. (A repository below a mirrored one,
			// ghcr.io/acme/app/sub, is tried on the mirror, then on the
			// source: both formats match prefixes by path component.)
			for _, other := range []string{"docker.io/library/busybox", "docker.io/library/nginx-exporter", "charts.example.com/stable/web"} {
				if refs, _ := pullSources(t, sys, other+"@"+d); !slices.Equal(refs, []string{other + "@" + d}) {
					t.Errorf("registries.conf redirects %s: %v", other, refs)
				}
				if got := openShiftMirrorsFor(idms.Spec.ImageDigestMirrors, other); len(got) > 0 {
					t.Errorf("ImageDigestMirrorSet redirects %s: %v", other, got)
				}
			}
			if _, err := os.Stat(filepath.Join(certs, "charts.example.com")); !os.IsNotExist(err) {
				t.Errorf("containerd configuration written for a Helm HTTP repository")
			}
			if plainHost := strings.Contains(tc.name, "plain") || tc.override != nil; plainHost {
				data, _ := os.ReadFile(filepath.Join(nodeDir, install.DigestMirrorSetFile))
				if !strings.Contains(string(data), "insecureRegistries") {
					t.Errorf("ImageDigestMirrorSet does not say the mirror host needs insecureRegistries:\n%s", data)
				}
			}
		})
	}
}

func TestNodeConfigEmpty(t *testing.T) {
	cases := []struct {
		name string
		pkgs []lock.Package
	}{
		{"no packages", nil},
		{"only a chart from a Helm HTTP repository", []lock.Package{{Source: "https://charts.example.com/web", Kind: "helm.chart", Digest: digest.FromString("w").String(), Mirror: "m.example.com/charts/web"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files, err := install.WriteNodeConfig(dir, &lock.Lock{Packages: tc.pkgs}, install.NodeConfigOptions{})
			if err != nil || len(files) != 0 {
				t.Fatalf("files %v, err %v", files, err)
			}
			if _, err := os.Stat(filepath.Join(dir, install.NodeDir)); !os.IsNotExist(err) {
				t.Errorf("%s written for a lock with no registry package", install.NodeDir)
			}
		})
	}
}

// TestInstallNodeConfigResolves installs a mirrored lock with the source
// registry stopped and follows each consumer's configuration to the real
// mirror: the request URL containerd builds from hosts.toml, the reference
// containers/image rewrites to from the drop-in, and the mirror the
// OpenShift sets name, each must answer the package's digest.
func TestInstallNodeConfigResolves(t *testing.T) {
	ctx := context.Background()
	src, mirror, c, l := pipelinetest.MirroredLock(t)
	srcHost := src.Host
	src.Stop()
	dest := filepath.Join(t.TempDir(), "out")
	if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest}); err != nil {
		t.Fatal(err)
	}
	nodeDir := filepath.Join(dest, install.NodeDir)
	certs := filepath.Join(nodeDir, filepath.FromSlash(install.ContainerdCertsDir))
	sys := registriesSystem(t, nodeDir)
	idms := readMirrorSet(t, filepath.Join(nodeDir, install.DigestMirrorSetFile), "ImageDigestMirrorSet")
	itms := readMirrorSet(t, filepath.Join(nodeDir, install.TagMirrorSetFile), "ImageTagMirrorSet")
	accept := strings.Join([]string{ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex,
		"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.distribution.manifest.list.v2+json"}, ", ")
	resolve := func(ref string) string {
		t.Helper()
		repoName, obj, ok := strings.Cut(ref, "@")
		if !ok {
			i := strings.LastIndex(ref, ":")
			repoName, obj = ref[:i], ref[i+1:]
		}
		repo, err := c.Repository(repoName)
		if err != nil {
			t.Fatal(err)
		}
		d, err := repo.Resolve(ctx, obj)
		if err != nil {
			t.Errorf("resolving %s in the mirror: %v", ref, err)
			return ""
		}
		return d.Digest.String()
	}
	var checked int
	for _, p := range l.Resolved() {
		_, srcRepo, _ := strings.Cut(p.Source, "/")
		refs := []string{p.Digest, p.Version}
		for _, obj := range refs {
			// containerd: GET the URL it builds for the first [host], with
			// the ns query it adds for a mirror.
			eps := containerdEndpoints(t, certs, srcHost)
			if !eps[0].mirror {
				t.Fatalf("containerd %s: no mirror host", p.Source)
			}
			u := eps[0].url(srcRepo, "manifests", obj) + "?ns=" + url.QueryEscape(srcHost)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Docker-Content-Digest") != p.Digest {
				t.Errorf("containerd %s %s: GET %s: %s, digest %q, want %s", p.Source, obj, u, resp.Status, resp.Header.Get("Docker-Content-Digest"), p.Digest)
			}
			sep := ":"
			if strings.HasPrefix(obj, "sha256:") {
				sep = "@"
			}
			// containers/image: the rewritten reference, resolved in the mirror.
			pulled, insecure := pullSources(t, sys, p.Source+sep+obj)
			if len(pulled) < 2 || !insecure[0] {
				t.Fatalf("registries.conf %s%s%s: pulls %v (insecure %v)", p.Source, sep, obj, pulled, insecure)
			}
			if got := resolve(pulled[0]); got != p.Digest {
				t.Errorf("registries.conf %s%s%s -> %s: digest %s, want %s", p.Source, sep, obj, pulled[0], got, p.Digest)
			}
			// OpenShift: the digest set for digests, the tag set for tags.
			set := idms.Spec.ImageDigestMirrors
			if sep == ":" {
				set = itms.Spec.ImageTagMirrors
			}
			ms := openShiftMirrorsFor(set, p.Source)
			if len(ms) != 1 {
				t.Fatalf("OpenShift %s: mirrors %v", p.Source, ms)
			}
			if got := resolve(ms[0] + sep + obj); got != p.Digest {
				t.Errorf("OpenShift %s%s%s -> %s: digest %s, want %s", p.Source, sep, obj, ms[0], got, p.Digest)
			}
			checked++
		}
		if !strings.HasPrefix(p.Mirror, mirror.Host+"/m/") {
			t.Errorf("%s mirrored to %s", p.Source, p.Mirror)
		}
	}
	if checked != 2*len(l.Resolved()) || checked == 0 {
		t.Errorf("checked %d references", checked)
	}
}
