package trust_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/trust"
)

// TestCheckNested: a rule checks every manifest of a package's graph that
// carries a signature, as `cosign verify REPO@DIGEST` checks that manifest
// (issue 28, observation 8): a Porter bundle whose invocation image is
// signed by another key fails, at the source (Check) and at the mirror
// (CheckMirror), naming the invocation image; one signed by the rule's key
// passes and records the rule; an unsigned nested manifest passes, the
// rule required or not (required asks for the root's signature).
func TestCheckNested(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	dir := t.TempDir()
	acme, other := writeKey(t, dir, "acme.pub"), writeKey(t, dir, "other.pub")
	pol, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{
		{Match: reg.Host + "/req/", Keys: []string{"acme.pub"}, Required: true},
		{Match: reg.Host + "/opt/", Keys: []string{"acme.pub"}},
	}}, trust.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		path string
		// root and invocation sign the index and the invocation image
		// (nil: unsigned).
		root, invocation *fixture.Cosign
		// fail is empty when the package passes; otherwise it names
		// what fails ("root", "invocation").
		fail string
		// ruled is how many records name the rule when it passes.
		ruled int
	}{
		{name: "root and invocation by the rule's key", path: "req/both", root: acme, invocation: acme, ruled: 2},
		{name: "invocation unsigned, root signed", path: "req/rootonly", root: acme, ruled: 1},
		{name: "invocation by another key", path: "req/foreign", root: acme, invocation: other, fail: "invocation"},
		{name: "invocation by another key, root unsigned, not required", path: "opt/foreign", invocation: other, fail: "invocation"},
		{name: "invocation by the key, root unsigned, not required", path: "opt/nested", invocation: acme, ruled: 1},
		{name: "invocation by the key, root unsigned, required", path: "req/nested", invocation: acme, fail: "root"},
		{name: "root by another key, invocation by the key", path: "req/rootforeign", root: other, invocation: acme, fail: "root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := reg.Host + "/" + tc.path
			repo := registrytest.Repository(t, c, name)
			desc, err := fixture.PushBundle(ctx, repo, name, fixture.Bundle{Name: "app", Version: "1.0.0", Images: []string{"web"}})
			if err != nil {
				t.Fatal(err)
			}
			inv := invocationImage(t, ctx, repo, desc)
			if tc.root != nil {
				if _, err := tc.root.SignImage(ctx, repo, name, desc.Digest); err != nil {
					t.Fatal(err)
				}
			}
			if tc.invocation != nil {
				if _, err := tc.invocation.SignImage(ctx, repo, name, inv); err != nil {
					t.Fatal(err)
				}
			}
			pkg := &lock.Package{Source: name, Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size}
			want := map[string]string{"root": name + "@" + desc.Digest.String(), "invocation": name + "@" + inv.String()}

			recs, err := pol.Check(ctx, []*lock.Package{pkg}, c, 1)
			findings, verified, merr := trust.CheckMirror(ctx, repo, name, pkg, pol)
			if merr != nil {
				t.Fatal(merr)
			}
			if tc.fail != "" {
				named := map[string]string{"root": desc.Digest.String(), "invocation": "manifest " + want["invocation"]}[tc.fail]
				if exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), named) {
					t.Fatalf("Check: err = %v, want exit 3 naming %s", err, named)
				}
				if tc.fail == "invocation" && strings.Contains(err.Error(), "no signature of "+desc.Digest.String()) {
					t.Errorf("Check: the root is reported too: %v", err)
				}
				if len(findings) != 1 || findings[0].Ref != want[tc.fail] {
					t.Fatalf("CheckMirror: findings %+v, want one at %s", findings, want[tc.fail])
				}
				return
			}
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if len(findings) != 0 || verified != tc.ruled {
				t.Fatalf("CheckMirror: findings %+v, %d manifests verified; want none, %d", findings, verified, tc.ruled)
			}
			ruled := 0
			for _, r := range recs[trust.Key(pkg.Source, pkg.Digest)] {
				if r.Rule != "" {
					ruled++
					if r.Rule != reg.Host+"/"+strings.SplitN(tc.path, "/", 2)[0]+"/" {
						t.Errorf("recorded rule %q", r.Rule)
					}
				}
			}
			if ruled != tc.ruled {
				t.Errorf("%d records name the rule, want %d: %+v", ruled, tc.ruled, recs)
			}
		})
	}
}

// invocationImage returns the digest of the invocation image the bundle
// index desc lists (cnab-to-oci's io.cnab.manifest.type annotation).
func invocationImage(t *testing.T, ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor) digest.Digest {
	t.Helper()
	raw, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		t.Fatal(err)
	}
	var idx ocispec.Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.Manifests {
		if m.Annotations[fixture.AnnotationManifestType] == "invocation" {
			return m.Digest
		}
	}
	t.Fatalf("bundle %s lists no invocation image", desc.Digest)
	return ""
}
