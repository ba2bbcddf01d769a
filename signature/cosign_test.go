package signature_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/signature"
)

// tagOnly hides a repository's referrer listing, so the verifier reads the
// referrers tag fallback (sha256-HEX) itself.
type tagOnly struct{ r *remote.Repository }

func (t tagOnly) FetchReference(ctx context.Context, ref string) (ocispec.Descriptor, io.ReadCloser, error) {
	return t.r.FetchReference(ctx, ref)
}

func (t tagOnly) Blobs() registry.BlobStore { return t.r.Blobs() }

var _ signature.Repository = tagOnly{}

// TestRealCosignImage: the real cosign v2 and v3 sign an image on a
// loopback registry, in every layout they write with a key pair, and
// ferry's verifier accepts each; a copy whose signature bytes are changed,
// and the genuine signature checked against another key, are rejected.
func TestRealCosignImage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		cosign   func(testing.TB) *cosigntest.Cosign
		extra    []string
		wantKind signature.Kind
	}{
		{name: "cosign v2 classic .sig", cosign: cosigntest.V2, wantKind: signature.KindSig},
		{name: "cosign v3 bundle referrer", cosign: cosigntest.V3, wantKind: signature.KindReferrer},
		{name: "cosign v3 classic .sig", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}, wantKind: signature.KindSig},
		// The referrers tag fallback cosign v2 writes lists the bundle
		// with its config's application/vnd.oci.empty.v1+json (issue 28,
		// observation 2).
		{name: "cosign v2 bundle referrer (--new-bundle-format)", cosign: cosigntest.V2, extra: []string{"--new-bundle-format"}, wantKind: signature.KindReferrer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cosign(t)
			reg := registrytest.New(t)
			cl := registrytest.Client(t)
			repo := registrytest.Repository(t, cl, reg.Host+"/acme/app")
			img, err := fixture.PushImage(ctx, repo, "acme/app")
			if err != nil {
				t.Fatal(err)
			}
			d := img.Digest
			keyPath, pubPath := c.GenerateKeyPair(t)
			_, otherPub := c.GenerateKeyPair(t)
			c.SignImage(t, keyPath, reg.Host+"/acme/app@"+d.String(), tc.extra...)

			k, err := signature.LoadPublicKey(pubPath)
			if err != nil {
				t.Fatal(err)
			}
			other, err := signature.LoadPublicKey(otherPub)
			if err != nil {
				t.Fatal(err)
			}

			for _, r := range []struct {
				name string
				repo signature.Repository
			}{{"oras repository", repo}, {"referrers tag read directly", tagOnly{repo}}} {
				got, err := (&signature.Verifier{Keys: []*signature.PublicKey{other, k}}).VerifyImage(ctx, r.repo, d)
				if err != nil {
					t.Fatalf("%s: VerifyImage: %v", r.name, err)
				}
				if len(got.Signatures) != 1 {
					t.Fatalf("%s: verified %+v, want one signature", r.name, got.Signatures)
				}
				s := got.Signatures[0]
				if s.Kind != tc.wantKind || s.KeyFingerprint != k.Fingerprint() || s.KeySource != pubPath {
					t.Errorf("%s: signature = %+v, want kind %s by %s", r.name, s, tc.wantKind, pubPath)
				}
			}
			if tc.wantKind == signature.KindSig {
				// The classic entry point still verifies cosign's .sig.
				if _, err := signature.VerifyImage(ctx, repo, d, k); err != nil {
					t.Errorf("signature.VerifyImage: %v", err)
				}
			}

			// Another key.
			_, err = (&signature.Verifier{Keys: []*signature.PublicKey{other}}).VerifyImage(ctx, repo, d)
			if !errors.Is(err, signature.ErrInvalid) {
				t.Errorf("verified with another key: %v, want ErrInvalid", err)
			}

			// A tampered copy in another repository.
			tampered := registrytest.Repository(t, cl, reg.Host+"/acme/tampered")
			if _, err := oras.Copy(ctx, repo, d.String(), tampered, "", oras.DefaultCopyOptions); err != nil {
				t.Fatal(err)
			}
			if tc.wantKind == signature.KindSig {
				tamperSigTag(t, repo, tampered, d)
			} else {
				tamperReferrer(t, repo, tampered, img)
			}
			_, err = (&signature.Verifier{Keys: []*signature.PublicKey{k}}).VerifyImage(ctx, tampered, d)
			if !errors.Is(err, signature.ErrInvalid) {
				t.Errorf("tampered copy: %v, want ErrInvalid", err)
			}
			t.Logf("tampered copy rejected: %v", err)
		})
	}
}

