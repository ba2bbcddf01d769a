// Command modproxy writes a module proxy directory (the layout `go mod
// download` and GOPROXY=file:///DIR read, as the go command documents in
// "go help goproxy") holding this repository's module at one made-up
// version, so `go install github.com/ferryhq/ferry/cmd/ferry@VERSION` can be
// tried offline exactly as a user would run it against proxy.golang.org.
// scripts/goinstall.sh, run by `make test`, uses it:
//
//	go run ./internal/cmd/modproxy -dir . -version v0.0.0-test -out /tmp/proxy
//
// The module zip is made by golang.org/x/mod/zip, the code the go command
// itself uses (cmd/go/internal/modfetch/coderepo.go), from the files git
// would commit (tracked and untracked-but-not-ignored), or from every file
// under -dir when it is not a git checkout; nested modules and vendor
// directories are left out by the same rules as the go command.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func main() {
	dir := flag.String("dir", ".", "module root (the directory holding go.mod)")
	version := flag.String("version", "v0.0.0-test", "version to publish the module as (canonical semver)")
	out := flag.String("out", "", "proxy directory to write (required)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR [-dir MODULE] [-version vX.Y.Z]")
		os.Exit(2)
	}
	mod, err := write(*dir, *version, *out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
	fmt.Printf("%s@%s\n", mod.Path, mod.Version)
}

// write publishes the module in dir as version under the proxy directory
// out: $out/PATH/@v/{list,VERSION.info,VERSION.mod,VERSION.zip}.
func write(dir, version, out string) (module.Version, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return module.Version{}, fmt.Errorf("reading go.mod: %w", err)
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return module.Version{}, errors.New("go.mod declares no module path")
	}
	mod := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return mod, fmt.Errorf("checking module version: %w", err)
	}
	escPath, err := module.EscapePath(path)
	if err != nil {
		return mod, fmt.Errorf("escaping module path: %w", err)
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return mod, fmt.Errorf("escaping version: %w", err)
	}
	vdir := filepath.Join(out, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return mod, fmt.Errorf("creating proxy directory: %w", err)
	}
	var zipBuf bytes.Buffer
	files, err := gitFiles(dir)
	if err != nil {
		// Not a git checkout (a tarball, say): every file, as
		// `go mod vendor`'s zip of a directory would take.
		err = modzip.CreateFromDir(&zipBuf, mod, dir)
	} else {
		err = modzip.Create(&zipBuf, mod, files)
	}
	if err != nil {
		return mod, fmt.Errorf("zipping module: %w", err)
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return mod, fmt.Errorf("encoding info: %w", err)
	}
	for name, data := range map[string][]byte{
		"list":               []byte(version + "\n"),
		escVersion + ".info": info,
		escVersion + ".mod":  gomod,
		escVersion + ".zip":  zipBuf.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			return mod, fmt.Errorf("writing %s: %w", name, err)
		}
	}
	return mod, nil
}

// gitFiles lists the files git would put in a commit of dir: tracked files
// still present and untracked files .gitignore does not exclude.
func gitFiles(dir string) ([]modzip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	cmd.Stderr = io.Discard
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	seen := map[string]bool{}
	var files []modzip.File
	for _, p := range strings.Split(string(b), "\x00") {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		f := dirFile{root: dir, slash: p}
		if _, err := f.Lstat(); errors.Is(err, os.ErrNotExist) {
			continue // deleted in the work tree
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, errors.New("git lists no files")
	}
	return files, nil
}

// dirFile is one file of the module directory, as modzip.File.
type dirFile struct{ root, slash string }

func (f dirFile) Path() string                 { return f.slash }
func (f dirFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.abs()) }
func (f dirFile) Open() (io.ReadCloser, error) { return os.Open(f.abs()) }
func (f dirFile) abs() string                  { return filepath.Join(f.root, filepath.FromSlash(f.slash)) }
