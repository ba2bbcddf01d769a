package crossplane

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// API versions of the objects RenderInstall writes.
const (
	// PackageAPIVersion is the apiVersion of Configuration, Provider and
	// Function objects.
	PackageAPIVersion = "pkg.crossplane.io/v1"
	// ImageConfigAPIVersion is the apiVersion of ImageConfig objects.
	ImageConfigAPIVersion = "pkg.crossplane.io/v1beta1"
	// ImageConfigFile is the file RenderInstall writes ImageConfigs to.
	ImageConfigFile = "imageconfig.yaml"
	// ImageConfigName is the name of the ImageConfig when there is one
	// source prefix; with several, each is named ImageConfigName-HOST.
	ImageConfigName = "ferry-mirror"
	// ImageConfigPullName is the name of the ImageConfig that gives the
	// mirror's prefixes a pull secret (RenderOptions.PullSecrets).
	ImageConfigPullName = "ferry-mirror-pull"
)

// InstallPackage is one package to install from the mirror.
type InstallPackage struct {
	// Kind is a format kind (format.KindCrossplaneConfiguration, ...) or a
	// Crossplane kind ("Configuration", "Provider", "Function").
	Kind string
	// Name is the package's name (its meta metadata.name). It is
	// informative: the object's metadata.name is ObjectName(Source), the
	// name Crossplane itself would give it.
	Name string
	// Source is the repository the package was resolved from, e.g.
	// "xpkg.upbound.io/acme/platform". It names the package object.
	Source string
	// Mirror is the repository in the mirror, e.g.
	// "registry.internal/mirror/acme/platform".
	Mirror string
	// Digest is the package's manifest digest, "sha256:...".
	Digest string
}

// PrefixRewrite maps a source prefix to a mirror prefix, as an ImageConfig's
// spec.matchImages[].prefix and spec.rewriteImage.prefix.
type PrefixRewrite struct {
	// Source is the prefix images are matched on, e.g. "xpkg.upbound.io/".
	Source string
	// Mirror replaces Source, e.g. "registry.internal/mirror/".
	Mirror string
}

// Package object shapes (upstream pkg.crossplane.io/v1 Configuration,
// Provider and Function; only the fields ferry sets).
type (
	objectMeta struct {
		Name   string            `yaml:"name" json:"name"`
		Labels map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	}
	// localObjectRef is a core/v1 LocalObjectReference.
	localObjectRef struct {
		Name string `yaml:"name" json:"name"`
	}
	packageSpec struct {
		Package                  string           `yaml:"package" json:"package"`
		PackagePullSecrets       []localObjectRef `yaml:"packagePullSecrets,omitempty" json:"packagePullSecrets,omitempty"`
		SkipDependencyResolution *bool            `yaml:"skipDependencyResolution,omitempty" json:"skipDependencyResolution,omitempty"`
	}
	packageObject struct {
		APIVersion string      `yaml:"apiVersion" json:"apiVersion"`
		Kind       string      `yaml:"kind" json:"kind"`
		Metadata   objectMeta  `yaml:"metadata" json:"metadata"`
		Spec       packageSpec `yaml:"spec" json:"spec"`
	}
	imageMatch struct {
		Type   string `yaml:"type,omitempty" json:"type,omitempty"`
		Prefix string `yaml:"prefix" json:"prefix"`
	}
	imageRewrite struct {
		Prefix string `yaml:"prefix" json:"prefix"`
	}
	registryAuthentication struct {
		PullSecretRef localObjectRef `yaml:"pullSecretRef" json:"pullSecretRef"`
	}
	registryConfig struct {
		Authentication *registryAuthentication `yaml:"authentication,omitempty" json:"authentication,omitempty"`
	}
	imageConfigSpec struct {
		MatchImages  []imageMatch    `yaml:"matchImages" json:"matchImages"`
		Registry     *registryConfig `yaml:"registry,omitempty" json:"registry,omitempty"`
		RewriteImage *imageRewrite   `yaml:"rewriteImage,omitempty" json:"rewriteImage,omitempty"`
	}
	imageConfig struct {
		APIVersion string          `yaml:"apiVersion" json:"apiVersion"`
		Kind       string          `yaml:"kind" json:"kind"`
		Metadata   objectMeta      `yaml:"metadata" json:"metadata"`
		Spec       imageConfigSpec `yaml:"spec" json:"spec"`
	}
)

