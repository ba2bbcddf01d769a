package manifest_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/manifest"
)

const (
	desc  = `{"mediaType":"application/octet-stream","digest":"sha256:` + "0000000000000000000000000000000000000000000000000000000000000000" + `","size":1}`
	index = `{"schemaVersion":2,"manifests":[` + desc + `]}`
	image = `{"schemaVersion":2,"config":` + desc + `,"layers":[` + desc + `]}`
)

func TestMediaType(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		want    string
		wantErr string
	}{
		{"OCI index without mediaType", index, ocispec.MediaTypeImageIndex, ""},
		{"OCI manifest without mediaType", image, ocispec.MediaTypeImageManifest, ""},
		{"OCI index", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`, ocispec.MediaTypeImageIndex, ""},
		{"Docker manifest list", `{"schemaVersion":2,"mediaType":"` + manifest.MediaTypeDockerManifestList + `","manifests":[]}`, manifest.MediaTypeDockerManifestList, ""},
		{"Docker schema2", `{"schemaVersion":2,"mediaType":"` + manifest.MediaTypeDockerManifest + `","config":` + desc + `,"layers":[]}`, manifest.MediaTypeDockerManifest, ""},
		{"OCI artifact manifest", `{"mediaType":"` + manifest.MediaTypeArtifactManifest + `","artifactType":"x","blobs":[]}`, manifest.MediaTypeArtifactManifest, ""},
		{"leading space", "\n " + index, ocispec.MediaTypeImageIndex, ""},
		{"HTML page", "<!DOCTYPE html><html><body>Sign in</body></html>", "", `not JSON (it starts "<!DOCTYPE html><html><body>Sign …")`},
		{"empty", "", "", "not JSON"},
		{"JSON array", "[]", "", "not JSON"},
		{"truncated JSON", index[:20], "", "not an OCI"},
		{"JSON object, not a manifest", `{"name":"app","version":"1.0.0"}`, "", "no mediaType and no schemaVersion 2"},
		{"schema2 shape without a manifest field", `{"schemaVersion":2}`, "", "neither manifests nor config"},
		{"unknown mediaType", `{"schemaVersion":2,"mediaType":"text/html","config":` + desc + `}`, "", `mediaType "text/html"`},
		{"index claiming to be an image", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","manifests":[]}`, "", "no config"},
		{"image claiming to be an index", `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","config":` + desc + `}`, "", "has config or layers"},
		{"ambiguous", `{"schemaVersion":2,"manifests":[],"config":` + desc + `}`, "", "both manifests"},
		{"schema1", `{"schemaVersion":1,"fsLayers":[]}`, "", "schema1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := manifest.MediaType([]byte(tt.raw))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, manifest.ErrNotManifest) {
					t.Fatalf("MediaType = %q, %v; want an ErrNotManifest with %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("MediaType = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	raw := []byte(index)
	d := digest.FromBytes(raw)
	d512 := digest.SHA512.FromBytes(raw)
	other := digest.FromString("other")
	html := []byte("<html>rate limited</html>")
	tests := []struct {
		name        string
		raw         []byte
		asked       digest.Digest
		announced   digest.Digest
		contentType string
		want        digest.Digest
		wantErr     error
		wantMsg     string
	}{
		{"by tag, no header", raw, "", "", "text/html", d, nil, ""},
		{"by tag, header agrees", raw, "", d, manifest.MediaTypeDockerManifest, d, nil, ""},
		{"by digest", raw, d, d, "", d, nil, ""},
		{"by sha512 digest", raw, d512, "", "", d512, nil, ""},
		{"by tag, header disagrees", raw, "", other, "", "", manifest.ErrDigest, "hash to " + d.String() + ", not " + other.String()},
		{"by digest, bytes disagree", raw, other, "", "", "", manifest.ErrDigest, "not " + other.String()},
		{"malformed header", raw, "", "sha256:zz", "", "", manifest.ErrDigest, "sha256:zz"},
		{"HTML by tag", html, "", digest.FromBytes(html), "text/html; charset=utf-8", "", manifest.ErrNotManifest, "the registry sent it as text/html; charset=utf-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := manifest.Describe(tt.raw, tt.asked, tt.announced, tt.contentType)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("Describe = %v, %v; want %v with %q", got, err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Digest != tt.want || got.MediaType != ocispec.MediaTypeImageIndex || got.Size != int64(len(tt.raw)) {
				t.Errorf("Describe = %+v; want %s, %s, %d bytes", got, tt.want, ocispec.MediaTypeImageIndex, len(tt.raw))
			}
		})
	}
}

func TestChildren(t *testing.T) {
	got, err := manifest.Children([]byte(image))
	if err != nil || len(got) != 2 {
		t.Fatalf("Children = %v, %v; want config and one layer", got, err)
	}
	if _, err := manifest.Children([]byte(`{"layers":[{"digest":"md5:x"}]}`)); err == nil {
		t.Error("Children accepted a malformed digest")
	}
}
