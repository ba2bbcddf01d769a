package reference_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	upstream "github.com/distribution/reference"
	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/forked/reference"
)

// parityInputs are references of every shape distribution/reference's own
// tests (reference_test.go, normalize_test.go, regexp_test.go) cover:
// valid and invalid, docker.io normalisation, digests, long names,
// uppercase, ports, localhost, IPv6, identifiers.
var parityInputs = func() []string {
	const hex64 = "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	in := []string{
		"", ":", "@", "/", "//", "a", "A", "test", "test_com", "test.com", "test.com:",
		"test.com:5000", "test.com:tag", "test:5000/repo", "test:5000/repo:tag",
		"test:5000/repo@sha256:" + hex64, "test:5000/repo:tag@sha256:" + hex64,
		"test.com/repo:tag", "test.com/repo/sub:tag", "lowercase:Uppercase",
		"Uppercase:tag", "docker.io/Uppercase", "UPPERCASE/repo", "foo/Bar:latest",
		"ubuntu", "ubuntu:latest", "ubuntu:22.04", "library/ubuntu", "docker.io/ubuntu",
		"docker.io/library/ubuntu", "index.docker.io/ubuntu", "index.docker.io/library/ubuntu:18.04",
		"registry-1.docker.io/library/ubuntu", "docker.io/foo/bar", "foo/bar", "foo/bar:tag",
		"busybox@sha256:" + hex64, "busybox:latest@sha256:" + hex64,
		"busybox@sha256:abc", "busybox@sha256:" + strings.ToUpper(hex64),
		"busybox@sha512:" + hex64 + hex64, "busybox@md5:" + hex64[:32],
		"busybox@sha256+b64:" + hex64, "busybox@@sha256:" + hex64,
		"localhost", "localhost/foo", "localhost:5000/foo", "localhost:5000/foo:bar",
		"localhost:5000", "localhost:5000:tag", "localhost/foo@sha256:" + hex64,
		"127.0.0.1:5000/foo", "127.0.0.1/foo/bar:baz", "1.2.3.4.5/x",
		"[::1]/foo", "[::1]:5000/foo:bar", "[2001:db8::1]:5000/repo", "[2001:db8::1]/repo@sha256:" + hex64,
		"[fe80::1%eth0]:5000/repo", "[::1]", "[::1]:5000", "::1/foo", "[zz::1]/foo",
		"ghcr.io/org/repo/sub/sub2:v1.2.3", "ghcr.io/org/repo.name_with__sep---dash:t",
		"a/b/c/d/e/f/g", "a..b/c", "a__b", "a___b", "a-b", "-a", "a-", "a/-b", "a/b-",
		"foo.bar.baz/xyz", "foo-bar.com:443/xyz", "foo_bar.com:8080/x", "xn--n3h.com/repo",
		"host:port/repo", "host:-1/repo", "sub-dom1.foo.com/bar/baz/quux",
		"sub-dom1.foo.com/bar/baz/quux:some-long-tag", "b.gcr.io/test.example.com/my-app:test.example.com",
		"repo:" + strings.Repeat("t", 128), "repo:" + strings.Repeat("t", 129), "repo:.tag", "repo:-tag", "repo:_tag",
		"repo:tag:tag", "repo@tag", hex64, "sha256:" + hex64, "docker.io/" + hex64,
		hex64[:63], "foo/" + hex64, "a/" + strings.Repeat("a", 253), "a/" + strings.Repeat("a", 254),
		strings.Repeat("a", 255), strings.Repeat("a", 256), "docker.io/" + strings.Repeat("a", 246),
		strings.Repeat("a/", 127) + "a", strings.Repeat("a/", 128) + "a",
		"foo/bar@sha256:" + hex64 + "0", "foo bar", "foo\tbar", "foo/bar ", " foo", "éa", "foo/bar:ta g",
		"example.com/a/b@sha256:" + hex64, "example.com:80/a:b@sha256:" + hex64,
	}
	return in
}()

type familiar interface{ Familiar() reference.Named }

