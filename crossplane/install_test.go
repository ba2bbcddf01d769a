package crossplane

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/format"
)

// Shapes of the upstream objects (pkg.crossplane.io/v1 PackageSpec and
// pkg.crossplane.io/v1beta1 ImageConfig), with the fields upstream marks
// required not omitempty. Decoding is strict: a field upstream does not
// have fails the test.
type (
	upTypeMeta struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
	}
	upObjectMeta struct {
		Name        string            `yaml:"name"`
		Labels      map[string]string `yaml:"labels,omitempty"`
		Annotations map[string]string `yaml:"annotations,omitempty"`
	}
	upPackageSpec struct {
		Package                     string                   `yaml:"package"`
		RevisionActivationPolicy    *string                  `yaml:"revisionActivationPolicy,omitempty"`
		RevisionHistoryLimit        *int64                   `yaml:"revisionHistoryLimit,omitempty"`
		PackagePullPolicy           *string                  `yaml:"packagePullPolicy,omitempty"`
		IgnoreCrossplaneConstraints *bool                    `yaml:"ignoreCrossplaneConstraints,omitempty"`
		SkipDependencyResolution    *bool                    `yaml:"skipDependencyResolution,omitempty"`
		PackagePullSecrets          []upLocalObjectReference `yaml:"packagePullSecrets,omitempty"`
	}
	upLocalObjectReference struct {
		Name string `yaml:"name"`
	}
	upPackage struct {
		upTypeMeta `yaml:",inline"`
		Metadata   upObjectMeta  `yaml:"metadata"`
		Spec       upPackageSpec `yaml:"spec"`
	}
	upImageMatch struct {
		Type   string `yaml:"type,omitempty"`
		Prefix string `yaml:"prefix"`
	}
	upImageConfig struct {
		upTypeMeta `yaml:",inline"`
		Metadata   upObjectMeta `yaml:"metadata"`
		Spec       struct {
			MatchImages []upImageMatch `yaml:"matchImages"`
			Registry    *struct {
				Authentication *struct {
					PullSecretRef upLocalObjectReference `yaml:"pullSecretRef"`
				} `yaml:"authentication,omitempty"`
			} `yaml:"registry,omitempty"`
			RewriteImage *struct {
				Prefix string `yaml:"prefix"`
			} `yaml:"rewriteImage,omitempty"`
		} `yaml:"spec"`
	}
)

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// decodeAll decodes every document of a stream strictly into new values.
func decodeAll[T any](t *testing.T, b []byte) []T {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var out []T
	for {
		var v T
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decoding %s: %v", b, err)
		}
		out = append(out, v)
	}
}

const (
	dgA = "sha256:ecc25c121431dfc7058754427f97c034ecde26d4aafa0da16d258090e0443904"
	dgB = "sha256:4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c4f1c"
	dgC = "sha256:6fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb06fb0"
)

