package v2_test

// ferry's copy builds the route descriptors when the first router or URL
// builder needs them instead of at init (UPSTREAM.md). These tests hold them
// to the real module's: the same descriptors, field by field, and the same
// routes.

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	real "github.com/distribution/distribution/v3/registry/api/v2"

	fork "github.com/ferryhq/ferry/internal/forked/distribution/registry/api/v2"
)

func TestParityRouteDescriptors(t *testing.T) {
	if len(fork.APIDescriptor.RouteDescriptors) != 0 {
		t.Log("routes already loaded by an earlier test")
	}
	fork.Router() // loads the routes
	got, err := json.MarshalIndent(fork.APIDescriptor, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(real.APIDescriptor, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("APIDescriptor differs from upstream:\n%s\nupstream:\n%s", got, want)
	}
	if len(fork.APIDescriptor.RouteDescriptors) != len(real.APIDescriptor.RouteDescriptors) || len(got) < 10000 {
		t.Errorf("%d routes (%d bytes), upstream %d", len(fork.APIDescriptor.RouteDescriptors), len(got), len(real.APIDescriptor.RouteDescriptors))
	}
}

// TestParityURLBuilderFromRequest: a URL builder made from a request, the
// other reader of the routes, builds the same URLs.
func TestParityURLBuilderFromRequest(t *testing.T) {
	for _, path := range []string{"/v2/", "/prefix/v2/", "/v2/a/b/manifests/latest"} {
		r := httptest.NewRequest("GET", "http://registry.example:5000"+path, nil)
		r.Header.Set("X-Forwarded-Proto", "https")
		got, err := fork.NewURLBuilderFromRequest(r, false).BuildCatalogURL()
		if err != nil {
			t.Fatal(err)
		}
		want, err := real.NewURLBuilderFromRequest(r, false).BuildCatalogURL()
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %s, upstream %s", path, got, want)
		}
	}
}
