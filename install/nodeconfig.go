package install

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
)

// NodeDir is the directory of an install that holds the node-level
// registry mirror configuration: what makes a cluster's nodes pull the
// closure's images from the mirror without editing any chart or manifest.
const NodeDir = "node"

// Files and directories below NodeDir, one set per consumer.
const (
	// ContainerdCertsDir holds one SOURCEHOST/hosts.toml per source
	// registry host: containerd's registry host namespaces
	// (containerd docs/hosts.md). Copy it to the directory named by
	// config_path in containerd's config.toml (/etc/containerd/certs.d).
	ContainerdCertsDir = "containerd/certs.d"
	// RegistriesConfDropIn is a containers-registries.conf.d(5) drop-in for
	// CRI-O, Podman, Buildah and Skopeo: copy it to
	// /etc/containers/registries.conf.d/.
	RegistriesConfDropIn = "registries.conf.d/50-ferry-mirror.conf"
	// DigestMirrorSetFile and TagMirrorSetFile are OpenShift's
	// config.openshift.io/v1 ImageDigestMirrorSet and ImageTagMirrorSet:
	// oc apply -f them; the Machine Config Operator renders them into
	// every node's registries.conf.
	DigestMirrorSetFile = "openshift/imagedigestmirrorset.yaml"
	TagMirrorSetFile    = "openshift/imagetagmirrorset.yaml"
)

// NodeConfigName is metadata.name of the OpenShift mirror sets.
const NodeConfigName = "ferry-mirror"

// NodeConfigOptions configures the node-level mirror configuration.
type NodeConfigOptions struct {
	// Mirror, when set, places the packages in this mirror instead of the
	// lock's (as Options.Mirror).
	Mirror *relocate.Mapping
	// PlainHTTP lists registry hosts (host or host:port) spoken to over
	// plain HTTP, as --plain-http does. Loopback hosts are plain HTTP
	// without being listed, as ferry's client treats them.
	PlainHTTP []string
}

// plain reports whether host is spoken to over plain HTTP.
func (o NodeConfigOptions) plain(host string) bool {
	if client.IsLoopback(host) {
		return true
	}
	for _, h := range o.PlainHTTP {
		if h == client.PlainHTTPAll || strings.EqualFold(h, host) {
			return true
		}
	}
	return false
}

// NodeMirror is one source repository and where the mirror holds it.
type NodeMirror struct {
	// Source is the source repository, HOST/PATH, as the lock records it
	// ("docker.io/library/nginx").
	Source string
	// Mirrors are the mirror repositories holding its content, in order.
	Mirrors []MirrorLocation
}

// MirrorLocation is one mirror repository of a source repository.
type MirrorLocation struct {
	// Repo is the mirror repository, HOST/PATH.
	Repo string
	// DigestOnly is set when the mirror repository holds the source's
	// content by digest only, under no tag of its own: an image a package
	// carries inside its own repository (a Porter bundle's images, which
	// cnab-to-oci relocates into the bundle's repository).
	DigestOnly bool
	// PlainHTTP is set when the mirror host is spoken to over plain HTTP.
	PlainHTTP bool
}

