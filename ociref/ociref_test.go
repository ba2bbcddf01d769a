package ociref_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/ociref"
)

const dgst = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParse(t *testing.T) {
	tests := []struct {
		in       string
		registry string
		repo     string
		tag      string
		digest   string
	}{
		{"ghcr.io/acme/app:v1.2.0", "ghcr.io", "acme/app", "v1.2.0", ""},
		{"ghcr.io/acme/app", "ghcr.io", "acme/app", "", ""},
		{"ghcr.io/acme/app@" + dgst, "ghcr.io", "acme/app", "", dgst},
		{"ghcr.io/acme/app:v1@" + dgst, "ghcr.io", "acme/app", "v1", dgst},
		{"localhost:5000/acme/app:1.2.1_build.5", "localhost:5000", "acme/app", "1.2.1_build.5", ""},
		{"localhost/app", "localhost", "app", "", ""},
		{"127.0.0.1:5000/a/b/c/d:v1", "127.0.0.1:5000", "a/b/c/d", "v1", ""},
		{"[::1]:5000/acme/app", "[::1]:5000", "acme/app", "", ""},
		{"pkg.acme.co/internal/configuration-example", "pkg.acme.co", "internal/configuration-example", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ociref.Parse(tt.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if r.Registry != tt.registry || r.Repository != tt.repo || r.Tag != tt.tag || r.Digest.String() != tt.digest {
				t.Fatalf("Parse(%q) = %+v, want registry %q repo %q tag %q digest %q", tt.in, r, tt.registry, tt.repo, tt.tag, tt.digest)
			}
			if got := r.String(); got != tt.in {
				t.Errorf("String() = %q, want %q", got, tt.in)
			}
			if got := r.Repo(); got != tt.registry+"/"+tt.repo {
				t.Errorf("Repo() = %q", got)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // substring of the error
		// secret must not appear in the error.
		secret string
	}{
		{"no host", "acme/app:v1", "no registry host", ""},
		{"name only", "app", "no registry host", ""},
		{"docker hub style", "library/nginx", "no registry host", ""},
		{"empty", "", "no registry host", ""},
		{"userinfo", "user:s3cret@ghcr.io/acme/app:v1", "credentials", "s3cret"},
		{"user only", "robot@ghcr.io/acme/app", "credentials", "robot"},
		{"password with slash", "user:pa/ss@ghcr.io/acme/app", "credentials", "pa/ss"},
		{"password with slash and digest", "user:pa/ss@ghcr.io/acme/app@" + dgst, "credentials", "pa/ss"},
		{"userinfo and port", "user:s3cret@localhost:5000", "credentials", "s3cret"},
		{"scheme with userinfo", "https://user:s3cret@ghcr.io/acme/app", "credentials", "s3cret"},
		{"scheme", "ftp://ghcr.io/acme/app", "URL scheme", ""},
		{"upper case", "ghcr.io/Acme/App:v1", "", ""},
		{"bad digest", "ghcr.io/acme/app@sha256:abc", "", ""},
		{"bad tag", "ghcr.io/acme/app:v1+build", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ociref.Parse(tt.in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded", tt.in)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse(%q) = %v, want it to mention %q", tt.in, err, tt.want)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("Parse(%q) error echoes the credentials: %v", tt.in, err)
			}
		})
	}
}

func TestQualify(t *testing.T) {
	parent := func(s string) ociref.Reference {
		r, err := ociref.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		parent string
		dep    string
		want   string
	}{
		// PRODUCT.md's example.
		{"pkg.acme.co/internal/configuration-example", "provider-b", "pkg.acme.co/internal/provider-b"},
		{"pkg.acme.co/internal/configuration-example", "crossplane-contrib/provider-a", "pkg.acme.co/crossplane-contrib/provider-a"},
		{"pkg.acme.co/internal/configuration-example:v1", "provider-b:v1.2.0", "pkg.acme.co/internal/provider-b:v1.2.0"},
		{"pkg.acme.co/internal/configuration-example", "provider-b@" + dgst, "pkg.acme.co/internal/provider-b@" + dgst},
		// Full references are kept whatever the parent.
		{"pkg.acme.co/internal/configuration-example", "xpkg.upbound.io/upbound/provider-aws:v1", "xpkg.upbound.io/upbound/provider-aws:v1"},
		{"pkg.acme.co/internal/configuration-example", "localhost:5000/acme/db:v1", "localhost:5000/acme/db:v1"},
		{"pkg.acme.co/internal/configuration-example", "localhost/acme/db", "localhost/acme/db"},
		{"pkg.acme.co/internal/configuration-example", "  ghcr.io/acme/db  ", "ghcr.io/acme/db"},
		// A parent on localhost:5000 and nested paths.
		{"localhost:5000/fixtures/partial/app:v1.0.0", "util", "localhost:5000/fixtures/partial/util"},
		{"localhost:5000/fixtures/partial/app:v1.0.0", "fixtures/partial/lib:v1.0.0", "localhost:5000/fixtures/partial/lib:v1.0.0"},
		{"127.0.0.1:5000/a/b/c/app", "lib", "127.0.0.1:5000/a/b/c/lib"},
		{"127.0.0.1:5000/a/b/c/app", "x/y/z", "127.0.0.1:5000/x/y/z"},
		// A parent at the registry's top level.
		{"ghcr.io/app", "db", "ghcr.io/db"},
		{"ghcr.io/app", "acme/db:v2", "ghcr.io/acme/db:v2"},
	}
	for _, tt := range tests {
		t.Run(tt.parent+"+"+tt.dep, func(t *testing.T) {
			got, err := ociref.Qualify(tt.dep, parent(tt.parent))
			if err != nil {
				t.Fatalf("Qualify(%q, %s): %v", tt.dep, tt.parent, err)
			}
			if got.String() != tt.want {
				t.Errorf("Qualify(%q, %s) = %s, want %s", tt.dep, tt.parent, got, tt.want)
			}
			if partial := ociref.IsPartial(strings.TrimSpace(tt.dep)); partial == strings.HasPrefix(strings.TrimSpace(tt.dep), got.Registry+"/") {
				t.Errorf("IsPartial(%q) = %v", tt.dep, partial)
			}
		})
	}
}

func TestQualifyRejects(t *testing.T) {
	parent, err := ociref.Parse("pkg.acme.co/internal/app")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dep    string
		secret string
	}{
		{"", ""},
		{"   ", ""},
		{"user:s3cret@ghcr.io/acme/db", "s3cret"},
		{"Provider-B", ""},
		{"ftp://ghcr.io/acme/db", ""},
	}
	for _, tt := range tests {
		t.Run(tt.dep, func(t *testing.T) {
			_, err := ociref.Qualify(tt.dep, parent)
			if err == nil {
				t.Fatalf("Qualify(%q) succeeded", tt.dep)
			}
			if strings.TrimSpace(tt.dep) == "" && !errors.Is(err, ociref.ErrEmpty) {
				t.Errorf("Qualify(%q) = %v, want ErrEmpty", tt.dep, err)
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("Qualify(%q) error echoes the credentials: %v", tt.dep, err)
			}
		})
	}
}

