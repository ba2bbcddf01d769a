package kudo

import "testing"

// TestRecognizeTarball pins how a tarball URL ROOT is told apart by its
// content: a KUDO package has operator.yaml at its root, written plain or
// "./" (kudobuilder/kudo pkg/kudoctl/packages/reader/parser.go,
// parsePackageFile's isOperatorFile; reader_tar.go ExtractTar), a Helm
// chart archive CHART/Chart.yaml (helm pkg/chart/loader/archive.go,
// LoadArchiveFiles).
func TestRecognizeTarball(t *testing.T) {
	op := map[string]string{"operator.yaml": "apiVersion: kudo.dev/v1beta1\nname: zk\n", "params.yaml": "apiVersion: kudo.dev/v1beta1\n"}
	for _, tc := range []struct {
		name string
		data []byte
		want TarballKind
	}{
		{"operator", tgz(t, op, false), TarballOperator},
		{"operator, ./ paths", tgz(t, op, true), TarballOperator},
		{"chart", tgz(t, map[string]string{"web/Chart.yaml": "apiVersion: v2\nname: web\n", "web/values.yaml": ""}, false), TarballChart},
		{"operator.yaml in a folder", tgz(t, map[string]string{"zk/operator.yaml": "name: zk\n"}, false), TarballUnknown},
		{"Chart.yaml at the root", tgz(t, map[string]string{"Chart.yaml": "name: web\n"}, false), TarballUnknown},
		{"not gzip", []byte("<html>"), TarballUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RecognizeTarball(tc.data); got != tc.want {
				t.Errorf("RecognizeTarball = %v, want %v", got, tc.want)
			}
		})
	}
	for ref, want := range map[string]bool{
		"https://kudo-repository.storage.googleapis.com/0.10.0/zookeeper-0.3.0.tgz": true,
		"http://127.0.0.1:8080/v1/op-0.1.0.tar.gz?x=1":                              true,
		"https://charts.bitnami.com/bitnami/redis":                                  false,
		"./op-0.1.0.tgz": false,
	} {
		if got := IsTarballURL(ref); got != want {
			t.Errorf("IsTarballURL(%q) = %v, want %v", ref, got, want)
		}
	}
}
