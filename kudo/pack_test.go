package kudo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPackFolder packs folders as kubectl kudo package create does
// (kudobuilder/kudo pkg/kudoctl/packages/writer/writer_tar.go, TgzDir:
// every regular file, named relative to the folder, uid/gid 0 "root",
// directories without files and symlinks left out) and reproducibly:
// the same files give the same bytes whatever their mtimes and
// permissions, entries in lexical order, mtimes the epoch.
func TestPackFolder(t *testing.T) {
	files := map[string]string{
		"operator.yaml":            "apiVersion: kudo.dev/v1beta1\nname: app\noperatorVersion: 0.1.0\n",
		"params.yaml":              "apiVersion: kudo.dev/v1beta1\nparameters: []\n",
		"templates/deploy.yaml":    "kind: Deployment\n",
		"templates/a/nested.yaml":  "kind: Service\n",
		"bb/operator.yaml":         "apiVersion: kudo.dev/v1beta1\nname: bb\noperatorVersion: 0.1.0\n",
		"bb/templates/deploy.yaml": "kind: Deployment\n",
	}
	var first []byte
	for _, tc := range []struct {
		name  string
		mtime time.Time
		perm  os.FileMode
		extra func(t *testing.T, dir string) // what the tarball leaves out
	}{
		{name: "old files", mtime: time.Unix(1e9, 0), perm: 0o600},
		{name: "new files", mtime: time.Unix(1.7e9, 0), perm: 0o664},
		{name: "empty folder and symlink", mtime: time.Unix(1.5e9, 0), perm: 0o644, extra: func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "templates", "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("params.yaml", filepath.Join(dir, "link.yaml")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range files {
				p := filepath.Join(dir, filepath.FromSlash(n))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c), tc.perm); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(p, tc.mtime, tc.mtime); err != nil {
					t.Fatal(err)
				}
			}
			if tc.extra != nil {
				tc.extra(t, dir)
			}
			data, err := PackFolder(dir)
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = data
			} else if !bytes.Equal(data, first) {
				t.Errorf("PackFolder differs from the first case's pack of the same files")
			}
			gz, err := gzip.NewReader(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if !gz.ModTime.IsZero() || gz.Name != "" {
				t.Errorf("gzip header: time %v, name %q", gz.ModTime, gz.Name)
			}
			tr := tar.NewReader(gz)
			var names []string
			for {
				h, err := tr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, h.Name)
				b, _ := io.ReadAll(tr)
				if h.Typeflag != tar.TypeReg || h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || h.Gname != "root" || h.Mode != 0o644 || !h.ModTime.Equal(time.Unix(0, 0)) || string(b) != files[h.Name] {
					t.Errorf("entry %s: %+v", h.Name, h)
				}
			}
			want := []string{"bb/operator.yaml", "bb/templates/deploy.yaml", "operator.yaml", "params.yaml", "templates/a/nested.yaml", "templates/deploy.yaml"}
			if !equalStrings(names, want) {
				t.Errorf("entries %v, want %v", names, want)
			}
			p, err := LoadArchive(data)
			if err != nil || p.Operator.Name != "app" {
				t.Fatalf("LoadArchive: %v", err)
			}
		})
	}
}

// equalStrings reports whether a and b are equal.
func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
