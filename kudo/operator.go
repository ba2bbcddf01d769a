package kudo

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/ociref"
)

// maxDepth caps how deep local package folders may nest.
const maxDepth = 32

// Operator is a package as ferry reads it, the format's Metadata.Data:
// its identity, the operators its tasks install and the images it
// deploys. Folder dependencies are read with the package that names them
// (Local); the others are package references the resolver follows.
type Operator struct {
	Name            string
	AppVersion      string
	OperatorVersion string
	// Tasks are its KudoOperator (Operator) tasks, in the deploy plan's
	// order.
	Tasks []OperatorTask
	// Images are the images its templates deploy.
	Images []ImageUse
	// Warnings are findings worth printing (templates read without
	// rendering).
	Warnings []string
}

// OperatorTask is one task installing another operator.
type OperatorTask struct {
	// Task is the task's name.
	Task string
	// Package is spec.package as written.
	Package string
	// InstanceName, ParameterFile, AppVersion and OperatorVersion are the
	// task's spec.
	InstanceName    string
	ParameterFile   string
	AppVersion      string
	OperatorVersion string
	// Parameters is the text of ParameterFile, a template of the
	// package naming the task.
	Parameters string
	// Ref and Constraint name the package to resolve (repository
	// package or tarball URL); empty for a folder dependency.
	Ref        string
	Constraint string
	// Local is a folder dependency, read with its parent.
	Local *Operator
}

// walk reads p's operator tasks and images; repoURL is the repository
// package names are looked up in (the one p came from); chain lists the
// packages (name and folder) that led to p, for messages and cycles.
func (f Format) walk(p *Package, repoURL string, chain []link) (*Operator, error) {
	key := p.Dir
	if _, ok := p.fs.(diskFS); ok {
		if abs, err := filepath.Abs(p.Dir); err == nil {
			key = abs
		}
	}
	for i, l := range chain {
		if l.key == key {
			names := make([]string, 0, len(chain)-i+1)
			for _, c := range chain[i:] {
				names = append(names, c.name)
			}
			return nil, fmt.Errorf("cyclic operator dependency: %s", strings.Join(append(names, p.Operator.Name), " -> "))
		}
	}
	chain = append(chain, link{name: p.Operator.Name, key: key})
	where := chainString(chain)
	if len(chain) > maxDepth {
		return nil, fmt.Errorf("%s: folder dependencies nest more than %d deep", where, maxDepth)
	}
	op := &Operator{Name: p.Operator.Name, AppVersion: p.Operator.AppVersion, OperatorVersion: p.Operator.OperatorVersion}
	for _, t := range p.OperatorTasks() {
		s := t.Spec
		ot := OperatorTask{Task: t.Name, Package: s.Package, InstanceName: s.InstanceName, ParameterFile: s.ParameterFile, AppVersion: s.AppVersion, OperatorVersion: s.OperatorVersion}
		if s.Package == "" {
			return nil, fmt.Errorf("%s: task %q of kind %s has no spec.package (a repository package name, a folder or a tarball URL)", where, t.Name, t.Kind)
		}
		if s.ParameterFile != "" {
			text, ok := p.Templates[s.ParameterFile]
			if !ok {
				// KudoOperatorTask.Run looks it up among the templates
				// (pkg/engine/task/task_kudo_operator.go instanceParameters).
				return nil, fmt.Errorf("%s: task %q: parameterFile %s is not in templates/", where, t.Name, s.ParameterFile)
			}
			ot.Parameters = text
		}
		switch classify(s.Package) {
		case pkgURL:
			ot.Ref = SourcePrefix + s.Package
		case pkgFolder:
			child, err := loadRel(p, s.Package)
			if err != nil {
				return nil, fmt.Errorf("%s: task %q: package %s: %w", where, t.Name, s.Package, err)
			}
			sub, err := f.walk(child, repoURL, chain)
			if err != nil {
				return nil, err
			}
			ot.Local = sub
		default:
			ot.Ref, ot.Constraint = versionedRef(Source(repoURL, s.Package), s.AppVersion, s.OperatorVersion)
			if _, err := ociref.Parse(ot.Ref); err != nil {
				return nil, fmt.Errorf("%s: task %q: package %q: %w", where, t.Name, s.Package, err)
			}
		}
		op.Tasks = append(op.Tasks, ot)
	}
	imgs, warnings := Images(p, "")
	op.Images, op.Warnings = imgs, warnings
	return op, nil
}

