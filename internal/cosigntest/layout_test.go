package cosigntest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestLayouts: what the in-process cosign writes on a registry without
// the referrers API, described without the values that change from run to
// run (signatures, timestamps, digests of what holds them), is what the
// real cosign v2.6.5 and v3.1.3 wrote (the want descriptions were taken
// from them); with FERRY_INTEROP=1 the real CLIs are described too and
// must match.
func TestLayouts(t *testing.T) {
	ctx := context.Background()
	pred := filepath.Join(t.TempDir(), "provenance.json")
	if err := os.WriteFile(pred, []byte(`{"buildDefinition": {"buildType": "https://example.com/build/v1"}, "runDetails": {"builder": {"id": "https://example.com/builder"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		cosign func(testing.TB) *cosigntest.Cosign
		extra  []string
		attest bool
		want   []string
	}{
		{name: "v2 sign", cosign: cosigntest.V2, want: wantSig},
		{name: "v3 sign --new-bundle-format=false", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}, want: wantSig},
		{name: "v2 sign --new-bundle-format", cosign: cosigntest.V2, extra: []string{"--new-bundle-format"}, want: wantBundle("application/vnd.oci.empty.v1+json", "https://sigstore.dev/cosign/sign/v1", "")},
		{name: "v3 sign", cosign: cosigntest.V3, want: wantBundle(cosigntest.BundleMediaType, "https://sigstore.dev/cosign/sign/v1", "")},
		{name: "v2 attest", cosign: cosigntest.V2, attest: true, want: wantAtt},
		{name: "v3 attest --new-bundle-format=false", cosign: cosigntest.V3, extra: []string{"--new-bundle-format=false"}, attest: true, want: wantAtt},
		{name: "v2 attest --new-bundle-format", cosign: cosigntest.V2, extra: []string{"--new-bundle-format"}, attest: true, want: wantBundle("application/vnd.oci.empty.v1+json", "https://slsa.dev/provenance/v1", "HOST/acme/app")},
		{name: "v3 attest", cosign: cosigntest.V3, attest: true, want: wantBundle(cosigntest.BundleMediaType, "https://slsa.dev/provenance/v1", "HOST/acme/app")},
	} {
		for _, c := range backends(t, tc.cosign) {
			t.Run(tc.name+"/"+kind(c), func(t *testing.T) {
				reg := registrytest.New(t)
				repo := registrytest.Repository(t, registrytest.Client(t), reg.Host+"/acme/app")
				img, err := fixture.PushImage(ctx, repo, "acme/app")
				if err != nil {
					t.Fatal(err)
				}
				key, _ := c.GenerateKeyPair(t)
				ref := reg.Host + "/acme/app@" + img.Digest.String()
				if tc.attest {
					c.AttestImage(t, key, ref, pred, "slsaprovenance1", tc.extra...)
				} else {
					c.SignImage(t, key, ref, tc.extra...)
				}
				got, err := describe(ctx, repo, reg.Host, img.Digest)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, tc.want) {
					t.Errorf("layout:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
			})
		}
	}
}

var wantSig = []string{
	"tag sha256-SUBJECT.sig: application/vnd.oci.image.manifest.v1+json artifactType= config=application/vnd.oci.image.config.v1+json annotations=[]",
	"  layer application/vnd.dev.cosign.simplesigning.v1+json annotations=[dev.cosignproject.cosign/signature]",
	`  payload {"critical":{"identity":{"docker-reference":"HOST/acme/app"},"image":{"docker-manifest-digest":"SUBJECT"},"type":"cosign container image signature"},"optional":null}`,
}

var wantAtt = []string{
	"tag sha256-SUBJECT.att: application/vnd.oci.image.manifest.v1+json artifactType= config=application/vnd.oci.image.config.v1+json annotations=[]",
	"  layer application/vnd.dsse.envelope.v1+json annotations=[dev.cosignproject.cosign/signature predicateType]",
	"  envelope keys=[payload payloadType signatures] payloadType=application/vnd.in-toto+json",
	"  statement _type=https://in-toto.io/Statement/v0.1 predicateType=https://slsa.dev/provenance/v1 subject=[HOST/acme/app SUBJECT]",
}

func wantBundle(listed, predicateType, name string) []string {
	return []string{
		"tag sha256-SUBJECT: application/vnd.oci.image.index.v1+json",
		"  referrer artifactType=" + listed + " annotations=[]",
		"  manifest application/vnd.oci.image.manifest.v1+json artifactType=" + cosigntest.BundleMediaType + " config=application/vnd.oci.empty.v1+json subject=SUBJECT annotations=[dev.sigstore.bundle.content dev.sigstore.bundle.predicateType org.opencontainers.image.created]",
		"  layer " + cosigntest.BundleMediaType + " annotations=[]",
		"  bundle mediaType=application/vnd.dev.sigstore.bundle.v0.3+json keys=[dsseEnvelope mediaType verificationMaterial] verificationMaterial=[publicKey] payloadType=application/vnd.in-toto+json",
		"  statement predicateType=" + predicateType + " subject=[" + name + " SUBJECT]",
	}
}

// describe lists what cosign attached to subject: the .sig or .att tag
// and, for bundles, the referrers tag-schema fallback index and what it
// lists, with run-dependent values left out.
func describe(ctx context.Context, repo *remote.Repository, host string, subject digest.Digest) ([]string, error) {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, subject.Encoded(), "SUBJECT")
		s = strings.ReplaceAll(s, "sha256:SUBJECT", "SUBJECT")
		return strings.ReplaceAll(s, host, "HOST")
	}
	var out []string
	add := func(format string, a ...any) { out = append(out, norm(fmt.Sprintf(format, a...))) }
	tag := "sha256-" + subject.Encoded()
	for _, suffix := range []string{".sig", ".att"} {
		m, err := fetchManifest(ctx, repo, tag+suffix)
		if err != nil {
			continue
		}
		add("tag %s%s: %s artifactType=%s config=%s annotations=%v", tag, suffix, m.MediaType, m.ArtifactType, m.Config.MediaType, keys(m.Annotations))
		for _, l := range m.Layers {
			add("  layer %s annotations=%v", l.MediaType, keys(l.Annotations))
			b, err := content.FetchAll(ctx, repo, l)
			if err != nil {
				return nil, err
			}
			if suffix == ".sig" {
				add("  payload %s", b)
				continue
			}
			if err := describeEnvelope(b, add, true); err != nil {
				return nil, err
			}
		}
	}
	desc, err := repo.Resolve(ctx, tag)
	if err != nil {
		return out, nil
	}
	b, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return nil, err
	}
	var index ocispec.Index
	if err := json.Unmarshal(b, &index); err != nil {
		return nil, err
	}
	add("tag %s: %s", tag, desc.MediaType)
	for _, r := range index.Manifests {
		add("  referrer artifactType=%s annotations=%v", r.ArtifactType, keys(r.Annotations))
		m, err := fetchManifest(ctx, repo, r.Digest.String())
		if err != nil {
			return nil, err
		}
		sub := ""
		if m.Subject != nil {
			sub = m.Subject.Digest.String()
		}
		add("  manifest %s artifactType=%s config=%s subject=%s annotations=%v", m.MediaType, m.ArtifactType, m.Config.MediaType, sub, keys(m.Annotations))
		for _, l := range m.Layers {
			add("  layer %s annotations=%v", l.MediaType, keys(l.Annotations))
			lb, err := content.FetchAll(ctx, repo, l)
			if err != nil {
				return nil, err
			}
			var bundle map[string]json.RawMessage
			if err := json.Unmarshal(lb, &bundle); err != nil {
				return nil, err
			}
			var mt string
			_ = json.Unmarshal(bundle["mediaType"], &mt)
			var vm map[string]json.RawMessage
			_ = json.Unmarshal(bundle["verificationMaterial"], &vm)
			var env struct {
				PayloadType string `json:"payloadType"`
				Payload     string `json:"payload"`
			}
			_ = json.Unmarshal(bundle["dsseEnvelope"], &env)
			add("  bundle mediaType=%s keys=%v verificationMaterial=%v payloadType=%s", mt, keys(bundle), keys(vm), env.PayloadType)
			if err := describeStatement(env.Payload, add, false); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func describeEnvelope(b []byte, add func(string, ...any), withType bool) error {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(b, &env); err != nil {
		return err
	}
	var pt, payload string
	_ = json.Unmarshal(env["payloadType"], &pt)
	_ = json.Unmarshal(env["payload"], &payload)
	add("  envelope keys=%v payloadType=%s", keys(env), pt)
	return describeStatement(payload, add, withType)
}

func describeStatement(payload string, add func(string, ...any), withType bool) error {
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return err
	}
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	var subjects []string
	for _, s := range st.Subject {
		subjects = append(subjects, s.Name, "sha256:"+s.Digest["sha256"])
	}
	if withType {
		add("  statement _type=%s predicateType=%s subject=%v", st.Type, st.PredicateType, subjects)
	} else {
		add("  statement predicateType=%s subject=%v", st.PredicateType, subjects)
	}
	return nil
}

func fetchManifest(ctx context.Context, repo *remote.Repository, ref string) (ocispec.Manifest, error) {
	desc, err := repo.Resolve(ctx, ref)
	if err != nil {
		return ocispec.Manifest{}, err
	}
	b, err := content.FetchAll(ctx, repo, desc)
	if err != nil {
		return ocispec.Manifest{}, err
	}
	var m ocispec.Manifest
	err = json.Unmarshal(b, &m)
	return m, err
}

func keys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
