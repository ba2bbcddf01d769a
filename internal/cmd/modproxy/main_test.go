package main

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func TestWrite(t *testing.T) {
	const gomod = "module example.com/Tool\n\ngo 1.22\n"
	files := map[string]string{
		"go.mod":            gomod,
		"main.go":           "package main\n\nfunc main() {}\n",
		"internal/x/x.go":   "package x\n",
		"nested/go.mod":     "module example.com/Tool/nested\n",
		"nested/n.go":       "package nested\n",
		".gitignore":        "/built/\n",
		"built/ferry":       "a build output\n",
		"testdata/data.txt": "data\n",
	}
	tests := []struct {
		name string
		git  bool
		want []string
	}{
		// Without git every file but the nested module's goes in, as
		// the go command's own directory zip would take them.
		{"directory", false, []string{".gitignore", "built/ferry", "go.mod", "internal/x/x.go", "main.go", "testdata/data.txt"}},
		// From git: what a commit would hold, so ignored build outputs
		// stay out, untracked files that are not ignored go in.
		{"git", true, []string{".gitignore", "go.mod", "internal/x/x.go", "main.go", "testdata/data.txt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.git {
				for _, args := range [][]string{{"init", "-q"}, {"add", "go.mod", "main.go", ".gitignore"}} {
					cmd := exec.Command("git", args...)
					cmd.Dir = dir
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
				}
			}
			out := t.TempDir()
			mod, err := write(dir, "v0.0.0-test", out)
			if err != nil {
				t.Fatal(err)
			}
			if mod.Path != "example.com/Tool" {
				t.Fatalf("module path %q", mod.Path)
			}
			// Upper case is escaped in proxy paths ("go help goproxy").
			vdir := filepath.Join(out, "example.com", "!tool", "@v")
			if b, err := os.ReadFile(filepath.Join(vdir, "list")); err != nil || string(b) != "v0.0.0-test\n" {
				t.Errorf("list = %q, %v", b, err)
			}
			var info struct{ Version string }
			if b, err := os.ReadFile(filepath.Join(vdir, "v0.0.0-test.info")); err != nil {
				t.Error(err)
			} else if err := json.Unmarshal(b, &info); err != nil || info.Version != "v0.0.0-test" {
				t.Errorf("info %s: %+v, %v", b, info, err)
			}
			if b, err := os.ReadFile(filepath.Join(vdir, "v0.0.0-test.mod")); err != nil || string(b) != gomod {
				t.Errorf("mod = %q, %v", b, err)
			}
			zipFile := filepath.Join(vdir, "v0.0.0-test.zip")
			if _, err := modzip.CheckZip(module.Version{Path: "example.com/Tool", Version: "v0.0.0-test"}, zipFile); err != nil {
				t.Errorf("the go command would refuse the zip: %v", err)
			}
			zr, err := zip.OpenReader(zipFile)
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			var got []string
			const prefix = "example.com/Tool@v0.0.0-test/"
			for _, f := range zr.File {
				name, ok := strings.CutPrefix(f.Name, prefix)
				if !ok {
					t.Errorf("zip entry %q lacks the prefix %q", f.Name, prefix)
				}
				got = append(got, name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("zip holds %q, want %q", got, tt.want)
			}
		})
	}
}
