package signature

import (
	"encoding/json"
	"testing"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// TestReferrerClassification pins how a referrer is told to be a Sigstore
// bundle (as cosign's GetBundles and Bundle read one: the manifest's one
// layer, not the listing's artifactType) and which listed artifact types
// say nothing of what a referrer is.
func TestReferrerClassification(t *testing.T) {
	const bundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
	layer := func(mt string) ocispec.Descriptor { return ocispec.Descriptor{MediaType: mt} }
	for _, tc := range []struct {
		name         string
		m            ocispec.Manifest
		artifactType string
		isBundle     bool
	}{
		{"cosign bundle", ocispec.Manifest{ArtifactType: bundle, Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer(bundle)}}, bundle, true},
		{"bundle layer, no artifactType", ocispec.Manifest{Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer(bundle)}}, MediaTypeEmpty, true},
		{"older bundle media type", ocispec.Manifest{Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer("application/vnd.dev.sigstore.bundle+json;version=0.2")}}, MediaTypeEmpty, true},
		{"bundle artifactType, two layers", ocispec.Manifest{ArtifactType: bundle, Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer(bundle), layer(bundle)}}, bundle, false},
		{"bundle artifactType, other layer", ocispec.Manifest{ArtifactType: bundle, Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer("application/spdx+json")}}, bundle, false},
		{"SBOM", ocispec.Manifest{ArtifactType: "application/spdx+json", Config: layer(MediaTypeEmpty), Layers: []ocispec.Descriptor{layer("application/spdx+json")}}, "application/spdx+json", false},
		{"config media type as artifact type", ocispec.Manifest{Config: layer("application/vnd.example.config+json"), Layers: []ocispec.Descriptor{layer("application/octet-stream")}}, "application/vnd.example.config+json", false},
		{"no layers", ocispec.Manifest{ArtifactType: bundle, Config: layer(MediaTypeEmpty)}, bundle, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if got := IsBundleManifest(raw); got != tc.isBundle {
				t.Errorf("IsBundleManifest = %v, want %v", got, tc.isBundle)
			}
			if got := ReferrerArtifactType(raw); got != tc.artifactType {
				t.Errorf("ReferrerArtifactType = %q, want %q", got, tc.artifactType)
			}
		})
	}
	if IsBundleManifest([]byte("{")) || ReferrerArtifactType([]byte("[")) != "" {
		t.Error("malformed JSON is a bundle or has an artifact type")
	}
	for at, want := range map[string]bool{"": false, MediaTypeEmpty: false, bundle: true, "application/spdx+json": true} {
		if got := ArtifactTypeDecisive(at); got != want {
			t.Errorf("ArtifactTypeDecisive(%q) = %v, want %v", at, got, want)
		}
	}
}