// describeFork writes everything the copy's exported API says of s.
func describeFork(s string) string {
	var b strings.Builder
	put := func(what string, v any, err error) {
		if err != nil {
			fmt.Fprintf(&b, "%s: error %q\n", what, err.Error())
			return
		}
		fmt.Fprintf(&b, "%s: %v\n", what, v)
	}
	named := func(what string, n reference.Named) {
		fmt.Fprintf(&b, "%s: %T %q name=%q domain=%q path=%q familiarName=%q familiarString=%q nameOnly=%v tagNameOnly=%q trimmed=%q\n",
			what, n, n.String(), n.Name(), reference.Domain(n), reference.Path(n), reference.FamiliarName(n),
			reference.FamiliarString(n), reference.IsNameOnly(n), reference.TagNameOnly(n).String(), reference.TrimNamed(n).String())
		if t, ok := n.(reference.Tagged); ok {
			fmt.Fprintf(&b, "  tag=%q\n", t.Tag())
		}
		if d, ok := n.(reference.Digested); ok {
			fmt.Fprintf(&b, "  digest=%q\n", d.Digest())
		}
		if t, err := reference.WithTag(n, "v1.0"); err == nil {
			fmt.Fprintf(&b, "  withTag=%q\n", t.String())
		}
		if t, err := reference.WithTag(n, "-bad"); err != nil {
			fmt.Fprintf(&b, "  withBadTag=%q\n", err.Error())
		} else {
			fmt.Fprintf(&b, "  withBadTag ok %q\n", t.String())
		}
		c, err := reference.WithDigest(n, digest.FromString(s))
		put("  withDigest", c, err)
		m, err := reference.FamiliarMatch("*/*", n)
		put("  familiarMatch", m, err)
		j, err := json.Marshal(reference.AsField(n))
		put("  asField", string(j), err)
	}
	n, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		put("ParseNormalizedNamed", nil, err)
	} else {
		named("ParseNormalizedNamed", n)
	}
	n, err = reference.ParseNamed(s)
	if err != nil {
		put("ParseNamed", nil, err)
	} else {
		named("ParseNamed", n)
	}
	n, err = reference.ParseDockerRef(s)
	if err != nil {
		put("ParseDockerRef", nil, err)
	} else {
		named("ParseDockerRef", n)
	}
	r, err := reference.ParseAnyReference(s)
	if err != nil {
		put("ParseAnyReference", nil, err)
	} else {
		fmt.Fprintf(&b, "ParseAnyReference: %T %q familiar=%q\n", r, r.String(), reference.FamiliarString(r))
	}
	r, err = reference.Parse(s)
	if err != nil {
		put("Parse", nil, err)
	} else {
		fmt.Fprintf(&b, "Parse: %T %q familiar=%q\n", r, r.String(), reference.FamiliarString(r))
		if f, ok := r.(familiar); ok {
			fmt.Fprintf(&b, "  Familiar=%q\n", f.Familiar().String())
		}
	}
	n, err = reference.WithName(s)
	if err != nil {
		put("WithName", nil, err)
	} else {
		fmt.Fprintf(&b, "WithName: %q\n", n.String())
	}
	var f reference.Field
	err = f.UnmarshalText([]byte(s))
	put("Field.UnmarshalText", f.Reference(), err)
	for _, rx := range []struct {
		name string
		rx   interface {
			MatchString(string) bool
			FindStringSubmatch(string) []string
		}
	}{
		{"DigestRegexp", reference.DigestRegexp}, {"DomainRegexp", reference.DomainRegexp},
		{"IdentifierRegexp", reference.IdentifierRegexp}, {"NameRegexp", reference.NameRegexp},
		{"ReferenceRegexp", reference.ReferenceRegexp}, {"TagRegexp", reference.TagRegexp},
	} {
		fmt.Fprintf(&b, "%s: %v %q\n", rx.name, rx.rx.MatchString(s), rx.rx.FindStringSubmatch(s))
	}
	return b.String()
}

// describeUpstream is describeFork on the real module (the same body, the
// other package).
func describeUpstream(s string) string {
	var b strings.Builder
	put := func(what string, v any, err error) {
		if err != nil {
			fmt.Fprintf(&b, "%s: error %q\n", what, err.Error())
			return
		}
		fmt.Fprintf(&b, "%s: %v\n", what, v)
	}
	named := func(what string, n upstream.Named) {
		fmt.Fprintf(&b, "%s: %T %q name=%q domain=%q path=%q familiarName=%q familiarString=%q nameOnly=%v tagNameOnly=%q trimmed=%q\n",
			what, n, n.String(), n.Name(), upstream.Domain(n), upstream.Path(n), upstream.FamiliarName(n),
			upstream.FamiliarString(n), upstream.IsNameOnly(n), upstream.TagNameOnly(n).String(), upstream.TrimNamed(n).String())
		if t, ok := n.(upstream.Tagged); ok {
			fmt.Fprintf(&b, "  tag=%q\n", t.Tag())
		}
		if d, ok := n.(upstream.Digested); ok {
			fmt.Fprintf(&b, "  digest=%q\n", d.Digest())
		}
		if t, err := upstream.WithTag(n, "v1.0"); err == nil {
			fmt.Fprintf(&b, "  withTag=%q\n", t.String())
		}
		if t, err := upstream.WithTag(n, "-bad"); err != nil {
			fmt.Fprintf(&b, "  withBadTag=%q\n", err.Error())
		} else {
			fmt.Fprintf(&b, "  withBadTag ok %q\n", t.String())
		}
		c, err := upstream.WithDigest(n, digest.FromString(s))
		put("  withDigest", c, err)
		m, err := upstream.FamiliarMatch("*/*", n)
		put("  familiarMatch", m, err)
		j, err := json.Marshal(upstream.AsField(n))
		put("  asField", string(j), err)
	}
	n, err := upstream.ParseNormalizedNamed(s)
	if err != nil {
		put("ParseNormalizedNamed", nil, err)
	} else {
		named("ParseNormalizedNamed", n)
	}
	n, err = upstream.ParseNamed(s)
	if err != nil {
		put("ParseNamed", nil, err)
	} else {
		named("ParseNamed", n)
	}
	n, err = upstream.ParseDockerRef(s)
	if err != nil {
		put("ParseDockerRef", nil, err)
	} else {
		named("ParseDockerRef", n)
	}
	r, err := upstream.ParseAnyReference(s)
	if err != nil {
		put("ParseAnyReference", nil, err)
	} else {
		fmt.Fprintf(&b, "ParseAnyReference: %T %q familiar=%q\n", r, r.String(), upstream.FamiliarString(r))
	}
	r, err = upstream.Parse(s)
	if err != nil {
		put("Parse", nil, err)
	} else {
		fmt.Fprintf(&b, "Parse: %T %q familiar=%q\n", r, r.String(), upstream.FamiliarString(r))
		if f, ok := r.(interface{ Familiar() upstream.Named }); ok {
			fmt.Fprintf(&b, "  Familiar=%q\n", f.Familiar().String())
		}
	}
	n, err = upstream.WithName(s)
	if err != nil {
		put("WithName", nil, err)
	} else {
		fmt.Fprintf(&b, "WithName: %q\n", n.String())
	}
	var f upstream.Field
	err = f.UnmarshalText([]byte(s))
	put("Field.UnmarshalText", f.Reference(), err)
	for _, rx := range []struct {
		name string
		rx   interface {
			MatchString(string) bool
			FindStringSubmatch(string) []string
		}
	}{
		{"DigestRegexp", upstream.DigestRegexp}, {"DomainRegexp", upstream.DomainRegexp},
		{"IdentifierRegexp", upstream.IdentifierRegexp}, {"NameRegexp", upstream.NameRegexp},
		{"ReferenceRegexp", upstream.ReferenceRegexp}, {"TagRegexp", upstream.TagRegexp},
	} {
		fmt.Fprintf(&b, "%s: %v %q\n", rx.name, rx.rx.MatchString(s), rx.rx.FindStringSubmatch(s))
	}
	return b.String()
}

