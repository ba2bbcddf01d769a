package common_test

// ferry: this file is not Helm's. It holds the fork's Kubernetes values,
// which internal/cmd/helmkubegen generates (zz_generated_kube.go), and its
// copy of apimachinery's version parser to the real helm.sh/helm/v4.

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	helmcommon "helm.sh/helm/v4/pkg/chart/common"

	"github.com/ferryhq/ferry/internal/forked/helm/internal/version"
	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/common"
)

// goCmd runs the go command in the module's root folder.
func goCmd(t *testing.T, args ...string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestKubeValuesMatchHelm: the fork's DefaultVersionSet, DefaultCapabilities
// and client-go version are the real Helm's. In a test both Helms use
// fixed capabilities (testing.Testing(): Kubernetes v1.20), so the
// values a program gets are compared by helmkubegen -check, which links
// both; and the generated client-go version is the one go.mod requires.
func TestKubeValuesMatchHelm(t *testing.T) {
	if !slices.Equal([]string(common.DefaultVersionSet), []string(helmcommon.DefaultVersionSet)) {
		t.Errorf("DefaultVersionSet:\n  fork %q\n  helm %q", common.DefaultVersionSet, helmcommon.DefaultVersionSet)
	}
	f, h := common.DefaultCapabilities(), helmcommon.DefaultCapabilities
	for _, p := range []struct{ name, fork, helm string }{
		{"KubeVersion.Version", f.KubeVersion.Version, h.KubeVersion.Version},
		{"KubeVersion.String()", f.KubeVersion.String(), h.KubeVersion.String()},
		{"KubeVersion.Major", f.KubeVersion.Major, h.KubeVersion.Major},
		{"KubeVersion.Minor", f.KubeVersion.Minor, h.KubeVersion.Minor},
		{"HelmVersion", asJSON(t, f.HelmVersion), asJSON(t, h.HelmVersion)},
		{"APIVersions", asJSON(t, f.APIVersions), asJSON(t, h.APIVersions)},
		{"Copy()", asJSON(t, f.Copy()), asJSON(t, h.Copy())},
		{"GetUserAgent", version.GetUserAgent(), "Helm/" + strings.TrimPrefix(h.HelmVersion.Version, "v")},
	} {
		if p.fork != p.helm {
			t.Errorf("DefaultCapabilities.%s: fork %s, helm %s", p.name, p.fork, p.helm)
		}
	}

	got, _ := version.K8sIOClientGoModVersion()
	if want := goCmd(t, "list", "-m", "-f", "{{.Version}}", "k8s.io/client-go"); got != want {
		t.Errorf("the fork's k8s.io/client-go version is %s, go.mod requires %s: run go generate ./internal/forked/helm/internal/version", got, want)
	}
	if testing.Short() {
		t.Skip("helmkubegen -check links Helm and client-go")
	}
	t.Log(goCmd(t, "run", "./internal/cmd/helmkubegen", "-check"))
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestParseKubeVersionMatchesHelm: ParseKubeVersion, whose parser the
// fork copies from k8s.io/apimachinery, parses and refuses what Helm's
// does, with the same messages.
func TestParseKubeVersionMatchesHelm(t *testing.T) {
	for _, in := range []string{
		"1.30", "v1.30", "v1.30.2", "1.33.4-gke.1245000", "v1.33.4-gke.1245000", "v1.29.0+k3s1",
		" v1.28.3 ", "1.2.3.4", "1.2.3-rc.1+build.5", "1.31alpha", "v1.020", "1.2.03",
		"", "v", "1", "01.2", "x1.2", "1.2.", "1..2", "1.18446744073709551616", "v2.0.0-01",
	} {
		fork, ferr := common.ParseKubeVersion(in)
		helm, herr := helmcommon.ParseKubeVersion(in)
		if (ferr == nil) != (herr == nil) || (ferr != nil && ferr.Error() != herr.Error()) {
			t.Errorf("ParseKubeVersion(%q): fork error %v, helm error %v", in, ferr, herr)
			continue
		}
		if ferr != nil {
			continue
		}
		if fork.Version != helm.Version || fork.String() != helm.String() || fork.Major != helm.Major || fork.Minor != helm.Minor || fork.GitVersion() != helm.GitVersion() {
			t.Errorf("ParseKubeVersion(%q): fork %+v (%s), helm %+v (%s)", in, *fork, fork, *helm, helm)
		}
	}
}
