package kudo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Files of a KUDO package (kudobuilder/kudo pkg/kudoctl/packages/reader/parser.go).
const (
	// OperatorFileName is the package's operator definition.
	OperatorFileName = "operator.yaml"
	// ParamsFileName is the package's parameters.
	ParamsFileName = "params.yaml"
	// TemplatesDir holds the package's templates.
	TemplatesDir = "templates"
	// APIVersion is the only apiVersion KUDO reads in operator.yaml and
	// params.yaml; an empty one means it.
	APIVersion = "kudo.dev/v1beta1"
)

// Task kinds that install another operator: KudoOperator
// (kudobuilder/kudo pkg/engine/task/task.go KudoOperatorTaskKind) and
// Operator, the spelling of KEP-29's first example.
const (
	TaskKindKudoOperator = "KudoOperator"
	TaskKindOperator     = "Operator"
)

// Size caps of what a package may hold.
const (
	// MaxPackageSize is the largest package tarball read.
	MaxPackageSize = 64 << 20
	// maxFileSize is the largest single file of a package.
	maxFileSize = 8 << 20
)

// ErrMalformed is wrapped by errors for a package whose files cannot be
// read as a KUDO package.
var ErrMalformed = errors.New("malformed KUDO package")

// OperatorFile is operator.yaml (kudobuilder/kudo pkg/kudoctl/packages/types.go
// OperatorFile), the fields ferry reads.
type OperatorFile struct {
	APIVersion      string              `yaml:"apiVersion,omitempty"`
	Name            string              `yaml:"name"`
	Description     string              `yaml:"description,omitempty"`
	OperatorVersion string              `yaml:"operatorVersion"`
	AppVersion      string              `yaml:"appVersion,omitempty"`
	KUDOVersion     string              `yaml:"kudoVersion,omitempty"`
	Tasks           []Task              `yaml:"tasks"`
	Plans           map[string]PlanSpec `yaml:"plans"`
}

// Task is one task of operator.yaml (kudobuilder/kudo
// pkg/apis/kudo/v1beta1/operatorversion_types.go Task).
type Task struct {
	Name string   `yaml:"name"`
	Kind string   `yaml:"kind"`
	Spec TaskSpec `yaml:"spec"`
}

// TaskSpec is the union of the task specs KUDO knows (TaskSpec in
// operatorversion_types.go inlines them all); ferry reads the resources of
// Apply tasks and the KudoOperator spec.
type TaskSpec struct {
	Resources []string `yaml:"resources,omitempty"`
	// Package is a repository package name, a folder ("./x", "../x")
	// relative to the package naming it, or a URL of a package tarball.
	Package         string `yaml:"package,omitempty"`
	InstanceName    string `yaml:"instanceName,omitempty"`
	AppVersion      string `yaml:"appVersion,omitempty"`
	OperatorVersion string `yaml:"operatorVersion,omitempty"`
	ParameterFile   string `yaml:"parameterFile,omitempty"`
}

// IsOperator reports whether the task installs another operator.
func (t Task) IsOperator() bool {
	return t.Kind == TaskKindKudoOperator || t.Kind == TaskKindOperator
}

// PlanSpec is one plan of operator.yaml.
type PlanSpec struct {
	Strategy string      `yaml:"strategy,omitempty"`
	Phases   []PhaseSpec `yaml:"phases"`
}

// PhaseSpec is one phase of a plan.
type PhaseSpec struct {
	Name     string     `yaml:"name"`
	Strategy string     `yaml:"strategy,omitempty"`
	Steps    []StepSpec `yaml:"steps"`
}

// StepSpec is one step of a phase.
type StepSpec struct {
	Name  string   `yaml:"name"`
	Tasks []string `yaml:"tasks"`
}

// ParamsFile is params.yaml (types.go ParamsFile).
type ParamsFile struct {
	APIVersion string      `yaml:"apiVersion,omitempty"`
	Parameters []Parameter `yaml:"parameters"`
}