// managedBy labels every object RenderInstall writes (a function, not a
// package-level map, which an initialiser would build at every start).
func managedBy() map[string]string { return map[string]string{"app.kubernetes.io/managed-by": "ferry"} }

// crossplaneKind maps a format or Crossplane kind to the Crossplane kind.
func crossplaneKind(k string) string {
	switch k {
	case format.KindCrossplaneConfiguration, KindConfiguration:
		return KindConfiguration
	case format.KindCrossplaneProvider, KindProvider:
		return KindProvider
	case format.KindCrossplaneFunction, KindFunction:
		return KindFunction
	}
	return ""
}

// RenderOptions are the options of RenderInstallWith.
type RenderOptions struct {
	// PullSecrets names Secrets (of type kubernetes.io/dockerconfigjson, in
	// Crossplane's namespace) holding the mirror's credentials. Each package
	// object lists them all in spec.packagePullSecrets (pkg.crossplane.io/v1
	// PackageSpec, crossplane apis/pkg/v1/package_types.go), which
	// Crossplane uses to fetch the package and gives the runtime's service
	// account. The first one is also set on an ImageConfig named
	// ImageConfigPullName, matching every mirror prefix, as
	// spec.registry.authentication.pullSecretRef (crossplane
	// apis/pkg/v1beta1/image_config_types.go, RegistryAuthentication: one
	// secret per ImageConfig), so any other reference to the mirror (a
	// dependency resolved later, a rewritten reference) is pulled with it.
	PullSecrets []string
}

// RenderInstall is RenderInstallWith without options.
func RenderInstall(pkgs []InstallPackage, prefixes []PrefixRewrite) (map[string][]byte, error) {
	return RenderInstallWith(pkgs, prefixes, RenderOptions{})
}

