package kudo

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/resolve"
)

// LockSection is the lock section the KUDO format owns: `kudo: {local:
// [...]}`, the local packages of the inputs (LocalOperator).
const LockSection = "kudo"

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For KUDO: its lock field tarballDigest and its lock section.
func Register() {
	lock.RegisterAttribute(AttributeTarballDigest)
	lock.RegisterSection(LockSection, checkLockSection)
}

// LockedSection is the content of the lock's `kudo:` section.
type LockedSection struct {
	// Local are the local packages of the inputs (a ROOT, or a folder or
	// .tgz in ferry.yaml's operators:), in the inputs' order.
	Local []LocalOperator `yaml:"local" json:"local"`
}

// LocalOperator is a local operator package as the lock records it. The
// package is not published, so it is not a package of the lock; the
// operators its tasks install are. `kubectl kudo install PATH` installs
// it, and its deploy plan's KudoOperator tasks create its dependencies'
// instances, each with the task's instanceName and parameterFile
// (kudobuilder/kudo pkg/engine/task/task_kudo_operator.go): the lock
// keeps those, and the parameter files' text, so that ferry install
// writes them from the lock alone.
type LocalOperator struct {
	// Package is the package as the inputs name it: the ROOT or the
	// operators: entry, or for a folder dependency the task's
	// spec.package, relative to its parent.
	Package string `yaml:"package" json:"package"`
	// Name, AppVersion and OperatorVersion are its operator.yaml's.
	Name            string `yaml:"name" json:"name"`
	AppVersion      string `yaml:"appVersion,omitempty" json:"appVersion,omitempty"`
	OperatorVersion string `yaml:"operatorVersion" json:"operatorVersion"`
	// Instance is the top-level instance's name: operators:'s
	// instanceName, else the operator's name (kubectl kudo install
	// --instance). Empty for a folder dependency, whose instance its
	// parent's task names.
	Instance string `yaml:"instance,omitempty" json:"instance,omitempty"`
	// Tasks are its KudoOperator tasks, in the deploy plan's order.
	Tasks []LocalTask `yaml:"tasks,omitempty" json:"tasks,omitempty"`
}

// LocalTask is one KudoOperator task of a local package.
type LocalTask struct {
	// Name is the task's name.
	Name string `yaml:"name" json:"name"`
	// InstanceName and ParameterFile are the task's spec; Parameters is
	// the parameter file's text, a template of the local package.
	InstanceName  string `yaml:"instanceName,omitempty" json:"instanceName,omitempty"`
	ParameterFile string `yaml:"parameterFile,omitempty" json:"parameterFile,omitempty"`
	Parameters    string `yaml:"parameters,omitempty" json:"parameters,omitempty"`
	// Resolved is "SOURCE@DIGEST" of the locked package the task
	// installs (a repository package or a tarball URL); Local is a
	// folder dependency, local too. One of them is set.
	Resolved string         `yaml:"resolved,omitempty" json:"resolved,omitempty"`
	Local    *LocalOperator `yaml:"local,omitempty" json:"local,omitempty"`
}

// folderRef returns a ROOT path as an operators: entry names a folder: a
// path classify takes as local ("./flink-demo" for "flink-demo").
func folderRef(path string) string {
	p := filepath.ToSlash(filepath.Clean(path))
	if filepath.IsAbs(path) || p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return p
	}
	return "./" + p
}

// RecordLock writes the lock's `kudo:` section (LockedSection): every
// local package of ferry.yaml's operators: (a ROOT is one, see
// ReadInput), read again, each task with the package its root resolved
// to in g. With none, the section is removed.
func (f Format) RecordLock(_ *mirrorset.MirrorSet, g *resolve.Graph, l *lock.Lock) error {
	local, err := f.localSection(g)
	if err != nil {
		return err
	}
	if err := checkInstances(g, local); err != nil {
		return errkind.Mark(errkind.BadInput, err)
	}
	if len(local) == 0 {
		return l.SetSection(LockSection, nil)
	}
	return l.SetSection(LockSection, LockedSection{Local: local})
}

// localSection returns the local packages of ferry.yaml's operators: as
// the lock records them (LockedSection.Local), read again, each task
// with the package its root resolved to in g.
func (f Format) localSection(g *resolve.Graph) ([]LocalOperator, error) {
	var out []LocalOperator
	for i, o := range f.Settings.Operators {
		if classify(o.Package) != pkgFolder {
			continue
		}
		op, err := f.localRoots(o.Package, &mirrorset.MirrorSet{})
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", KeyOperators, i, err)
		}
		lo, err := localOperator(op, o.Package, g)
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %s: %w", KeyOperators, i, o.Package, err)
		}
		lo.Instance = o.InstanceName
		if lo.Instance == "" {
			lo.Instance = op.Name
		}
		out = append(out, *lo)
	}
	return out, nil
}

