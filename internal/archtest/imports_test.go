// Package archtest holds tests of the module's shape rather than its
// behaviour: which packages may import which, and which package names are
// not allowed. It has no non-test code.
package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/ferryhq/ferry"

// formats are the package-format packages, as paths inside the module.
// A new format package is added to this list, so the pipeline is checked
// against it too.
var formats = []string{
	"porter",
	"crossplane",
	"mixin",
	"images",
	"helm",
	"kudo",
}

// pipeline are the packages that must not import a format package, directly
// or through any other package: they work on what package format defines and
// on the lock, whatever format a package came in. lock in particular: a
// ferry.lock is read and written without knowing any format.
var pipeline = []string{
	"", // the root package, github.com/ferryhq/ferry
	"resolve",
	"lock",
	"relocate",
	"verify",
	"install",
}

// bannedNames are package names that say nothing about what a package does.
var bannedNames = []string{"util", "utils", "common", "helper", "helpers"}

// forked is the folder of pruned in-tree copies of upstream modules
// (issue 29), which keep upstream's package names and layout (Helm's
// pkg/chart/common, pkg/chart/v2/util...) so that their patch re-applies
// on an upgrade: TestNoVaguePackageNames does not look inside it.
const forked = "internal/forked"

type goPackage struct {
	ImportPath string
	Name       string
	Dir        string
	Imports    []string
}

// listModule runs `go list -e -json` over every package of the module. -e
// keeps a package that does not build in the list, with the imports its
// files declare, so this test reports imports even while the code is broken.
// Imports are those of the package's non-test files: test-only imports do
// not make a package depend on a format.
func listModule(t *testing.T) map[string]*goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Name,Dir,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	pkgs := map[string]*goPackage{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list output: %v", err)
		}
		pkgs[p.ImportPath] = &p
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages in " + module)
	}
	return pkgs
}

func importPath(rel string) string {
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

// short names a package of the module for messages: its path inside the
// module, or "ferry (root)".
func short(importPath string) string {
	if importPath == module {
		return "ferry (root)"
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// TestPipelineImportsNoFormat fails if a pipeline package imports a format
// package, directly or transitively, and names the chain of imports that
// leads there (the shortest one).
func TestPipelineImportsNoFormat(t *testing.T) {
	pkgs := listModule(t)
	formatSet := map[string]bool{}
	for _, f := range formats {
		p := importPath(f)
		if pkgs[p] == nil {
			t.Errorf("format package %s does not exist: update the formats list in this test", p)
		}
		formatSet[p] = true
	}
	for _, rel := range pipeline {
		from := importPath(rel)
		if pkgs[from] == nil {
			t.Errorf("pipeline package %s does not exist: update the pipeline list in this test", from)
			continue
		}
		// Breadth-first over the module's own packages (a package outside
		// the module cannot import one inside it), so the first path found
		// to each format is a shortest one.
		parent := map[string]string{from: ""}
		queue := []string{from}
		var reached []string
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			imports := slices.Clone(pkgs[p].Imports)
			sort.Strings(imports)
			for _, imp := range imports {
				if pkgs[imp] == nil {
					continue // standard library or another module
				}
				if _, seen := parent[imp]; seen {
					continue
				}
				parent[imp] = p
				if formatSet[imp] {
					reached = append(reached, imp)
				}
				queue = append(queue, imp)
			}
		}
		sort.Strings(reached)
		for _, f := range reached {
			var chain []string
			for p := f; p != ""; p = parent[p] {
				chain = append(chain, short(p))
			}
			slices.Reverse(chain)
			how := "directly"
			if len(chain) > 2 {
				how = "through " + strings.Join(chain[1:len(chain)-1], ", ")
			}
			t.Errorf("pipeline package %s imports format package %s %s: %s",
				short(from), short(f), how, strings.Join(chain, " -> "))
		}
	}
}

// TestNoVaguePackageNames fails if a package, or a directory of Go files the
// go tool skips (testdata, _ or . prefixes), is named util, common, helpers
// or the like.
func TestNoVaguePackageNames(t *testing.T) {
	pkgs := listModule(t)
	paths := make([]string, 0, len(pkgs))
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var root string
	reported := map[string]bool{} // directories already named in an error
	for _, p := range paths {
		pkg := pkgs[p]
		if p == module {
			root = pkg.Dir
		}
		if strings.HasPrefix(p, module+"/"+forked+"/") {
			continue
		}
		for _, name := range []string{pkg.Name, path.Base(p)} {
			if slices.Contains(bannedNames, name) {
				t.Errorf("package %s is named %q: name it after what it does", p, name)
				reported[pkg.Dir] = true
				break
			}
		}
	}
	if root == "" {
		t.Fatal("go list did not report the module's root package directory")
	}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		if rel, err := filepath.Rel(root, p); err == nil && filepath.ToSlash(rel) == forked {
			return filepath.SkipDir
		}
		if !slices.Contains(bannedNames, d.Name()) || reported[p] {
			return nil
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("directory %s holds Go files and is named %q: name it after what it does", filepath.ToSlash(rel), d.Name())
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
