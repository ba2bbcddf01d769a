package helm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/downloader"
	"helm.sh/helm/v4/pkg/provenance"
	"helm.sh/helm/v4/pkg/registry"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/trust"
)

// provSign returns the .prov `helm package --sign` writes for archive
// (filename) with signer (charttest.Provenance).
func provSign(t *testing.T, signer *openpgp.Entity, archive []byte, filename string) []byte {
	t.Helper()
	out, err := charttest.Provenance(signer, archive, filename)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeKeyring writes e's public key as a binary OpenPGP keyring (what
// `gpg --export` writes and `helm verify --keyring` reads).
func writeKeyring(t *testing.T, path string, e *openpgp.Entity) {
	t.Helper()
	var buf bytes.Buffer
	if err := e.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sourceOpener opens the classic repository sources trust checks at lock
// time, as the root package does through format.Open.
type sourceOpener struct {
	*client.Client
	cache *RepoCache
}

func (o sourceOpener) OpenSource(source string) (content.Fetcher, error) {
	return o.cache.Open(source, o.HTTPClient())
}

// TestProvenance: a trust rule's `provenance: {keyring}` verifies a
// chart's .prov, made by Helm's own signing code, with Helm's own
// verification, at the source (Check: lock, mirror; an OCI chart pushed by
// Helm's registry client, and a chart of a classic repository) and in a
// mirror (CheckMirror: verify, install). A .prov over another archive,
// one whose hash line was changed, one signed by a key outside the
// keyring and a chart without one exit 3, as `helm verify` refuses them
// (downloader.VerifyChart, the oracle).
func TestProvenance(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	acme, err := openpgp.NewEntity("Acme Charts", "", "charts@acme.example", nil)
	if err != nil {
		t.Fatal(err)
	}
	evil, err := openpgp.NewEntity("Evil", "", "evil@example.com", nil)
	if err != nil {
		t.Fatal(err)
	}
	keyring := filepath.Join(dir, "acme.gpg")
	writeKeyring(t, keyring, acme)

	const file = "nginx-1.2.0.tgz"
	archive := hrChartArchive(t, "nginx", "1.2.0", "web server")
	other := hrChartArchive(t, "nginx", "1.2.0", "web server, rebuilt")
	good := provSign(t, acme, archive, file)
	sum, err := provenance.Digest(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	osum, err := provenance.Digest(bytes.NewReader(other))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(good, []byte(sum)) {
		t.Fatal("the .prov does not hold the archive's sha256")
	}

	rows := []struct {
		name string
		prov []byte // nil: the chart has none
		fail []string
	}{
		{name: "good", prov: good},
		{name: "over another archive", prov: provSign(t, acme, other, file), fail: []string{"sha256 sum does not match"}},
		{name: "hash changed", prov: bytes.Replace(good, []byte(sum), []byte(osum), 1), fail: []string{"provenance does not verify"}},
		{name: "another key", prov: provSign(t, evil, archive, file), fail: []string{"provenance does not verify", "unknown entity"}},
		{name: "no provenance", fail: []string{"provenance required", "no provenance file"}},
	}

	reg := registrytest.New(t)
	c := registrytest.Client(t)
	helm := hrHelmClient(t)
	s := indexrepotest.New(t)
	s.Put("/stable/index.yaml", hrIndex(t, hrEntry{archive: archive, digest: hrDigest(t, archive), file: file, created: time.Unix(1700000000, 0)}))
	s.Put("/stable/"+file, archive)

	pol, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{
		{Match: reg.Host + "/charts/", Provenance: &trust.ProvenanceConfig{Keyring: "acme.gpg"}},
		{Match: s.URL + "/", Provenance: &trust.ProvenanceConfig{Keyring: "acme.gpg"}},
	}}, trust.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			// helm verify, the oracle.
			hd := t.TempDir()
			if err := os.WriteFile(filepath.Join(hd, file), archive, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.prov != nil {
				if err := os.WriteFile(filepath.Join(hd, file+".prov"), tc.prov, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, herr := downloader.VerifyChart(filepath.Join(hd, file), filepath.Join(hd, file+".prov"), keyring)
			if (herr == nil) != (tc.fail == nil) {
				t.Fatalf("helm verify: %v, the row expects failure %v", herr, tc.fail != nil)
			}

			// An OCI chart, as helm push writes it.
			name := strings.ReplaceAll(tc.name, " ", "-")
			opts := []registry.PushOption{registry.PushOptCreationTime("2025-06-07T08:09:10Z")}
			if tc.prov != nil {
				opts = append(opts, registry.PushOptProvData(tc.prov))
			}
			pushed, err := helm.Push(archive, reg.Host+"/charts/"+name+"/nginx:1.2.0", opts...)
			if err != nil {
				t.Fatal(err)
			}
			oci := &lock.Package{Source: reg.Host + "/charts/" + name + "/nginx", Digest: pushed.Manifest.Digest, MediaType: ocispec.MediaTypeImageManifest, Size: pushed.Manifest.Size}

			// The same chart in a classic repository.
			path := "/stable/"
			if tc.prov != nil {
				s.Put(path+file+".prov", tc.prov)
			}
			srcRepo, err := NewRepoCache().Open(s.URL+"/stable/nginx", c.HTTPClient())
			if err != nil {
				t.Fatal(err)
			}
			desc, err := srcRepo.Resolve(ctx, "1.2.0")
			if err != nil {
				t.Fatal(err)
			}
			classic := &lock.Package{Source: s.URL + "/stable/nginx", Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size}
			pkgs := []*lock.Package{oci}
			if tc.name != "no provenance" {
				// The repository serves one .prov at a time: the rows
				// that have one replace it.
				pkgs = append(pkgs, classic)
			}

			_, err = pol.Check(ctx, pkgs, sourceOpener{Client: c, cache: NewRepoCache()}, 2)
			repo := registrytest.Repository(t, c, oci.Source)
			findings, _, merr := trust.CheckMirror(ctx, repo, oci.Source, oci, pol)
			if merr != nil {
				t.Fatal(merr)
			}
			if tc.fail == nil {
				if err != nil || len(findings) > 0 {
					t.Fatalf("Check: %v; CheckMirror: %+v", err, findings)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Mismatch {
				t.Fatalf("Check: err = %v, want exit 3", err)
			}
			for _, p := range pkgs {
				if !strings.Contains(err.Error(), p.Source+"@"+p.Digest) {
					t.Errorf("Check: the error does not name %s", p.Source)
				}
			}
			for _, want := range tc.fail {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Check: the error does not say %q:\n%v", want, err)
				}
			}
			if len(findings) != 1 || !strings.Contains(findings[0].Detail, tc.fail[0]) {
				t.Errorf("CheckMirror: %+v, want one finding saying %q", findings, tc.fail[0])
			}
			t.Logf("%v", err)
		})
	}

	// A keyring that is not one is bad input.
	t.Run("bad keyring", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.gpg")
		if err := os.WriteFile(bad, []byte("not a keyring"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{{Match: reg.Host + "/", Provenance: &trust.ProvenanceConfig{Keyring: bad}}}}, trust.Options{})
		if err != nil {
			t.Fatal(err)
		}
		pushed, err := helm.Push(archive, reg.Host+"/charts/bad-keyring/nginx:1.2.0", registry.PushOptProvData(good))
		if err != nil {
			t.Fatal(err)
		}
		pkg := &lock.Package{Source: reg.Host + "/charts/bad-keyring/nginx", Digest: pushed.Manifest.Digest, MediaType: ocispec.MediaTypeImageManifest, Size: pushed.Manifest.Size}
		_, err = p.Check(ctx, []*lock.Package{pkg}, c, 1)
		if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "bad.gpg") {
			t.Fatalf("err = %v (exit %d), want exit 2 naming the keyring", err, exitcode.Of(err))
		}
	})
}