// NodeMirrors returns, for every package of l that lives in a registry
// (Source "HOST/PATH"; a package whose Source is a URL, a chart from a
// classic Helm repository, is no image a node pulls) and every image a
// package records, where the mirror holds its source repository: the
// package's own mirror repository (Options.Mirror's when set, else the
// lock's p.Mirror). Every kind counts: images locked as packages of kind
// "image" (a Helm chart's), bundles, Crossplane packages, artifacts. An
// image recorded in a package's images[] whose reference names the
// package's own repository is covered by the package's entry; one naming
// another repository (Porter's bundle.json images, relocated into the
// bundle's repository) is mirrored by digest only. Sorted by source.
func NodeMirrors(l *lock.Lock, opts NodeConfigOptions) ([]NodeMirror, error) {
	by := map[string]*NodeMirror{}
	add := func(source, mirror string, digestOnly bool) {
		m := by[source]
		if m == nil {
			m = &NodeMirror{Source: source}
			by[source] = m
		}
		for i, loc := range m.Mirrors {
			if loc.Repo == mirror {
				// A repository holding tags holds the digests too.
				m.Mirrors[i].DigestOnly = loc.DigestOnly && digestOnly
				return
			}
		}
		host, _, _ := strings.Cut(mirror, "/")
		m.Mirrors = append(m.Mirrors, MirrorLocation{Repo: mirror, DigestOnly: digestOnly, PlainHTTP: opts.plain(host)})
	}
	for _, p := range l.Resolved() {
		if strings.Contains(p.Source, "://") {
			continue
		}
		src, err := ociref.Parse(p.Source)
		if err != nil {
			return nil, errkind.Markf(errkind.BadInput, "package %s: %w", p.Source, err)
		}
		repo := mirrorRepo(p, opts.Mirror)
		if repo == "" {
			continue
		}
		dst, err := ociref.Parse(repo)
		if err != nil {
			return nil, errkind.Markf(errkind.BadInput, "package %s: mirror %s: %w", p.Source, repo, err)
		}
		add(src.Repo(), dst.Repo(), false)
		for _, im := range p.Images {
			// Porter normalises bundle.json's image references the Docker
			// way (ociref.ParseNormalized); one that does not parse
			// names nothing a node could pull.
			ir, err := ociref.ParseNormalized(im.Ref, ociref.DockerHub)
			if err != nil || ociref.IsURLSource(ir.Registry) || ir.Repo() == src.Repo() {
				continue
			}
			add(ir.Repo(), dst.Repo(), true)
		}
	}
	out := make([]NodeMirror, 0, len(by))
	for _, m := range by {
		// Mirrors holding tags first: they answer both kinds of pull.
		sort.SliceStable(m.Mirrors, func(i, j int) bool { return !m.Mirrors[i].DigestOnly && m.Mirrors[j].DigestOnly })
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	return out, nil
}

// WriteNodeConfig writes below dir/NodeDir the node-level mirror
// configuration for the packages of l (see NodeMirrors): containerd's
// hosts.toml per source registry host, a registries.conf drop-in for CRI-O
// and Podman, and OpenShift's ImageDigestMirrorSet and ImageTagMirrorSet.
// It returns the files written, relative to dir with slashes; a lock with
// no registry package writes nothing.
func WriteNodeConfig(dir string, l *lock.Lock, opts NodeConfigOptions) ([]string, error) {
	mirrors, err := NodeMirrors(l, opts)
	if err != nil {
		return nil, err
	}
	if len(mirrors) == 0 {
		return nil, nil
	}
	files := map[string][]byte{}
	for host, data := range containerdHosts(mirrors, opts) {
		files[path.Join(NodeDir, ContainerdCertsDir, host, "hosts.toml")] = data
	}
	files[path.Join(NodeDir, RegistriesConfDropIn)] = registriesConf(mirrors)
	idms, itms, err := openShiftMirrorSets(mirrors)
	if err != nil {
		return nil, err
	}
	files[path.Join(NodeDir, DigestMirrorSetFile)] = idms
	files[path.Join(NodeDir, TagMirrorSetFile)] = itms
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := WriteFile(dir, name, files[name], 0o644); err != nil {
			return nil, fmt.Errorf("writing node mirror configuration %s: %w", name, err)
		}
	}
	return names, nil
}

// containerdHostDir is the directory containerd looks up first for a
// registry host: ":PORT" is written "_PORT_", which containerd reads on
// every OS (core/remotes/docker/config/hosts.go hostDirectory, and
// config_unix.go hostPaths, which tries HOST_PORT_ before HOST:PORT).
func containerdHostDir(host string) string {
	if i := strings.LastIndex(host, ":"); i > 0 {
		return host[:i] + "_" + host[i+1:] + "_"
	}
	return host
}

// containerdHost is one [host."URL"] entry of a hosts.toml.
type containerdHost struct {
	url          string
	overridePath bool
}