// RenderInstallWith renders the files of the `crossplane/` install
// directory, keyed by file name inside it:
//   - "imageconfig.yaml": one ImageConfig (pkg.crossplane.io/v1beta1) per
//     source prefix, rewriting it to its mirror prefix, so references the
//     cluster still meets (a dependency, a runtime image) reach the mirror;
//     and, with pull secrets, one ImageConfig giving the mirror prefixes
//     the first pull secret;
//   - "NN-NAME.yaml" for each package, in the given (plan) order, NN
//     counting from 01: a pkg.crossplane.io/v1 Configuration, Provider or
//     Function named ObjectName(Source), the name Crossplane's package
//     manager would give it, with spec.package pinned to MIRROR@DIGEST,
//     spec.skipDependencyResolution true, since ferry installs every
//     dependency itself, and spec.packagePullSecrets from opts.
//
// With no prefixes, they are derived with MirrorPrefixes. A mirror prefix
// that itself starts with its source prefix is an error: Crossplane would
// rewrite the already mirrored references again. Two packages whose
// sources get the same object name (same repository path on two
// registries) are an error: Crossplane would make them one object too.
func RenderInstallWith(pkgs []InstallPackage, prefixes []PrefixRewrite, opts RenderOptions) (map[string][]byte, error) {
	secrets, err := pullSecretRefs(opts.PullSecrets)
	if err != nil {
		return nil, err
	}
	if prefixes == nil {
		prefixes = MirrorPrefixes(pkgs)
	}
	files := map[string][]byte{}
	width := max(2, len(strconv.Itoa(len(pkgs))))
	owner := map[string]string{}
	for i, p := range pkgs {
		kind := crossplaneKind(p.Kind)
		if kind == "" {
			return nil, fmt.Errorf("package %d (%s): kind %q is not a Crossplane Configuration, Provider or Function", i+1, p.Source, p.Kind)
		}
		if strings.TrimSpace(p.Source) == "" {
			return nil, fmt.Errorf("package %d (%s): no source repository", i+1, p.Mirror)
		}
		if p.Mirror == "" {
			return nil, fmt.Errorf("package %s: no mirror repository", p.Source)
		}
		if strings.Contains(p.Mirror, "@") {
			return nil, fmt.Errorf("package %s: mirror %q must be a repository without digest", p.Source, p.Mirror)
		}
		d, err := digest.Parse(p.Digest)
		if err != nil {
			return nil, fmt.Errorf("package %s: digest %q: %w", p.Source, p.Digest, err)
		}
		name := ObjectName(p.Source)
		if name == "" {
			return nil, fmt.Errorf("package %d: source %q gives no object name: Crossplane names a package by its repository path, which needs lower-case letters or digits", i+1, p.Source)
		}
		if prev, ok := owner[name]; ok {
			return nil, fmt.Errorf("packages %s and %s would both be named %q: Crossplane names a package by its repository path without registry, so it cannot install both", prev, p.Source, name)
		}
		owner[name] = p.Source
		skip := true
		obj := packageObject{
			APIVersion: PackageAPIVersion,
			Kind:       kind,
			Metadata:   objectMeta{Name: name, Labels: managedBy()},
			Spec: packageSpec{
				Package:                  p.Mirror + "@" + d.String(),
				PackagePullSecrets:       secrets,
				SkipDependencyResolution: &skip,
			},
		}
		b, err := marshalDocs([]any{obj})
		if err != nil {
			return nil, fmt.Errorf("package %s: %w", p.Source, err)
		}
		files[fmt.Sprintf("%0*d-%s.yaml", width, i+1, name)] = b
	}
	var pull []string
	if len(secrets) > 0 {
		pull = pullPrefixes(pkgs, prefixes)
	}
	if len(prefixes) > 0 || len(pull) > 0 {
		var pullSecret string
		if len(secrets) > 0 {
			pullSecret = secrets[0].Name
		}
		b, err := renderImageConfigs(prefixes, pull, pullSecret)
		if err != nil {
			return nil, err
		}
		files[ImageConfigFile] = b
	}
	return files, nil
}

// secretName is a DNS-1123 subdomain, the form of a Secret's name.
var secretName = lazyregexp.New(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// pullSecretRefs checks the pull secrets' names and drops repeats.
func pullSecretRefs(names []string) ([]localObjectRef, error) {
	var refs []localObjectRef
	seen := map[string]bool{}
	for _, n := range names {
		if len(n) > 253 || !secretName.MatchString(n) {
			return nil, fmt.Errorf("pull secret %q is not a Secret name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters", n)
		}
		if !seen[n] {
			seen[n] = true
			refs = append(refs, localObjectRef{Name: n})
		}
	}
	return refs, nil
}

// pullPrefixes returns the prefixes the pull-secret ImageConfig matches:
// every mirror prefix, and the mirror repository of each package no mirror
// prefix covers, sorted. Crossplane looks the pull secret up by the
// reference it pulls, after any rewrite (crossplane-runtime
// pkg/xpkg/client.go, CachedClient.Get: PullSecretFor(ctx, resolvedRef)),
// so it must match the mirror, not the source.
func pullPrefixes(pkgs []InstallPackage, prefixes []PrefixRewrite) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, pr := range prefixes {
		add(pr.Mirror)
	}
	for _, p := range pkgs {
		covered := false
		for _, pr := range prefixes {
			if pr.Mirror != "" && strings.HasPrefix(p.Mirror, pr.Mirror) {
				covered = true
				break
			}
		}
		if !covered {
			add(p.Mirror)
		}
	}
	sort.Strings(out)
	return out
}

