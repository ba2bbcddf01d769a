package util_test

import (
	"fmt"
	"testing"

	helmutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/util"
)

// TestValidateNameMatchesHelm holds the patch that made validName lazy and
// its errors static (UPSTREAM.md patch 7) to Helm: same verdict, same text.
func TestValidateNameMatchesHelm(t *testing.T) {
	names := []string{"", "web", "my-release", "a.b-c", "Web", "-web", "web-", "a_b", "x..y",
		"abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij", "ünï"}
	for _, n := range names {
		if got, want := fmt.Sprint(util.ValidateReleaseName(n)), fmt.Sprint(helmutil.ValidateReleaseName(n)); got != want {
			t.Errorf("ValidateReleaseName(%q) = %s, Helm: %s", n, got, want)
		}
		if got, want := fmt.Sprint(util.ValidateMetadataName(n)), fmt.Sprint(helmutil.ValidateMetadataName(n)); got != want {
			t.Errorf("ValidateMetadataName(%q) = %s, Helm: %s", n, got, want)
		}
	}
}