// checkInstances plans every top-level instance the install of g and
// the local packages would create, as buildInstallPlan does, so that two
// tasks of one top-level instance's plan naming one instance (Plan's
// CheckUnique) are refused when the lock is written, not only when it is
// installed. Separate top-level instances are not checked against each
// other: a lock may hold operators installed apart (another namespace,
// another time), as the real flink-demo and flink are.
func checkInstances(g *resolve.Graph, local []LocalOperator) error {
	pg, err := ResolvedGraph(g)
	if err != nil {
		return err
	}
	_, claimed, err := addLocal(g, pg, local)
	if err != nil {
		return err
	}
	var tops []string
	for i := range local {
		tops = append(tops, localKey(i))
	}
	var ids []string
	for id, p := range g.Packages {
		if p.Kind == format.KindKudoOperator && !claimed[id] && TopLevel(g, id) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	tops = append(tops, ids...)
	for i, top := range tops {
		instance := ""
		if i < len(local) {
			instance = local[i].Instance
		}
		if _, err := Plan(pg, top, instance); err != nil {
			return err
		}
	}
	return nil
}

// localOperator records op, read from the local package pkg, with the
// locked package each of its tasks (and its folder dependencies' tasks)
// resolved to: the package g resolved the task's root to, the root
// localRootsData made of it.
func localOperator(op *Operator, pkg string, g *resolve.Graph) (*LocalOperator, error) {
	lo := &LocalOperator{Package: pkg, Name: op.Name, AppVersion: op.AppVersion, OperatorVersion: op.OperatorVersion}
	for _, t := range op.Tasks {
		lt := LocalTask{Name: t.Task, InstanceName: t.InstanceName, ParameterFile: t.ParameterFile, Parameters: t.Parameters}
		if t.Local != nil {
			sub, err := localOperator(t.Local, t.Package, g)
			if err != nil {
				return nil, err
			}
			lt.Local = sub
		} else {
			// The root exactly as AllRoots makes it of the package
			// localRootsData adds.
			root := (&mirrorset.MirrorSet{Packages: []mirrorset.Package{{Ref: t.Ref, Version: t.Constraint, Format: "kudo"}}}).Roots()[0]
			id, ok := g.RootID(root)
			p := g.Packages[id]
			if !ok || p == nil {
				return nil, fmt.Errorf("%s: task %q: package %s was not resolved", op.Name, t.Task, t.Package)
			}
			lt.Resolved = p.Source + "@" + p.Descriptor.Digest.String()
		}
		lo.Tasks = append(lo.Tasks, lt)
	}
	return lo, nil
}

// checkLockSection checks the lock's `kudo:` section as a lock is
// parsed: its shape, and each task's resolved "SOURCE@DIGEST".
func checkLockSection(n *yaml.Node) error {
	var sec LockedSection
	if err := decodeStrict(n, &sec); err != nil {
		return err
	}
	var check func(lo *LocalOperator, where string, top bool) error
	check = func(lo *LocalOperator, where string, top bool) error {
		if lo.Name == "" || lo.Package == "" {
			return fmt.Errorf("%s: a local operator needs name and package", where)
		}
		if top && lo.Instance == "" {
			return fmt.Errorf("%s: %s has no instance", where, lo.Name)
		}
		for j, t := range lo.Tasks {
			tw := fmt.Sprintf("%s.tasks[%d]", where, j)
			if t.Name == "" {
				return fmt.Errorf("%s: a task needs a name", tw)
			}
			if (t.Resolved == "") == (t.Local == nil) {
				return fmt.Errorf("%s: task %s needs one of resolved and local", tw, t.Name)
			}
			if t.Local != nil {
				if err := check(t.Local, tw+".local", false); err != nil {
					return err
				}
				continue
			}
			src, dg, ok := strings.Cut(t.Resolved, "@")
			if _, err := digest.Parse(dg); !ok || src == "" || err != nil {
				return fmt.Errorf("%s: task %s: resolved %q is not SOURCE@DIGEST", tw, t.Name, t.Resolved)
			}
		}
		return nil
	}
	for i := range sec.Local {
		if err := check(&sec.Local[i], fmt.Sprintf("local[%d]", i), true); err != nil {
			return err
		}
	}
	return nil
}

// decodeStrict decodes n into v, refusing keys v has no field for.
func decodeStrict(n *yaml.Node, v any) error {
	b, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