// containerdHosts returns each source registry host's hosts.toml, by
// directory name.
//
// containerd maps a whole registry host, not a repository: a request for
// SRCHOST/REPO goes to path.Join("/", host.Path, REPO, "manifests", …) on
// each [host] in turn (core/remotes/docker/resolver.go, newRequest), REPO
// being the reference's path below SRCHOST ("library/nginx" for docker.io).
// ferry's mirror layout HOST/PREFIX (relocate.Mapping) places SRCHOST/REPO
// at HOST/PREFIX/REPO, so the entry is "https://HOST/v2/PREFIX" with
// override_path = true: without it containerd appends "/v2" to a URL path
// that does not end in it (parseHostConfig in
// core/remotes/docker/config/hosts.go), asking for
// HOST/PREFIX/v2/REPO/..., which no registry serves; docs/hosts.md gives
// the same form for a mirror below a path
// ([host."https://non-compliant-mirror.registry/v2/upstream"] with
// override_path = true). A mirror without a prefix is plain
// "https://HOST", to which containerd adds "/v2".
//
// A mirror repository whose path does not end with the source's path (an
// image kept by digest in another package's repository) cannot be
// expressed per host: it is listed in a comment of its source host's file,
// and the registries.conf drop-in and the OpenShift sets, which map
// repositories, cover it.
func containerdHosts(mirrors []NodeMirror, opts NodeConfigOptions) map[string][]byte {
	type hostFile struct {
		hosts     []containerdHost
		seen      map[string]bool
		uncovered []string
	}
	files := map[string]*hostFile{}
	var order []string
	for _, m := range mirrors {
		srcHost, srcPath, _ := strings.Cut(m.Source, "/")
		f := files[srcHost]
		if f == nil {
			f = &hostFile{seen: map[string]bool{}}
			files[srcHost] = f
			order = append(order, srcHost)
		}
		for _, loc := range m.Mirrors {
			mHost, mPath, _ := strings.Cut(loc.Repo, "/")
			var prefix string
			switch {
			case mPath == srcPath:
			case strings.HasSuffix(mPath, "/"+srcPath):
				prefix = strings.TrimSuffix(mPath, "/"+srcPath)
			default:
				f.uncovered = append(f.uncovered, m.Source+" -> "+loc.Repo)
				continue
			}
			scheme := "https"
			if loc.PlainHTTP {
				scheme = "http"
			}
			h := containerdHost{url: scheme + "://" + mHost}
			if prefix != "" {
				h = containerdHost{url: scheme + "://" + mHost + "/v2/" + prefix, overridePath: true}
			}
			if !f.seen[h.url] {
				f.seen[h.url] = true
				f.hosts = append(f.hosts, h)
			}
		}
	}
	out := map[string][]byte{}
	for _, srcHost := range order {
		f := files[srcHost]
		var b bytes.Buffer
		fmt.Fprintf(&b, "# containerd registry host namespace %s, written by ferry install:\n", srcHost)
		b.WriteString("# pulls are tried on the mirror first, then on the source (server).\n")
		b.WriteString("# Format: https://github.com/containerd/containerd/blob/main/docs/hosts.md\n")
		for _, u := range f.uncovered {
			fmt.Fprintf(&b, "# not redirected (containerd maps hosts, not repositories; registries.conf.d and OpenShift cover it): %s\n", u)
		}
		fmt.Fprintf(&b, "server = %s\n", tomlString(containerdServer(srcHost, opts)))
		for _, h := range f.hosts {
			fmt.Fprintf(&b, "\n[host.%s]\n", tomlString(h.url))
			// The mirror is ferry's own copy of the locked content: a
			// private mirror, trusted to resolve tags (docs/hosts.md,
			// capabilities: "Private Mirror: pull, resolve").
			b.WriteString("  capabilities = [\"pull\", \"resolve\"]\n")
			if h.overridePath {
				b.WriteString("  override_path = true\n")
			}
		}
		out[containerdHostDir(srcHost)] = b.Bytes()
	}
	return out
}

// containerdServer is the upstream of a registry host namespace:
// registry-1.docker.io for docker.io, as containerd's own default
// (core/remotes/docker/config/hosts.go ConfigureHosts) and docs/hosts.md's
// docker.io example.
func containerdServer(srcHost string, opts NodeConfigOptions) string {
	if srcHost == ociref.DockerHub {
		return "https://registry-1.docker.io"
	}
	if opts.plain(srcHost) {
		return "http://" + srcHost
	}
	return "https://" + srcHost
}

