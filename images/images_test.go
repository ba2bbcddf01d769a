package images

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

func parse(t *testing.T, yaml string) *mirrorset.MirrorSet {
	t.Helper()
	m, err := mirrorset.Parse([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + yaml))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// root is a root as SectionRoots returns it, for comparison.
type root struct {
	Ref      string
	Sel      *resolve.TagSelection
	Platform string
}

// TestSectionRoots pins what each shape of entry locks: a reference (an
// untagged one means latest, left to resolve), exact tags and digests as
// roots of their own, ranges, expressions and newest as one selection.
func TestSectionRoots(t *testing.T) {
	dig := "sha256:" + strings.Repeat("a", 64)
	tests := []struct {
		name string
		yaml string
		want []root
	}{
		{"a reference", "images:\n  - ref: nginx:1.25.3\n", []root{{Ref: "docker.io/library/nginx:1.25.3"}}},
		{"untagged", "images:\n  - ref: ghcr.io/acme/web\n", []root{{Ref: "ghcr.io/acme/web"}}},
		{"a digest", "images:\n  - ref: ghcr.io/acme/web@" + dig + "\n", []root{{Ref: "ghcr.io/acme/web@" + dig}}},
		{"exact tags and a digest", "images:\n  - ref: nginx\n    tags: [\"1.25.3\", 1.25-alpine, \"" + dig + "\"]\n", []root{
			{Ref: "docker.io/library/nginx:1.25.3"}, {Ref: "docker.io/library/nginx:1.25-alpine"}, {Ref: "docker.io/library/nginx@" + dig},
		}},
		{"tags and ranges", "images:\n  - ref: docker.io/library/nginx\n    tags: [\"1.25.3\", \">=1.26 <2\", 1.x, \"~1.24\"]\n    match: '^1\\.2[67]\\.\\d+$'\n    exclude: ['-rc']\n    newest: 3\n", []root{
			{Ref: "docker.io/library/nginx:1.25.3"},
			{Ref: "docker.io/library/nginx", Sel: &resolve.TagSelection{Ranges: []string{">=1.26 <2", "1.x", "~1.24"}, Match: []string{`^1\.2[67]\.\d+$`}, Exclude: []string{"-rc"}, Newest: 3}},
		}},
		{"match alone, as a list", "images:\n  - ref: quay.io/x/y\n    match: [a, b]\n", []root{{Ref: "quay.io/x/y", Sel: &resolve.TagSelection{Match: []string{"a", "b"}}}}},
		{"a platform", "images:\n  - ref: quay.io/x/y:1\n    platforms: [linux/arm64]\n", []root{{Ref: "quay.io/x/y:1", Platform: "linux/arm64"}}},
		{"a platform of a selection", "images:\n  - ref: quay.io/x/y\n    tags: [\"1\", \"2.x\"]\n    platforms: [linux/amd64]\n", []root{{Ref: "quay.io/x/y:1", Platform: "linux/amd64"}, {Ref: "quay.io/x/y", Sel: &resolve.TagSelection{Ranges: []string{"2.x"}}, Platform: "linux/amd64"}}},
		{"newest alone", "images:\n  - ref: quay.io/x/y\n    newest: 2\n", []root{{Ref: "quay.io/x/y", Sel: &resolve.TagSelection{Newest: 2}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := parse(t, tt.yaml)
			if err := m.CheckSections([]format.Format{Format{}}); err != nil {
				t.Fatal(err)
			}
			pkgs, err := Format{}.SectionRoots(m)
			if err != nil {
				t.Fatal(err)
			}
			var got []root
			for _, p := range pkgs {
				if p.Kind != format.KindImage {
					t.Errorf("%s: kind %q", p.Ref, p.Kind)
				}
				got = append(got, root{p.Ref, p.Select, p.Platform})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("roots %+v\nwant  %+v", got, tt.want)
			}
		})
	}
}

// TestCheckSections: every mistake is named with its entry.
func TestCheckSections(t *testing.T) {
	tests := []struct{ yaml, err string }{
		{"images:\n  - tags: [\"1\"]\n", "images[0]: give one of ref, list"},
		{"images:\n  - ref: a.io/b\n    list: x.txt\n", "images[0]: give one of ref, list"},
		{"images:\n  - ref: a.io/b:1.0\n    tags: [\">=1\"]\n", "name the repository without tag or digest"},
		{"images:\n  - ref: a.io/b\n    tags: [\">=1.2.3.4\"]\n", `version range ">=1.2.3.4"`},
		{"images:\n  - ref: a.io/b\n    match: '('\n", `regular expression "("`},
		{"images:\n  - ref: a.io/b\n    newest: -1\n", "newest: -1 is negative"},
		{"images:\n  - ref: a.io/b\n    tags: [\"sha256:12\"]\n", `"sha256:12" is not a digest`},
		{"images:\n  - list: x.txt\n    newest: 2\n", "select tags of a ref"},
		{"images:\n  - ref: a.io/b\n    platforms: [linux/amd64, linux/arm64]\n", "platforms: name one platform"},
		{"images:\n  - ref: a.io/b\n    platforms: [amd64]\n", `platform "amd64": want OS/ARCH`},
		{"images:\n  - ref: a.io/b\n    tag: [\"1\"]\n", `unknown key "tag"`},
		{"images:\n  - ref: 'UPPER/x'\n", "images[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.err, func(t *testing.T) {
			m, err := mirrorset.Parse([]byte("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + tt.yaml))
			if err == nil {
				err = m.CheckSections([]format.Format{Format{}})
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %v, want %q", err, tt.err)
			}
		})
	}
}

// TestParseList: one reference a line, normalised the Docker way, as
// Zarf's and Hauler's lists are read; comments and blank lines skipped.
func TestParseList(t *testing.T) {
	got, err := ParseList("images.txt", "# mirrored for the demo\nnginx:1.25.3\n\n  ghcr.io/acme/web@sha256:"+strings.Repeat("b", 64)+"  # pinned\nquay.io/prometheus/prometheus\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"docker.io/library/nginx:1.25.3", "ghcr.io/acme/web@sha256:" + strings.Repeat("b", 64), "quay.io/prometheus/prometheus"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list %q, want %q", got, want)
	}
	if _, err := ParseList("images.txt", "nginx\nnot a reference\n"); err == nil || !strings.Contains(err.Error(), "images.txt:2") {
		t.Errorf("error %v, want one naming images.txt:2", err)
	}
}

// TestManifests: every image of every workload under a folder, read from
// real upstream manifests (kubernetes/examples' guestbook: Services,
// Deployments and a ReplicationController) and from nested folders.
func TestManifests(t *testing.T) {
	got, err := readManifests(filepath.Join("..", "testdata", "realworld", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"gcr.io/google-samples/gb-frontend:v5",
		"gcr.io/google_samples/gb-redisslave:v1",
		"registry.k8s.io/redis:e2e",
		"gcr.io/google_samples/gb-frontend:v4",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}

	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("apps/job.yml", "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers:\n            - name: c\n              image: busybox\n")
	write("pod.json", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","image":"alpine:3.20"}],"containers":[{"name":"c","image":"busybox"}]}}`)
	write("README.md", "image: not-a-manifest:1\n")
	got, err = readManifests(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docker.io/library/busybox", "docker.io/library/alpine:3.20"}; !reflect.DeepEqual(got, want) {
		t.Errorf("images %q, want %q", got, want)
	}
	empty := t.TempDir()
	write2 := filepath.Join(empty, "svc.yaml")
	if err := os.WriteFile(write2, []byte("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readManifests(empty); err == nil || !strings.Contains(err.Error(), "deploys an image") {
		t.Errorf("error %v", err)
	}
}