// TestParityWithUpstream runs every input through every exported function
// of the copy and of the real module: the results, the dynamic types'
// names (%T: both packages name them reference.x) and the error strings
// must be identical.
func TestParityWithUpstream(t *testing.T) {
	for _, s := range parityInputs {
		got, want := describeFork(s), describeUpstream(s)
		if got != want {
			t.Errorf("%q:\ncopy:\n%s\nupstream:\n%s", s, got, want)
		}
	}
}

// TestRegexpsAsUpstream holds the exported expressions' source text, and
// the exported errors' messages, to the real module's.
func TestRegexpsAsUpstream(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"DigestRegexp", reference.DigestRegexp.String(), upstream.DigestRegexp.String()},
		{"DomainRegexp", reference.DomainRegexp.String(), upstream.DomainRegexp.String()},
		{"IdentifierRegexp", reference.IdentifierRegexp.String(), upstream.IdentifierRegexp.String()},
		{"NameRegexp", reference.NameRegexp.String(), upstream.NameRegexp.String()},
		{"ReferenceRegexp", reference.ReferenceRegexp.String(), upstream.ReferenceRegexp.String()},
		{"TagRegexp", reference.TagRegexp.String(), upstream.TagRegexp.String()},
		{"TagRegexp.Regexp", reference.TagRegexp.Regexp().String(), upstream.TagRegexp.String()},
		{"ErrReferenceInvalidFormat", reference.ErrReferenceInvalidFormat.Error(), upstream.ErrReferenceInvalidFormat.Error()},
		{"ErrTagInvalidFormat", reference.ErrTagInvalidFormat.Error(), upstream.ErrTagInvalidFormat.Error()},
		{"ErrDigestInvalidFormat", reference.ErrDigestInvalidFormat.Error(), upstream.ErrDigestInvalidFormat.Error()},
		{"ErrNameContainsUppercase", reference.ErrNameContainsUppercase.Error(), upstream.ErrNameContainsUppercase.Error()},
		{"ErrNameEmpty", reference.ErrNameEmpty.Error(), upstream.ErrNameEmpty.Error()},
		{"ErrNameTooLong", reference.ErrNameTooLong.Error(), upstream.ErrNameTooLong.Error()},
		{"ErrNameTooLong type", fmt.Sprintf("%T", reference.ErrNameTooLong), fmt.Sprintf("%T", upstream.ErrNameTooLong)},
		{"ErrNameNotCanonical", reference.ErrNameNotCanonical.Error(), upstream.ErrNameNotCanonical.Error()},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: copy %q, upstream %q", tc.name, tc.got, tc.want)
		}
	}
}

// TestSortAsUpstream holds Sort to the real module's on the inputs that
// parse.
func TestSortAsUpstream(t *testing.T) {
	var in []string
	for _, s := range parityInputs {
		if _, err := upstream.ParseAnyReference(s); err == nil {
			in = append(in, s)
		}
	}
	got := reference.Sort(append([]string(nil), in...))
	want := upstream.Sort(append([]string(nil), in...))
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Sort:\ncopy     %q\nupstream %q", got, want)
	}
}