// registriesConf returns the containers-registries.conf(5) drop-in
// (version 2 format, the man page of github.com/containers/image's
// docs/containers-registries.conf.5.md): one [[registry]] per source
// repository, its prefix and location the source repository, so that
// only the repositories the mirror holds are redirected (prefix matching
// is by whole path components, the longest prefix wins), and one
// [[registry.mirror]] per mirror repository, tried in order before the
// source. A docker.io source is written with its /library namespace, as
// the man page requires ("Normalization of docker.io references"), which
// is how the lock records it.
//
// pull-from-mirror is "all" for a package's own repository: ferry mirrors
// the locked tags with the content, so a pod naming a tag must find it in
// an air gap, and "digest-only" would send tag pulls to the unreachable
// source. It is "digest-only" for an image held by digest in another
// package's repository, which has none of the image's tags. Plain-HTTP
// mirrors are insecure = true.
func registriesConf(mirrors []NodeMirror) []byte {
	var b bytes.Buffer
	b.WriteString("# containers-registries.conf.d(5) drop-in written by ferry install, for CRI-O and Podman:\n")
	b.WriteString("# copy to /etc/containers/registries.conf.d/. Pulls try the mirror first, then the source.\n")
	for _, m := range mirrors {
		fmt.Fprintf(&b, "\n[[registry]]\nprefix = %s\nlocation = %s\n", tomlString(m.Source), tomlString(m.Source))
		for _, loc := range m.Mirrors {
			fmt.Fprintf(&b, "\n[[registry.mirror]]\nlocation = %s\n", tomlString(loc.Repo))
			if loc.PlainHTTP {
				b.WriteString("insecure = true\n")
			}
			pull := "all"
			if loc.DigestOnly {
				pull = "digest-only"
			}
			fmt.Fprintf(&b, "pull-from-mirror = %s\n", tomlString(pull))
		}
	}
	return b.Bytes()
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// mirrorSet is an OpenShift ImageDigestMirrorSet or ImageTagMirrorSet, the
// fields ferry writes of github.com/openshift/api config/v1
// (types_image_digest_mirror_set.go, types_image_tag_mirror_set.go). Spec
// holds imageDigestMirrors or imageTagMirrors, written even when empty (the
// fields are not omitempty there).
type mirrorSet struct {
	APIVersion string                    `yaml:"apiVersion"`
	Kind       string                    `yaml:"kind"`
	Metadata   mirrorSetMeta             `yaml:"metadata"`
	Spec       map[string][]imageMirrors `yaml:"spec"`
}

type mirrorSetMeta struct {
	Name string `yaml:"name"`
}

// imageMirrors is one source repository and its mirrors (ImageDigestMirrors,
// ImageTagMirrors). mirrorSourcePolicy is left unset (AllowContactingSource),
// as containerd's server and registries.conf's location fall back to the
// source.
type imageMirrors struct {
	Source  string   `yaml:"source"`
	Mirrors []string `yaml:"mirrors,omitempty"`
}

// openShiftMirrorSets returns the ImageDigestMirrorSet (every mirror) and
// the ImageTagMirrorSet (the mirrors holding tags) of mirrors. OpenShift
// has no per-mirror insecure flag: a plain-HTTP mirror host must also be
// listed in image.config.openshift.io/cluster
// spec.registrySources.insecureRegistries, which a comment says.
func openShiftMirrorSets(mirrors []NodeMirror) ([]byte, []byte, error) {
	digests, tags := []imageMirrors{}, []imageMirrors{}
	plain := map[string]bool{}
	for _, m := range mirrors {
		d := imageMirrors{Source: m.Source}
		t := imageMirrors{Source: m.Source}
		for _, loc := range m.Mirrors {
			d.Mirrors = append(d.Mirrors, loc.Repo)
			if !loc.DigestOnly {
				t.Mirrors = append(t.Mirrors, loc.Repo)
			}
			if loc.PlainHTTP {
				host, _, _ := strings.Cut(loc.Repo, "/")
				plain[host] = true
			}
		}
		digests = append(digests, d)
		if len(t.Mirrors) > 0 {
			tags = append(tags, t)
		}
	}
	var header bytes.Buffer
	header.WriteString("# Written by ferry install: oc apply -f this file.\n")
	hosts := make([]string, 0, len(plain))
	for h := range plain {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		fmt.Fprintf(&header, "# %s speaks plain HTTP: list it in image.config.openshift.io/cluster spec.registrySources.insecureRegistries.\n", h)
	}
	marshal := func(kind, field string, list []imageMirrors) ([]byte, error) {
		var b bytes.Buffer
		b.Write(header.Bytes())
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(mirrorSet{APIVersion: "config.openshift.io/v1", Kind: kind, Metadata: mirrorSetMeta{Name: NodeConfigName}, Spec: map[string][]imageMirrors{field: list}}); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		if err := enc.Close(); err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		return b.Bytes(), nil
	}
	idms, err := marshal("ImageDigestMirrorSet", "imageDigestMirrors", digests)
	if err != nil {
		return nil, nil, err
	}
	itms, err := marshal("ImageTagMirrorSet", "imageTagMirrors", tags)
	if err != nil {
		return nil, nil, err
	}
	return idms, itms, nil
}