type link struct{ name, key string }

func chainString(chain []link) string {
	names := make([]string, len(chain))
	for i, c := range chain {
		names[i] = c.name
	}
	return strings.Join(names, " -> ")
}

// loadRel reads the package a folder (or .tgz) dependency of p names,
// relative to p (KUDO's resolver: relative to the parent's folder, and
// inside a tarball never outside it).
func loadRel(p *Package, rel string) (*Package, error) {
	if p.fs == nil {
		return nil, fmt.Errorf("a package read from a registry cannot name a folder")
	}
	full, ok := p.fs.join(p.Dir, rel)
	if !ok {
		return nil, fmt.Errorf("leaves the package tarball")
	}
	lower := strings.ToLower(full)
	if strings.HasSuffix(lower, ".tgz") || strings.HasSuffix(lower, ".tar.gz") {
		var data []byte
		switch fs := p.fs.(type) {
		case tarFS:
			data, ok = fs[full]
			if !ok {
				return nil, fmt.Errorf("%s is not in the package tarball", full)
			}
		default:
			b, err := readCapped(full)
			if err != nil {
				return nil, err
			}
			data = b
		}
		return LoadArchive(data)
	}
	if _, ok := p.fs.(diskFS); ok {
		if st, err := os.Stat(full); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%s is not a package folder", full)
		}
	}
	return load(p.fs, full)
}

// dependencies are the package references o and its folder dependencies
// name, in plan order.
func (o *Operator) dependencies() []format.Dependency {
	var out []format.Dependency
	for _, t := range o.Tasks {
		if t.Local != nil {
			for _, d := range t.Local.dependencies() {
				d.Name = t.Task + "." + d.Name
				out = append(out, d)
			}
			continue
		}
		out = append(out, format.Dependency{Name: t.Task, Ref: t.Ref, Constraint: t.Constraint})
	}
	return out
}

// imageDeps are the images o and its folder dependencies deploy, as
// dependencies of kind image, normalised the Docker way (":latest" when
// untagged, as the runtime pulls them), sorted, once each.
func (o *Operator) imageDeps() []format.Dependency {
	seen := map[string]bool{}
	var out []format.Dependency
	var add func(o *Operator)
	add = func(o *Operator) {
		for _, u := range o.Images {
			r, err := ociref.ParseNormalized(u.Ref, "")
			if err != nil {
				continue // reported by images()
			}
			if r.Tag == "" && r.Digest == "" {
				r.Tag = "latest"
			}
			if seen[r.String()] {
				continue
			}
			seen[r.String()] = true
			out = append(out, format.Dependency{Name: o.Name + "/" + u.Template, Ref: r.String(), Kind: format.KindImage})
		}
		for _, t := range o.Tasks {
			if t.Local != nil {
				add(t.Local)
			}
		}
	}
	add(o)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// checkImages reports an image reference that does not parse.
func (o *Operator) checkImages(chain string) error {
	for _, u := range o.Images {
		if _, err := ociref.ParseNormalized(u.Ref, ""); err != nil {
			return fmt.Errorf("%s: template %s deploys image %q: %w", chain, u.Template, u.Ref, err)
		}
	}
	for _, t := range o.Tasks {
		if t.Local != nil {
			if err := t.Local.checkImages(chain + " -> " + t.Local.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// warnings are o's warnings and its folder dependencies'.
func (o *Operator) warnings() []string {
	out := append([]string(nil), o.Warnings...)
	for _, t := range o.Tasks {
		if t.Local != nil {
			out = append(out, t.Local.warnings()...)
		}
	}
	return out
}