func TestRenderInstall(t *testing.T) {
	type pkgWant struct {
		file, kind, name, pkg string
	}
	tests := []struct {
		name     string
		pkgs     []InstallPackage
		prefixes []PrefixRewrite
		wantIC   []PrefixRewrite // ImageConfig documents in order
		wantIDs  []string        // their metadata.name
		want     []pkgWant
	}{
		{
			name: "plan order, derived prefix",
			pkgs: []InstallPackage{
				{Kind: format.KindCrossplaneProvider, Name: "provider-nop", Source: "xpkg.upbound.io/crossplane-contrib/provider-nop", Mirror: "registry.internal/mirror/crossplane-contrib/provider-nop", Digest: dgA},
				{Kind: format.KindCrossplaneFunction, Name: "function-patch-and-transform", Source: "xpkg.upbound.io/crossplane-contrib/function-patch-and-transform", Mirror: "registry.internal/mirror/crossplane-contrib/function-patch-and-transform", Digest: dgB},
				{Kind: format.KindCrossplaneConfiguration, Name: "Platform_Ref.AWS", Source: "xpkg.upbound.io/acme/platform", Mirror: "registry.internal/mirror/acme/platform", Digest: dgC},
			},
			wantIC:  []PrefixRewrite{{Source: "xpkg.upbound.io/", Mirror: "registry.internal/mirror/"}},
			wantIDs: []string{"ferry-mirror"},
			want: []pkgWant{
				{"01-crossplane-contrib-provider-nop.yaml", "Provider", "crossplane-contrib-provider-nop", "registry.internal/mirror/crossplane-contrib/provider-nop@" + dgA},
				{"02-crossplane-contrib-function-patch-and-transform.yaml", "Function", "crossplane-contrib-function-patch-and-transform", "registry.internal/mirror/crossplane-contrib/function-patch-and-transform@" + dgB},
				{"03-acme-platform.yaml", "Configuration", "acme-platform", "registry.internal/mirror/acme/platform@" + dgC},
			},
		},
		{
			name: "two source registries, crossplane kinds, same and missing meta names",
			pkgs: []InstallPackage{
				{Kind: KindProvider, Name: "provider-x", Source: "ghcr.io/old-org/provider-x", Mirror: "127.0.0.1:5000/m/old-org/provider-x", Digest: dgA},
				{Kind: KindProvider, Name: "provider-x", Source: "xpkg.upbound.io/new-org/provider-x", Mirror: "127.0.0.1:5000/m/new-org/provider-x", Digest: dgB},
				{Kind: KindConfiguration, Source: "xpkg.upbound.io/acme/app", Mirror: "127.0.0.1:5000/m/acme/app", Digest: dgC},
			},
			wantIC: []PrefixRewrite{
				{Source: "ghcr.io/", Mirror: "127.0.0.1:5000/m/"},
				{Source: "xpkg.upbound.io/", Mirror: "127.0.0.1:5000/m/"},
			},
			wantIDs: []string{"ferry-mirror-ghcr-io", "ferry-mirror-xpkg-upbound-io"},
			want: []pkgWant{
				{"01-old-org-provider-x.yaml", "Provider", "old-org-provider-x", "127.0.0.1:5000/m/old-org/provider-x@" + dgA},
				{"02-new-org-provider-x.yaml", "Provider", "new-org-provider-x", "127.0.0.1:5000/m/new-org/provider-x@" + dgB},
				{"03-acme-app.yaml", "Configuration", "acme-app", "127.0.0.1:5000/m/acme/app@" + dgC},
			},
		},
		{
			name: "explicit prefixes, mirror not mirroring paths",
			pkgs: []InstallPackage{
				{Kind: KindFunction, Name: "fn", Source: "xpkg.upbound.io/acme/fn", Mirror: "registry.internal/flat/fn", Digest: dgA},
			},
			prefixes: []PrefixRewrite{{Source: "xpkg.upbound.io/acme/fn", Mirror: "registry.internal/flat/fn"}},
			wantIC:   []PrefixRewrite{{Source: "xpkg.upbound.io/acme/fn", Mirror: "registry.internal/flat/fn"}},
			wantIDs:  []string{"ferry-mirror"},
			want:     []pkgWant{{"01-acme-fn.yaml", "Function", "acme-fn", "registry.internal/flat/fn@" + dgA}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := RenderInstall(tt.pkgs, tt.prefixes)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for n := range files {
				names = append(names, n)
			}
			sort.Strings(names)
			wantNames := []string{ImageConfigFile}
			for _, w := range tt.want {
				wantNames = append(wantNames, w.file)
			}
			sort.Strings(wantNames)
			if !reflect.DeepEqual(names, wantNames) {
				t.Fatalf("files %v, want %v", names, wantNames)
			}

			ics := decodeAll[upImageConfig](t, files[ImageConfigFile])
			if len(ics) != len(tt.wantIC) {
				t.Fatalf("%d ImageConfigs, want %d:\n%s", len(ics), len(tt.wantIC), files[ImageConfigFile])
			}
			for i, ic := range ics {
				if ic.APIVersion != "pkg.crossplane.io/v1beta1" || ic.Kind != "ImageConfig" {
					t.Errorf("ImageConfig %d: %s %s", i, ic.APIVersion, ic.Kind)
				}
				if ic.Metadata.Name != tt.wantIDs[i] || !dns1123.MatchString(ic.Metadata.Name) {
					t.Errorf("ImageConfig %d: name %q, want %q", i, ic.Metadata.Name, tt.wantIDs[i])
				}
				if len(ic.Spec.MatchImages) != 1 || ic.Spec.MatchImages[0].Type != "Prefix" || ic.Spec.MatchImages[0].Prefix != tt.wantIC[i].Source {
					t.Errorf("ImageConfig %d: matchImages %+v, want Prefix %q", i, ic.Spec.MatchImages, tt.wantIC[i].Source)
				}
				if ic.Spec.RewriteImage == nil || ic.Spec.RewriteImage.Prefix != tt.wantIC[i].Mirror {
					t.Errorf("ImageConfig %d: rewriteImage %+v, want %q", i, ic.Spec.RewriteImage, tt.wantIC[i].Mirror)
				}
				if ic.Spec.Registry != nil {
					t.Errorf("ImageConfig %d: registry %+v without pull secrets", i, ic.Spec.Registry)
				}
			}

			for _, w := range tt.want {
				objs := decodeAll[upPackage](t, files[w.file])
				if len(objs) != 1 {
					t.Fatalf("%s: %d documents, want 1", w.file, len(objs))
				}
				o := objs[0]
				if o.APIVersion != "pkg.crossplane.io/v1" || o.Kind != w.kind {
					t.Errorf("%s: %s %s, want pkg.crossplane.io/v1 %s", w.file, o.APIVersion, o.Kind, w.kind)
				}
				if o.Metadata.Name != w.name || !dns1123.MatchString(o.Metadata.Name) {
					t.Errorf("%s: name %q, want %q", w.file, o.Metadata.Name, w.name)
				}
				if o.Spec.Package != w.pkg {
					t.Errorf("%s: package %q, want %q", w.file, o.Spec.Package, w.pkg)
				}
				if o.Spec.SkipDependencyResolution == nil || !*o.Spec.SkipDependencyResolution {
					t.Errorf("%s: skipDependencyResolution not true", w.file)
				}
				if o.Spec.PackagePullSecrets != nil {
					t.Errorf("%s: packagePullSecrets %v without pull secrets", w.file, o.Spec.PackagePullSecrets)
				}
			}

			again, err := RenderInstall(tt.pkgs, tt.prefixes)
			if err != nil || !reflect.DeepEqual(again, files) {
				t.Errorf("second render differs (err %v)", err)
			}
		})
	}
}