// renderImageConfigs renders one rewriting ImageConfig per prefix and,
// when pull is not empty, one ImageConfig giving the pull prefixes
// pullSecret.
func renderImageConfigs(prefixes []PrefixRewrite, pull []string, pullSecret string) ([]byte, error) {
	docs := make([]any, 0, len(prefixes)+1)
	used := map[string]bool{}
	sources := map[string]string{}
	for _, pr := range prefixes {
		if pr.Source == "" || pr.Mirror == "" {
			return nil, fmt.Errorf("image prefix rewrite %q -> %q: both prefixes are required", pr.Source, pr.Mirror)
		}
		if m, ok := sources[pr.Source]; ok && m != pr.Mirror {
			return nil, fmt.Errorf("source prefix %q is rewritten to both %q and %q", pr.Source, m, pr.Mirror)
		}
		sources[pr.Source] = pr.Mirror
		if strings.HasPrefix(pr.Mirror, pr.Source) {
			return nil, fmt.Errorf("mirror prefix %q starts with source prefix %q: the ImageConfig would rewrite mirrored references again; mirror to another host or path", pr.Mirror, pr.Source)
		}
		name := ImageConfigName
		if len(prefixes) > 1 {
			name = DNSName(ImageConfigName + "-" + strings.TrimSuffix(pr.Source, "/"))
		}
		for n := 2; used[name]; n++ {
			name = DNSName(ImageConfigName + "-" + strings.TrimSuffix(pr.Source, "/") + "-" + strconv.Itoa(n))
		}
		used[name] = true
		docs = append(docs, imageConfig{
			APIVersion: ImageConfigAPIVersion,
			Kind:       "ImageConfig",
			Metadata:   objectMeta{Name: name, Labels: managedBy()},
			Spec: imageConfigSpec{
				MatchImages:  []imageMatch{{Type: "Prefix", Prefix: pr.Source}},
				RewriteImage: &imageRewrite{Prefix: pr.Mirror},
			},
		})
	}
	if len(pull) > 0 {
		name := ImageConfigPullName
		for n := 2; used[name]; n++ {
			name = DNSName(ImageConfigPullName + "-" + strconv.Itoa(n))
		}
		match := make([]imageMatch, len(pull))
		for i, p := range pull {
			match[i] = imageMatch{Type: "Prefix", Prefix: p}
		}
		docs = append(docs, imageConfig{
			APIVersion: ImageConfigAPIVersion,
			Kind:       "ImageConfig",
			Metadata:   objectMeta{Name: name, Labels: managedBy()},
			Spec: imageConfigSpec{
				MatchImages: match,
				Registry:    &registryConfig{Authentication: &registryAuthentication{PullSecretRef: localObjectRef{Name: pullSecret}}},
			},
		})
	}
	return marshalDocs(docs)
}

// marshalDocs renders docs as one YAML stream.
func marshalDocs(docs []any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, fmt.Errorf("encoding YAML: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding YAML: %w", err)
	}
	return buf.Bytes(), nil
}

// MirrorPrefixes derives the prefix rewrites for pkgs, sorted by source
// prefix. When a mirror repository ends with its source's path (the
// `--to HOST/PREFIX` layout), the rewrite is per registry:
// "xpkg.upbound.io/" -> "registry.internal/mirror/". Otherwise it is per
// repository, with a trailing "/" neither side, so it also matches the
// repository's tags and digests.
func MirrorPrefixes(pkgs []InstallPackage) []PrefixRewrite {
	seen := map[PrefixRewrite]bool{}
	var out []PrefixRewrite
	for _, p := range pkgs {
		if p.Source == "" || p.Mirror == "" {
			continue
		}
		pr := PrefixRewrite{Source: p.Source, Mirror: p.Mirror}
		if host, rest, ok := strings.Cut(p.Source, "/"); ok && strings.HasSuffix(p.Mirror, "/"+rest) {
			pr = PrefixRewrite{Source: host + "/", Mirror: strings.TrimSuffix(p.Mirror, rest)}
		}
		if !seen[pr] {
			seen[pr] = true
			out = append(out, pr)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Mirror < out[j].Mirror
	})
	return out
}

// DNSName derives a DNS-1123 label (lower-case letters, digits and '-',
// starting and ending with a letter or digit, at most 63 characters) from
// s, for metadata.name.
func DNSName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		sum := digest.FromString(s).Encoded()[:8]
		out = strings.TrimRight(out[:54], "-") + "-" + sum
	}
	if out == "" {
		out = "package"
	}
	return out
}