// fetchJSON reads the manifest or index ref of repo into v.
func fetchJSON(t *testing.T, repo *remote.Repository, ref string, v any) ocispec.Descriptor {
	t.Helper()
	desc, raw, err := oras.FetchBytes(context.Background(), repo, ref, oras.DefaultFetchBytesOptions)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
	return desc
}

// flipBase64 flips a bit in the middle of base64 data.
func flipBase64(t *testing.T, s string) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	return base64.StdEncoding.EncodeToString(raw)
}

// tamperSigTag copies cosign's .sig manifest of d from src to dst with
// every signature annotation changed.
func tamperSigTag(t *testing.T, src, dst *remote.Repository, d digest.Digest) {
	t.Helper()
	ctx := context.Background()
	var m ocispec.Manifest
	desc := fetchJSON(t, src, signature.Tag(d), &m)
	for i, l := range m.Layers {
		copyBlob(t, src, dst, l)
		m.Layers[i].Annotations[signature.AnnotationSignature] = flipBase64(t, l.Annotations[signature.AnnotationSignature])
	}
	copyBlob(t, src, dst, m.Config)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.TagBytes(ctx, dst, desc.MediaType, raw, signature.Tag(d)); err != nil {
		t.Fatal(err)
	}
}

// tamperReferrer copies the bundle referrers of img from src to dst with
// the DSSE signature in each bundle changed.
func tamperReferrer(t *testing.T, src, dst *remote.Repository, img ocispec.Descriptor) {
	t.Helper()
	ctx := context.Background()
	n := 0
	err := src.Referrers(ctx, img, "", func(refs []ocispec.Descriptor) error {
		for _, r := range refs {
			var m ocispec.Manifest
			fetchJSON(t, src, r.Digest.String(), &m)
			for _, l := range m.Layers {
				raw, err := content.FetchAll(ctx, src, l)
				if err != nil {
					return err
				}
				if _, err := cosigntest.PushBundleReferrer(ctx, dst, img, tamperBundle(t, raw), m.Annotations["dev.sigstore.bundle.predicateType"]); err != nil {
					return err
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("cosign wrote no bundle referrer")
	}
}

func copyBlob(t *testing.T, src, dst *remote.Repository, desc ocispec.Descriptor) {
	t.Helper()
	ctx := context.Background()
	raw, err := content.FetchAll(ctx, src, desc)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.Push(ctx, desc, bytes.NewReader(raw)); err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		t.Fatal(err)
	}
}

// TestRealCosignBlob: the lock signature formats cosign v2 and v3 write with
// `sign-blob --key` (cosign v3: --new-bundle-format=false) verify with
// VerifyFile; a changed file does not.
func TestRealCosignBlob(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cosign func(testing.TB) *cosigntest.Cosign
	}{
		{name: "cosign v2", cosign: cosigntest.V2},
		{name: "cosign v3", cosign: cosigntest.V3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.cosign(t)
			keyPath, pubPath := c.GenerateKeyPair(t)
			dir := t.TempDir()
			lock := filepath.Join(dir, "ferry.lock")
			if err := os.WriteFile(lock, []byte("packages: []\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			c.SignBlob(t, keyPath, lock, lock+signature.SigSuffix)
			k, err := signature.LoadPublicKey(pubPath)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := signature.VerifyFile(k, lock); err != nil {
				t.Fatalf("VerifyFile: %v", err)
			}
			if err := os.WriteFile(lock, []byte("packages: [x]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := signature.VerifyFile(k, lock); !errors.Is(err, signature.ErrInvalid) {
				t.Fatalf("VerifyFile of a changed lock = %v, want ErrInvalid", err)
			}
		})
	}
}