func TestRenderInstallErrors(t *testing.T) {
	ok := InstallPackage{Kind: KindProvider, Name: "p", Source: "xpkg.upbound.io/a/p", Mirror: "registry.internal/m/a/p", Digest: dgA}
	with := func(f func(*InstallPackage)) []InstallPackage {
		p := ok
		f(&p)
		return []InstallPackage{p}
	}
	tests := []struct {
		name     string
		pkgs     []InstallPackage
		prefixes []PrefixRewrite
		want     string
	}{
		{"porter kind", with(func(p *InstallPackage) { p.Kind = format.KindPorterBundle }), nil, "not a Crossplane"},
		{"no mirror", with(func(p *InstallPackage) { p.Mirror = "" }), []PrefixRewrite{}, "no mirror"},
		{"mirror with digest", with(func(p *InstallPackage) { p.Mirror += "@" + dgA }), []PrefixRewrite{}, "without digest"},
		{"bad digest", with(func(p *InstallPackage) { p.Digest = "v1.0.0" }), nil, `digest "v1.0.0"`},
		{"mirror under source prefix", []InstallPackage{ok}, []PrefixRewrite{{Source: "registry.internal/", Mirror: "registry.internal/m/"}}, "rewrite mirrored references again"},
		{"empty prefix", []InstallPackage{ok}, []PrefixRewrite{{Source: "", Mirror: "registry.internal/m/"}}, "both prefixes"},
		{"conflicting prefixes", []InstallPackage{ok}, []PrefixRewrite{{Source: "a.io/", Mirror: "m.io/1/"}, {Source: "a.io/", Mirror: "m.io/2/"}}, "rewritten to both"},
		// Crossplane names a package by its repository path alone: the same
		// path on two registries is one object.
		{"same object name", []InstallPackage{ok, {Kind: KindProvider, Name: "p", Source: "ghcr.io/a/p", Mirror: "registry.internal/m2/a/p", Digest: dgB}}, nil,
			`packages xpkg.upbound.io/a/p and ghcr.io/a/p would both be named "a-p"`},
		{"no source", with(func(p *InstallPackage) { p.Source = "" }), nil, "no source repository"},
		{"upper-case source", with(func(p *InstallPackage) { p.Source = "ghcr.io/ACME/P" }), nil, "gives no object name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderInstall(tt.pkgs, tt.prefixes)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRenderInstallPullSecrets(t *testing.T) {
	nop := InstallPackage{Kind: KindProvider, Name: "provider-nop", Source: "xpkg.crossplane.io/crossplane-contrib/provider-nop", Mirror: "registry.internal/mirror/crossplane-contrib/provider-nop", Digest: dgA}
	tests := []struct {
		name     string
		pkgs     []InstallPackage
		prefixes []PrefixRewrite
		secrets  []string
		files    map[string]string
	}{
		{
			name:    "one secret, derived prefix",
			pkgs:    []InstallPackage{nop},
			secrets: []string{"mirror-creds"},
			files: map[string]string{
				ImageConfigFile: `apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: ferry-mirror
  labels:
    app.kubernetes.io/managed-by: ferry
spec:
  matchImages:
    - type: Prefix
      prefix: xpkg.crossplane.io/
  rewriteImage:
    prefix: registry.internal/mirror/
---
apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: ferry-mirror-pull
  labels:
    app.kubernetes.io/managed-by: ferry
spec:
  matchImages:
    - type: Prefix
      prefix: registry.internal/mirror/
  registry:
    authentication:
      pullSecretRef:
        name: mirror-creds
`,
				"01-crossplane-contrib-provider-nop.yaml": `apiVersion: pkg.crossplane.io/v1
kind: Provider
metadata:
  name: crossplane-contrib-provider-nop
  labels:
    app.kubernetes.io/managed-by: ferry
spec:
  package: registry.internal/mirror/crossplane-contrib/provider-nop@` + dgA + `
  packagePullSecrets:
    - name: mirror-creds
  skipDependencyResolution: true
`,
			},
		},
		{
			// Every secret goes to the package; an ImageConfig holds one, the
			// first. No rewrite: the pull ImageConfig matches the package's
			// mirror repository.
			name:     "two secrets and a repeat, no rewrite",
			pkgs:     []InstallPackage{nop},
			prefixes: []PrefixRewrite{},
			secrets:  []string{"mirror-creds", "other.creds", "mirror-creds"},
			files: map[string]string{
				ImageConfigFile: `apiVersion: pkg.crossplane.io/v1beta1
kind: ImageConfig
metadata:
  name: ferry-mirror-pull
  labels:
    app.kubernetes.io/managed-by: ferry
spec:
  matchImages:
    - type: Prefix
      prefix: registry.internal/mirror/crossplane-contrib/provider-nop
  registry:
    authentication:
      pullSecretRef:
        name: mirror-creds
`,
				"01-crossplane-contrib-provider-nop.yaml": `apiVersion: pkg.crossplane.io/v1
kind: Provider
metadata:
  name: crossplane-contrib-provider-nop
  labels:
    app.kubernetes.io/managed-by: ferry
spec:
  package: registry.internal/mirror/crossplane-contrib/provider-nop@` + dgA + `
  packagePullSecrets:
    - name: mirror-creds
    - name: other.creds
  skipDependencyResolution: true
`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files, err := RenderInstallWith(tt.pkgs, tt.prefixes, RenderOptions{PullSecrets: tt.secrets})
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for n, b := range files {
				got[n] = string(b)
			}
			if !reflect.DeepEqual(got, tt.files) {
				t.Errorf("files:\n%v\nwant:\n%v", got, tt.files)
			}
			// Strict decoding against upstream's shapes.
			for _, ic := range decodeAll[upImageConfig](t, files[ImageConfigFile]) {
				if ic.Metadata.Name == ImageConfigPullName && (ic.Spec.Registry == nil || ic.Spec.Registry.Authentication == nil || ic.Spec.Registry.Authentication.PullSecretRef.Name != tt.secrets[0]) {
					t.Errorf("pull ImageConfig %+v", ic.Spec)
				}
			}
			for n := range files {
				if n != ImageConfigFile {
					decodeAll[upPackage](t, files[n])
				}
			}
		})
	}
}

func TestRenderInstallPullSecretErrors(t *testing.T) {
	ok := InstallPackage{Kind: KindProvider, Name: "p", Source: "xpkg.upbound.io/a/p", Mirror: "registry.internal/m/a/p", Digest: dgA}
	for _, bad := range []string{"", "Creds", "creds_1", "-creds", strings.Repeat("a", 254)} {
		t.Run(bad, func(t *testing.T) {
			_, err := RenderInstallWith([]InstallPackage{ok}, nil, RenderOptions{PullSecrets: []string{bad}})
			if err == nil || !strings.Contains(err.Error(), "is not a Secret name") {
				t.Errorf("error %v, want one naming a bad Secret name", err)
			}
		})
	}
}

func TestDNSName(t *testing.T) {
	long := strings.Repeat("very-long-name-", 10)
	tests := []struct{ in, want string }{
		{"provider-nop", "provider-nop"},
		{"Platform_Ref.AWS", "platform-ref-aws"},
		{"--x--", "x"},
		{"@@@", "package"},
		{long, DNSName(long)},
	}
	for _, tt := range tests {
		got := DNSName(tt.in)
		if got != tt.want || len(got) > 63 || !dns1123.MatchString(got) {
			t.Errorf("DNSName(%q) = %q, want %q (a DNS-1123 label)", tt.in, got, tt.want)
		}
	}
	if DNSName(long) == DNSName(long+"x") {
		t.Errorf("truncated names collide")
	}
}
