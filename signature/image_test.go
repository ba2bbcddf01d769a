package signature_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/signature"
)

// imageRepo starts a registry, pushes an image to repository name and
// returns the repository, its reference and the image digest.
func imageRepo(t *testing.T, name string) (*remote.Repository, string, digest.Digest) {
	t.Helper()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	ref := reg.Host + "/" + name
	repo, err := c.Repository(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := fixture.PushImage(context.Background(), repo, name)
	if err != nil {
		t.Fatal(err)
	}
	return repo, ref, desc.Digest
}

func TestVerifyImage(t *testing.T) {
	ctx := context.Background()
	signer, other := mustECDSA(t), mustECDSA(t)
	k := publicKey(t, signer)
	for _, tc := range []struct {
		name string
		// sign stores signatures for d in repo (reference ref).
		sign    func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest)
		wantErr error
		detail  string
	}{
		{
			name: "signed in this repository",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				signed(t)(signer.SignImage(ctx, repo, ref, d))
			},
		},
		{
			name: "signed in the source repository, read from a mirror",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				signed(t)(signer.SignImage(ctx, repo, "ghcr.io/acme/app", d))
			},
		},
		{
			name: "a second signature by another key does not hide the good one",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				signed(t)(other.SignImage(ctx, repo, ref, d))
				signed(t)(signer.SignImage(ctx, repo, ref, d))
			},
		},
		{
			name:    "unsigned",
			sign:    func(*testing.T, *remote.Repository, string, digest.Digest) {},
			wantErr: signature.ErrNoSignature,
			detail:  "no cosign signature manifest tagged sha256-",
		},
		{
			name: "signed by another key",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				signed(t)(other.SignImage(ctx, repo, ref, d))
			},
			wantErr: signature.ErrInvalid,
			detail:  "layer 1: signature does not verify with the ECDSA P-256 key",
		},
		{
			name: "a good signature over a payload naming another image",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				payload, err := fixture.CosignPayload(ref, digest.FromString("another image"))
				if err != nil {
					t.Fatal(err)
				}
				signed(t)(signer.SignImagePayload(ctx, repo, d, payload))
			},
			wantErr: signature.ErrInvalid,
			detail:  "it signs " + digest.FromString("another image").String(),
		},
		{
			name: "a layer without the signature annotation",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				payload, err := fixture.CosignPayload(ref, d)
				if err != nil {
					t.Fatal(err)
				}
				signed(t)(fixture.AppendCosignLayer(ctx, repo, d, payload, nil))
			},
			wantErr: signature.ErrInvalid,
			detail:  "no dev.cosignproject.cosign/signature annotation",
		},
		{
			name: "a signature annotation that is not base64",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				payload, err := fixture.CosignPayload(ref, d)
				if err != nil {
					t.Fatal(err)
				}
				signed(t)(fixture.AppendCosignLayer(ctx, repo, d, payload, map[string]string{signature.AnnotationSignature: "%%%"}))
			},
			wantErr: signature.ErrInvalid,
			detail:  "is not base64",
		},
		{
			name: "a signed payload that is not JSON",
			sign: func(t *testing.T, repo *remote.Repository, ref string, d digest.Digest) {
				signed(t)(signer.SignImagePayload(ctx, repo, d, []byte("not json")))
			},
			wantErr: signature.ErrInvalid,
			detail:  "not simple-signing JSON",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo, ref, d := imageRepo(t, "acme/app")
			tc.sign(t, repo, ref, d)
			v, err := signature.VerifyImage(ctx, repo, d, k)
			if tc.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				if v.Payload.Critical.Image.DockerManifestDigest != d.String() || v.Payload.Critical.Type != signature.SimpleSigningType {
					t.Errorf("payload = %+v", v.Payload)
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.detail)
			}
		})
	}
}

// signed fails t when signing failed: signed(t)(signer.SignImage(...)).
func signed(t *testing.T) func(ocispec.Descriptor, error) {
	return func(_ ocispec.Descriptor, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestCosignFixtureFormat pins the fixture to cosign's layout: the tag,
// the layer media type and annotation, and the payload's exact JSON.
func TestCosignFixtureFormat(t *testing.T) {
	ctx := context.Background()
	repo, ref, d := imageRepo(t, "acme/app")
	signer := mustECDSA(t)
	if _, err := signer.SignImage(ctx, repo, ref, d); err != nil {
		t.Fatal(err)
	}
	desc, rc, err := repo.FetchReference(ctx, "sha256-"+d.Encoded()+".sig")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		t.Errorf("manifest media type %s", desc.MediaType)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != signature.MediaTypeSimpleSigning || m.Layers[0].Annotations[signature.AnnotationSignature] == "" {
		t.Fatalf("layers = %+v", m.Layers)
	}
	if m.Config.MediaType != ocispec.MediaTypeImageConfig {
		t.Errorf("config media type %s", m.Config.MediaType)
	}
	payload, err := fixture.CosignPayload(ref, d)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"critical":{"identity":{"docker-reference":"` + ref + `"},"image":{"docker-manifest-digest":"` + d.String() + `"},"type":"cosign container image signature"},"optional":null}`
	if string(payload) != want {
		t.Errorf("payload\n%s\nwant\n%s", payload, want)
	}
	if m.Layers[0].Digest != digest.FromBytes(payload) {
		t.Errorf("layer digest %s is not the payload's", m.Layers[0].Digest)
	}
}
