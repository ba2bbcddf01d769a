package crossplane

import (
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/ociref"
)

// TestQualify pins Reader.Qualify to the examples of Crossplane's
// one-pager "Moving Package Dependencies"
// (design/one-pager-moving-packages.md, crossplane/crossplane PR #6014,
// section "Replicating a Package").
func TestQualify(t *testing.T) {
	tests := []struct {
		parent, dep, want string
	}{
		// The one-pager's Lock examples: configuration-example depends on
		// crossplane-contrib/provider-dependency-a and provider-dependency-b.
		{"xpkg.upbound.io/crossplane-contrib/configuration-example:v0.2.0", "crossplane-contrib/provider-dependency-a", "xpkg.upbound.io/crossplane-contrib/provider-dependency-a"},
		{"xpkg.upbound.io/crossplane-contrib/configuration-example:v0.2.0", "provider-dependency-b", "xpkg.upbound.io/crossplane-contrib/provider-dependency-b"},
		// ... replicated to pkg.acme.co/internal.
		{"pkg.acme.co/internal/configuration-example:v0.2.0", "crossplane-contrib/provider-dependency-a", "pkg.acme.co/crossplane-contrib/provider-dependency-a"},
		{"pkg.acme.co/internal/configuration-example:v0.2.0", "provider-dependency-b", "pkg.acme.co/internal/provider-dependency-b"},
		// The one-pager's provider-aws-s3 examples.
		{"xpkg.upbound.io/upbound/provider-aws-s3", "upbound/provider-family-aws", "xpkg.upbound.io/upbound/provider-family-aws"},
		{"xpkg.upbound.io/upbound/provider-aws-s3", "provider-family-aws", "xpkg.upbound.io/upbound/provider-family-aws"},
		// "Dependencies can still be fully qualified."
		{"pkg.acme.co/internal/configuration-example", "xpkg.upbound.io/crossplane-contrib/provider-nop:v0.4.0", "xpkg.upbound.io/crossplane-contrib/provider-nop:v0.4.0"},
		// Tags and digests written in the dependency are kept; nested
		// parent paths give their whole directory.
		{"localhost:5000/mirror/acme/app@" + dgA, "db:v1@" + dgB, "localhost:5000/mirror/acme/db:v1@" + dgB},
		{"ghcr.io/app", "db", "ghcr.io/db"},
	}
	for _, tt := range tests {
		t.Run(tt.parent+"+"+tt.dep, func(t *testing.T) {
			parent, err := ociref.Parse(tt.parent)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Reader{}.Qualify(tt.dep, parent)
			if err != nil {
				t.Fatalf("Qualify(%q, %s): %v", tt.dep, tt.parent, err)
			}
			if got.String() != tt.want {
				t.Errorf("Qualify(%q, %s) = %s, want %s", tt.dep, tt.parent, got, tt.want)
			}
		})
	}
}

func TestQualifyErrors(t *testing.T) {
	parent, err := ociref.Parse("pkg.acme.co/internal/app")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dep  string
		is   error
		want string
	}{
		{"", ociref.ErrEmpty, "dependency of pkg.acme.co/internal/app"},
		{"user:s3cret@ghcr.io/acme/db", nil, "credentials"},
		{"Provider-B", nil, "Provider-B"},
	}
	for _, tt := range tests {
		t.Run(tt.dep, func(t *testing.T) {
			_, err := Reader{}.Qualify(tt.dep, parent)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Qualify(%q) error %v, want one containing %q", tt.dep, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %v leaks the password", err)
			}
		})
	}
}
