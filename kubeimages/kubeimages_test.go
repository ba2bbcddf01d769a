package kubeimages

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestFileImages: every object of a multi-document file, split as Helm
// splits rendered templates, read from kubernetes/examples' guestbook
// (Services, which deploy nothing, and Deployments), and from documents
// written here (a CronJob; a flag an operator reads at run time, kept
// apart; an empty document).
func TestFileImages(t *testing.T) {
	guestbook, err := os.ReadFile(filepath.Join("..", "testdata", "realworld", "manifests", "guestbook-all-in-one.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		content        string
		images, runtim []string
	}{
		{"guestbook", string(guestbook), []string{"gcr.io/google-samples/gb-frontend:v5", "gcr.io/google_samples/gb-redisslave:v1", "registry.k8s.io/redis:e2e"}, nil},
		{"a CronJob and a flag", "---\n# empty\n---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n            - name: c\n              image: busybox:1.36\n              args: [\"--prometheus-config-reloader=quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0\"]\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - {name: a, image: busybox:1.36}\n", []string{"busybox:1.36"}, []string{"quay.io/prometheus-operator/prometheus-config-reloader:v0.75.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			images, runtime, err := FileImages(tt.content, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(images, tt.images) || !reflect.DeepEqual(runtime, tt.runtim) {
				t.Errorf("images %q, runtime %q; want %q, %q", images, runtime, tt.images, tt.runtim)
			}
		})
	}
}