// Parameter is one parameter of params.yaml; its name, type and default
// matter to ferry.
type Parameter struct {
	Name    string `yaml:"name"`
	Default any    `yaml:"default,omitempty"`
	// Type is "string" (also when empty), "integer", "number",
	// "boolean", "array" or "map" (kudobuilder/kudo
	// pkg/apis/kudo/v1beta1/parameter_types.go ParameterType).
	Type string `yaml:"type,omitempty"`
}

// Package is a KUDO package read from a folder or a tarball.
type Package struct {
	Operator OperatorFile
	Params   ParamsFile
	// Templates maps a template's path below templates/ to its text.
	Templates map[string]string
	// Dir is the package's folder: on disk for a folder, inside the
	// tarball ("." at its root) for a tarball.
	Dir string
	// fs reads the folders a relative dependency names.
	fs packageFS
}

// Version is the package's tag: APPVERSION_OPERATORVERSION, or
// OPERATORVERSION without an appVersion (KUDO's tarball name without the
// NAME- prefix, pkg/kudoctl/packages/writer/writer_tar.go
// packageVersionedName).
func (p *Package) Version() string {
	return versionTag(p.Operator.AppVersion, p.Operator.OperatorVersion)
}

func versionTag(app, opv string) string {
	if app == "" {
		return opv
	}
	return app + "_" + opv
}

// OperatorTasks returns the tasks that install other operators, in the
// order the deploy plan runs them, then those the deploy plan does not
// name in declaration order (KEP-29: the operator-tasks of the `deploy`
// plan are a package's dependencies).
func (p *Package) OperatorTasks() []Task {
	byName := map[string]int{}
	for i, t := range p.Operator.Tasks {
		if t.IsOperator() {
			byName[t.Name] = i
		}
	}
	var out []Task
	seen := map[int]bool{}
	if plan, ok := p.Operator.Plans["deploy"]; ok {
		for _, ph := range plan.Phases {
			for _, st := range ph.Steps {
				for _, tn := range st.Tasks {
					if i, ok := byName[tn]; ok && !seen[i] {
						seen[i] = true
						out = append(out, p.Operator.Tasks[i])
					}
				}
			}
		}
	}
	for i, t := range p.Operator.Tasks {
		if t.IsOperator() && !seen[i] {
			seen[i] = true
			out = append(out, t)
		}
	}
	return out
}

// packageFS reads package files: the disk, or a tarball's contents.
type packageFS interface {
	// readDir returns the files below dir, by path relative to dir.
	readDir(dir string) (map[string][]byte, error)
	// join resolves rel against dir; ok is false when it leaves the
	// tarball.
	join(dir, rel string) (string, bool)
	// isTarball reports a tarball's contents.
	isTarball() bool
}

// diskFS reads package folders from disk.
type diskFS struct{}

func (diskFS) isTarball() bool { return false }

func (diskFS) join(dir, rel string) (string, bool) {
	if filepath.IsAbs(rel) {
		return filepath.Clean(rel), true
	}
	return filepath.Join(dir, filepath.FromSlash(rel)), true
}