func TestReferenceHelpers(t *testing.T) {
	r, err := ociref.Parse("ghcr.io/acme/app:v1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Object() != "v1" {
		t.Errorf("Object() = %q, want the tag", r.Object())
	}
	pinned := r.WithDigest(digest.Digest(dgst))
	if pinned.Object() != dgst || pinned.String() != "ghcr.io/acme/app:v1@"+dgst {
		t.Errorf("WithDigest: %s, object %s", pinned, pinned.Object())
	}
	if got := pinned.WithTag("v2"); got.String() != "ghcr.io/acme/app:v2" {
		t.Errorf("WithTag cleared nothing: %s", got)
	}
	for _, c := range []struct {
		s    string
		want bool
	}{{"ghcr.io", true}, {"localhost", true}, {"localhost:5000", true}, {"127.0.0.1", true}, {"acme", false}, {"crossplane-contrib", false}} {
		if got := ociref.IsRegistry(c.s); got != c.want {
			t.Errorf("IsRegistry(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func TestParseNormalized(t *testing.T) {
	tests := []struct {
		in, registry, want string
	}{
		// distribution/reference's normalisation, as Porter applies it.
		{"getporter/mysql:v0.1.3", "", "docker.io/getporter/mysql:v0.1.3"},
		{"alpine", "", "docker.io/library/alpine"},
		{"alpine:3.20", "docker.io", "docker.io/library/alpine:3.20"},
		{"docker.io/alpine", "", "docker.io/library/alpine"},
		{"ghcr.io/acme/app:v1", "", "ghcr.io/acme/app:v1"},
		{"localhost:5000/app", "", "localhost:5000/app"},
		// go-containerregistry's name.WithDefaultRegistry, as Crossplane applies it.
		{"crossplane-contrib/provider-nop:v0.2.1", "xpkg.crossplane.io", "xpkg.crossplane.io/crossplane-contrib/provider-nop:v0.2.1"},
		{"provider-nop", "xpkg.crossplane.io", "xpkg.crossplane.io/provider-nop"},
		{"xpkg.upbound.io/a/b", "xpkg.crossplane.io", "xpkg.upbound.io/a/b"},
	}
	for _, tt := range tests {
		got, err := ociref.ParseNormalized(tt.in, tt.registry)
		if err != nil {
			t.Errorf("ociref.ParseNormalized(%q, %q): %v", tt.in, tt.registry, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("ociref.ParseNormalized(%q, %q) = %s, want %s", tt.in, tt.registry, got, tt.want)
		}
	}
	for _, bad := range []string{"", "user:pw@ghcr.io/a/b", "UPPER/case"} {
		if _, err := ociref.ParseNormalized(bad, ""); err == nil {
			t.Errorf("ociref.ParseNormalized(%q): no error", bad)
		}
	}
}

func TestParseURLSourceAndOCIScheme(t *testing.T) {
	for _, tc := range []struct {
		in                  string
		registry, repo, tag string
		digest              string
		wantErr             bool
	}{
		{in: "https://charts.example.com/stable/nginx:15.0.1", registry: "https://charts.example.com", repo: "stable/nginx", tag: "15.0.1"},
		{in: "http://127.0.0.1:8080/nginx", registry: "http://127.0.0.1:8080", repo: "nginx"},
		{in: "https://charts.example.com/nginx:1.0.0_build.1", registry: "https://charts.example.com", repo: "nginx", tag: "1.0.0_build.1"},
		{in: "https://charts.example.com/nginx@sha256:" + strings.Repeat("a", 64), registry: "https://charts.example.com", repo: "nginx", digest: "sha256:" + strings.Repeat("a", 64)},
		{in: "oci://ghcr.io/acme/charts/web:1.2.3", registry: "ghcr.io", repo: "acme/charts/web", tag: "1.2.3"},
		{in: "kudo+https://kudo.example.com/v1/kafka:2.5.0_1.3.1", registry: "kudo+https://kudo.example.com", repo: "v1/kafka", tag: "2.5.0_1.3.1"},
		{in: "https://charts.example.com/", wantErr: true},
		{in: "https://user:pw@charts.example.com/nginx", wantErr: true},
		{in: "ftp://charts.example.com/nginx", wantErr: true},
		{in: "https://charts.example.com/nginx?x=1", wantErr: true},
	} {
		r, err := ociref.Parse(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tc.in, r)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("Parse(%q): error leaks the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if r.Registry != tc.registry || r.Repository != tc.repo || r.Tag != tc.tag || string(r.Digest) != tc.digest {
			t.Errorf("Parse(%q) = %+v", tc.in, r)
		}
		if n, err := ociref.ParseNormalized(tc.in, ""); err != nil || n != r {
			t.Errorf("ParseNormalized(%q) = %+v, %v; Parse gave %+v", tc.in, n, err, r)
		}
		if want := strings.TrimPrefix(tc.in, ociref.OCIScheme); r.String() != want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, r.String(), want)
		}
	}
}
