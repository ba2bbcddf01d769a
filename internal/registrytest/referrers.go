package registrytest

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
)

// NewReferrersAPI starts, on 127.0.0.1, a registry that has the OCI
// distribution spec v1.1 referrers API (GET /v2/NAME/referrers/DIGEST),
// which distribution (New) lacks: go-containerregistry's in-memory
// registry (pkg/registry, the one crane's tests run) with
// WithReferrersSupport. It returns the registry's HOST:PORT and stops it
// when the test ends.
//
// Like many registries it lists a referrer with the artifactType of its
// config's media type (pkg/registry/manifest.go handleReferrers), so
// cosign's Sigstore bundles are listed as application/vnd.oci.empty.v1+json.
func NewReferrersAPI(t testing.TB) string {
	t.Helper()
	h := ggcrregistry.New(ggcrregistry.WithReferrersSupport(true), ggcrregistry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