func (diskFS) readDir(dir string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range []string{OperatorFileName, ParamsFileName} {
		data, err := readCapped(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = data
	}
	tdir := filepath.Join(dir, TemplatesDir)
	err := filepath.WalkDir(tdir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) && p == tdir {
				return filepath.SkipDir
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := readCapped(p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func readCapped(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: more than %d bytes", p, maxFileSize)
	}
	return data, nil
}

// tarFS is the contents of a package tarball, by clean slash path.
type tarFS map[string][]byte

func (tarFS) isTarball() bool { return true }

func (tarFS) join(dir, rel string) (string, bool) {
	p := path.Clean(path.Join(dir, rel))
	if path.IsAbs(rel) || p == ".." || strings.HasPrefix(p, "../") {
		// A dependency of a tarball may not escape it
		// (pkg/kudoctl/packages/resolver/resolver.go copyWithChangedFs).
		return "", false
	}
	return p, true
}

func (t tarFS) readDir(dir string) (map[string][]byte, error) {
	prefix := ""
	if dir != "." && dir != "" {
		prefix = dir + "/"
	}
	out := map[string][]byte{}
	for name, data := range t {
		if rel, ok := strings.CutPrefix(name, prefix); ok {
			out[rel] = data
		}
	}
	return out, nil
}

// untar reads a package tarball. KUDO's tarballs hold the package files at
// their root, with or without a leading "./", and no folder entries
// (pkg/kudoctl/packages/reader/reader_tar.go ExtractTar, which extracts
// every regular file to "/NAME"; writer_tar.go TgzDir writes them so).
func untar(data []byte) (tarFS, error) {
	if len(data) > MaxPackageSize {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d a package may have", ErrMalformed, len(data), MaxPackageSize)
	}
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%w: not a gzip tarball: %w", ErrMalformed, err)
	}
	defer gz.Close()
	tr := tar.NewReader(gz)
	out := tarFS{}
	var total int64
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: reading tarball: %w", ErrMalformed, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean("/" + h.Name)[1:]
		if name == "" {
			continue
		}
		if h.Size > maxFileSize || total+h.Size > 4*MaxPackageSize {
			return nil, fmt.Errorf("%w: %s is too large", ErrMalformed, h.Name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %w", ErrMalformed, h.Name, err)
		}
		total += h.Size
		out[name] = b
	}
	return out, nil
}

// LoadArchive reads a package tarball (.tgz).
func LoadArchive(data []byte) (*Package, error) {
	files, err := untar(data)
	if err != nil {
		return nil, err
	}
	return load(files, ".")
}

// LoadDir reads a package folder.
func LoadDir(dir string) (*Package, error) {
	return load(diskFS{}, dir)
}

// load reads the package in dir of fsys.
func load(fsys packageFS, dir string) (*Package, error) {
	files, err := fsys.readDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	p, err := parseFiles(files)
	if err != nil {
		return nil, err
	}
	p.Dir, p.fs = dir, fsys
	return p, nil
}

// parseFiles parses a package's files by path relative to its root, as
// kudobuilder/kudo pkg/kudoctl/packages/reader/parser.go parsePackageFile:
// operator.yaml and params.yaml at the root, templates/**.yaml, the rest
// ignored (it may belong to a nested dependency).
func parseFiles(files map[string][]byte) (*Package, error) {
	p := &Package{Templates: map[string]string{}}
	op, ok := files[OperatorFileName]
	if !ok {
		return nil, fmt.Errorf("%w: no %s", ErrMalformed, OperatorFileName)
	}
	if err := yaml.Unmarshal(op, &p.Operator); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, OperatorFileName, err)
	}
	o := &p.Operator
	if o.APIVersion == "" {
		o.APIVersion = APIVersion
	}
	switch {
	case o.APIVersion != APIVersion:
		return nil, fmt.Errorf("%w: %s: expecting supported API version %s but got %s", ErrMalformed, OperatorFileName, APIVersion, o.APIVersion)
	case o.Name == "":
		return nil, fmt.Errorf("%w: %s: no name", ErrMalformed, OperatorFileName)
	case o.OperatorVersion == "":
		// KUDO's index refuses an entry without one (util/repo/index.go validate).
		return nil, fmt.Errorf("%w: %s: operator %s has no operatorVersion", ErrMalformed, OperatorFileName, o.Name)
	}
	if pf, ok := files[ParamsFileName]; ok {
		if err := yaml.Unmarshal(pf, &p.Params); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, ParamsFileName, err)
		}
		if p.Params.APIVersion != "" && p.Params.APIVersion != APIVersion {
			return nil, fmt.Errorf("%w: %s: expecting supported API version %s but got %s", ErrMalformed, ParamsFileName, APIVersion, p.Params.APIVersion)
		}
	}
	for name, data := range files {
		rest, ok := strings.CutPrefix(name, TemplatesDir+"/")
		if ok && strings.HasSuffix(rest, ".yaml") {
			p.Templates[rest] = string(data)
		}
	}
	return p, nil
}

// templateNames returns the package's template names, sorted.
func (p *Package) templateNames() []string {
	names := make([]string, 0, len(p.Templates))
	for n := range p.Templates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
