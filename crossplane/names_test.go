package crossplane

import (
	"strings"
	"testing"
)

// TestToDNSLabel pins toDNSLabel to xpkg.ToDNSLabel with the cases of
// crossplane-runtime pkg/xpkg/name_test.go, TestToDNSLabel (ReplaceAll,
// TrimTo63, TrimTo63MinusDashes), and a few more of its rules.
func TestToDNSLabel(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		// crossplane-runtime pkg/xpkg/name_test.go, TestToDNSLabel.
		{"ReplaceAll", "-hi/my.name/is-", "hi-my-name-is"},
		{"TrimTo63", strings.Repeat("a", 64), strings.Repeat("a", 63)},
		{"TrimTo63MinusDashes", strings.Repeat("a", 60) + "----", strings.Repeat("a", 60)},
		// The rest of the function's rules.
		{"upper case and underscore dropped", "Acme_Corp/Provider", "cmeorp-rovider"},
		{"colon replaced", "localhost:5000/a", "localhost-5000-a"},
		{"dash runs kept", "a..b//c", "a--b--c"},
		{"byte 62 is not a dash", strings.Repeat("a", 62) + "-b", strings.Repeat("a", 62)},
		{"multi-byte rune skipped whole", "é/a", "a"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toDNSLabel(tt.in); got != tt.want {
				t.Errorf("toDNSLabel(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestObjectName pins ObjectName to how Crossplane names the package object
// of a dependency: xpkg.ToDNSLabel(ref.Context().RepositoryStr()) in
// crossplane internal/controller/pkg/resolver/reconciler.go, NewPackage
// (and internal/initializer/installer.go, buildPack).
func TestObjectName(t *testing.T) {
	tests := []struct {
		source, want string
	}{
		// crossplane internal/initializer/installer_test.go, TestInstaller:
		// p1/p1Name, c1/c1Name, f1/f1Name.
		{"xpkg.crossplane.io/crossplane/provider-aws:v1.16.0", "crossplane-provider-aws"},
		{"xpkg.crossplane.io/crossplane/getting-started-aws:v0.0.1", "crossplane-getting-started-aws"},
		{"xpkg.crossplane.io/crossplane/function-auto-ready:v0.0.1", "crossplane-function-auto-ready"},
		// The registry is dropped; the path is kept whole.
		{"xpkg.crossplane.io/crossplane-contrib/provider-nop", "crossplane-contrib-provider-nop"},
		{"xpkg.upbound.io/crossplane-contrib/provider-nop", "crossplane-contrib-provider-nop"},
		{"localhost:5000/fixtures/partial/app", "fixtures-partial-app"},
		{"127.0.0.1:5000/a/b/c/app", "a-b-c-app"},
		{"ghcr.io/app", "app"},
		// Tags and digests are not part of the repository.
		{"xpkg.crossplane.io/crossplane-contrib/provider-nop@" + dgA, "crossplane-contrib-provider-nop"},
		{"xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.4.0@" + dgA, "crossplane-contrib-provider-nop"},
		// Docker Hub's implicit namespace (go-containerregistry
		// Repository.RepositoryStr), also for a reference without registry.
		{"docker.io/provider-nop", "library-provider-nop"},
		{"index.docker.io/provider-nop", "library-provider-nop"},
		{"provider-nop", "library-provider-nop"},
		{"crossplane/provider-nop", "crossplane-provider-nop"},
		{"docker.io/crossplane/provider-nop", "crossplane-provider-nop"},
		// Only the first 63 bytes of the path count.
		{"ghcr.io/acme/" + strings.Repeat("provider-", 10), "acme-provider-provider-provider-provider-provider-provider-prov"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			got := ObjectName(tt.source)
			if got != tt.want {
				t.Errorf("ObjectName(%q) = %q, want %q", tt.source, got, tt.want)
			}
			if got != "" && (len(got) > 63 || !dns1123.MatchString(got)) {
				t.Errorf("ObjectName(%q) = %q is not a DNS-1123 label", tt.source, got)
			}
		})
	}
}
