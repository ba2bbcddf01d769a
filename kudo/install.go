package kudo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/resolve"
)

// Files WriteInstall writes into an install directory.
const (
	// InstallDir holds the package tarballs, the plan and the script.
	InstallDir = "kudo"
	// InstallPlanFile is InstallDir's plan (InstallPlan as JSON).
	InstallPlanFile = "plan.json"
	// InstallScript runs the plan's commands in order.
	InstallScript = "install.sh"
	// paramsDir holds the parameter files of dependency tasks.
	paramsDir = "params"
)

var _ install.Writer = Format{}

// InstallPlan is kudo/plan.json: every KUDO instance the locked closure
// installs, in KEP-29's order (Plan), top-level operators in the lock's
// root order.
type InstallPlan struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Steps      []InstallStep `json:"steps"`
}

// InstallStep is one instance of the plan.
type InstallStep struct {
	Order int `json:"order"`
	// Operator, AppVersion and OperatorVersion are the operator's
	// operator.yaml name and versions.
	Operator        string `json:"operator"`
	AppVersion      string `json:"appVersion,omitempty"`
	OperatorVersion string `json:"operatorVersion"`
	// Source and Digest are the locked package's.
	Source string `json:"source,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Tarball is the package's tarball, relative to the install
	// directory; for a folder dependency, the tarball carrying it
	// (installed with it: Folder names it there).
	Tarball string `json:"tarball,omitempty"`
	Folder  string `json:"folder,omitempty"`
	// Local is set, instead of Source and Digest, for a local package,
	// which is not in the lock (the lock's kudo.local): the package as
	// the inputs name it, or a folder dependency's spec.package, relative
	// to its parent. ferry install carries it as Tarball (a folder packed
	// as kubectl kudo package create packs it, PackFolder), its folder
	// dependencies in it (Folder).
	Local string `json:"local,omitempty"`
	// Instance is the instance's name (aa.bb.ee); Parent the instance
	// whose KudoOperator task Task creates it, empty for a top-level
	// instance.
	Instance string `json:"instance"`
	// ClusterInstance is the name of the Instance object in the cluster:
	// the top-level instance's name; for a dependency, the name KUDO's
	// server gives it (ClusterInstanceName: the task's instanceName, else
	// PARENT-OPERATOR), which `kubectl kudo plan status --instance`
	// takes.
	ClusterInstance string `json:"clusterInstance"`
	Parent          string `json:"parent,omitempty"`
	Task            string `json:"task,omitempty"`
	// SkipInstance is set for a dependency: its Operator and
	// OperatorVersion are installed, its instance is created by its
	// parent's task when the parent's deploy plan runs.
	SkipInstance bool `json:"skipInstance,omitempty"`
	// ParameterFile is the parent task's spec.parameterFile, a template
	// of the parent's package; Parameters is its copy in the install
	// directory (kudo/params/INSTANCE/FILE).
	ParameterFile string `json:"parameterFile,omitempty"`
	Parameters    string `json:"parameters,omitempty"`
	// Command is the step's `kubectl kudo install` command, run from the
	// install directory; empty for a folder dependency.
	Command []string `json:"command,omitempty"`
}

// installed is one KUDO package read from the install's layout.
type installed struct {
	lp      *lock.Package
	cfg     Config
	tarball string // path below the install directory
	// pkgs are the package and its folder dependencies by Plan key.
	pkgs map[string]*Package
}

// WriteInstall writes, for the KUDO operators of the lock, into dir:
//
//   - kudo/NAME-VERSION.tgz, each package tarball byte for byte as its
//     repository served it, read from the install's OCI layout (every
//     blob checked against its digest as it was fetched) and checked
//     again against the layer's digest and the lock's tarballDigest
//     (AttributeTarballDigest) here;
//   - kudo/plan.json (InstallPlan): every instance in install order, with
//     its name, parent, task and parameter file;
//   - kudo/params/INSTANCE/FILE, the parent's parameter file of each
//     dependency that has one (a local parent's from the lock's
//     kudo.local, RecordLock);
//   - kudo/install.sh, the plan's `kubectl kudo install` commands.
//
// The graph comes from the lock and the stored packages alone. `kubectl
// kudo install` (kudobuilder/kudo pkg/kudoctl/cmd/install.go) takes
// --instance, --skip-instance ("install the Operator and
// OperatorVersion, but not an Instance"), -P/--parameter-file and
// --repo; a dependency's instance is created by its parent's
// KudoOperator task, server side (pkg/engine/task/task_kudo_operator.go),
// so dependencies are installed with --skip-instance before the
// operator needing them.
//
// A local package of the inputs (the lock's kudo.local, see RecordLock)
// is read again from where it was locked and carried as
// kudo/NAME-VERSION.tgz (a folder packed reproducibly as `kubectl kudo
// package create` packs it: PackFolder; a .tgz as it is), so that the
// install directory works without it; it must still be the operator the
// lock names (else errkind.Mismatch). Its step (Local) comes after its
// dependencies, and the packages its tasks install are its
// dependencies, named under its instance as Plan names every dependency
// (PARENT.INSTANCENAME, else PARENT.OPERATOR; KUDO's server names the
// instance it creates INSTANCENAME, else PARENT-OPERATOR:
// dependencyInstanceName in pkg/engine/task/task_kudo_operator.go), each
// with its parameter file as the lock holds it.
func (f Format) WriteInstall(dir string, l *lock.Lock, _ *install.Plan) error {
	g := l.Graph()
	var ids []string
	for id, p := range g.Packages {
		if p.Kind == format.KindKudoOperator {
			ids = append(ids, id)
		}
	}
	var sec LockedSection
	if _, err := l.Section(LockSection, &sec); err != nil {
		return err
	}
	if len(ids) == 0 && len(sec.Local) == 0 {
		return nil
	}
	sort.Strings(ids)
	store, err := oci.NewFromFS(context.Background(), os.DirFS(dir))
	if err != nil {
		return fmt.Errorf("reading the install's layout: %w", err)
	}
	pkgs := map[string]*installed{}
	files := map[string]string{} // tarball path -> package ID
	for _, id := range ids {
		rp := g.Packages[id]
		lp := l.PackageAt(rp.Source, rp.Descriptor.Digest.String())
		if lp == nil {
			return fmt.Errorf("operator %s is not in the lock", rp.Pinned())
		}
		in, data, op, err := f.readInstalled(store, lp)
		if err != nil {
			return fmt.Errorf("operator %s: %w", rp.Pinned(), err)
		}
		if other, ok := files[in.tarball]; ok {
			return fmt.Errorf("operators %s and %s would both be %s", other, id, in.tarball)
		}
		files[in.tarball] = id
		if err := install.WriteFile(dir, in.tarball, data, 0o644); err != nil {
			return fmt.Errorf("operator %s: %w", rp.Pinned(), err)
		}
		rp.Meta.Name, rp.Meta.Data = op.Name, op
		pkgs[id] = in
	}
	localFiles := map[string]localFile{}
	for i := range sec.Local {
		lo := &sec.Local[i]
		if escapes(lo, "") {
			// A folder dependency outside the package's folder
			// ("../child-operator", as KUDO's own test tree has) is not
			// in the tarball kubectl kudo package create makes of it
			// (TgzDir packs the folder only), and KUDO resolves a
			// tarball's relative dependencies inside the tarball
			// (pkg/kudoctl/packages/resolver/resolver.go): such a
			// tree is installed from its folders, as it was locked.
			continue
		}
		data, err := localTarball(lo)
		if err != nil {
			return err
		}
		file := tarballFileName(Config{Name: lo.Name, AppVersion: lo.AppVersion, OperatorVersion: lo.OperatorVersion})
		if path.Base(file) != file || strings.ContainsAny(file, `\`) || strings.HasPrefix(file, ".") {
			return fmt.Errorf("local operator name %q cannot name a file", lo.Name)
		}
		tarball := InstallDir + "/" + file
		if other, ok := files[tarball]; ok {
			return fmt.Errorf("operator %s and the local package %s would both be %s", other, lo.Package, tarball)
		}
		files[tarball] = lo.Package
		if err := install.WriteFile(dir, tarball, data, 0o644); err != nil {
			return fmt.Errorf("local operator %s: %w", lo.Name, err)
		}
		var walk func(lo *LocalOperator, key, folder string)
		walk = func(lo *LocalOperator, key, folder string) {
			localFiles[key] = localFile{tarball: tarball, folder: folder}
			for j := range lo.Tasks {
				if t := &lo.Tasks[j]; t.Local != nil {
					walk(t.Local, key+"/"+t.Name, path.Join(folder, t.Local.Package))
				}
			}
		}
		walk(lo, localKey(i), "")
	}
	plan, params, err := buildInstallPlan(g, pkgs, sec.Local, localFiles)
	if err != nil {
		return err
	}
	for _, st := range plan.Steps {
		if st.Parameters != "" {
			if err := install.WriteFile(dir, st.Parameters, params[st.Parameters], 0o644); err != nil {
				return fmt.Errorf("instance %s: parameter file: %w", st.Instance, err)
			}
		}
	}
	data, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		return err
	}
	if err := install.WriteFile(dir, InstallDir+"/"+InstallPlanFile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	return install.WriteFile(dir, InstallDir+"/"+InstallScript, []byte(script(plan)), 0o755)
}

// buildInstallPlan orders the instances of every top-level KUDO operator
// of g with Plan and returns the plan and the parameter files' contents by
// path. The local packages of the lock's kudo.local come first, in the
// inputs' order: each is the top-level instance its tasks' packages are
// dependencies of (installed with --skip-instance: the local package's
// deploy plan creates their instances). Then the lock's roots, in order,
// and the other top-level operators by ID, each but those a local
// package's task installs.
// escapes reports whether a folder dependency of lo (at folder, below
// lo's top folder) lies outside the top folder.
func escapes(lo *LocalOperator, folder string) bool {
	for _, t := range lo.Tasks {
		if t.Local == nil {
			continue
		}
		sub := path.Join(folder, t.Local.Package)
		if sub == ".." || strings.HasPrefix(sub, "../") || path.IsAbs(t.Local.Package) || escapes(t.Local, sub) {
			return true
		}
	}
	return false
}

// localFile is where a local package (at a Plan key) is in the install
// directory: the tarball carrying it and, for a folder dependency, its
// folder there.
type localFile struct{ tarball, folder string }

func buildInstallPlan(g *resolve.Graph, pkgs map[string]*installed, local []LocalOperator, localFiles map[string]localFile) (*InstallPlan, map[string][]byte, error) {
	pg, err := ResolvedGraph(g)
	if err != nil {
		return nil, nil, err
	}
	locals, claimed, err := addLocal(g, pg, local)
	if err != nil {
		return nil, nil, err
	}
	var tops []string
	seen := map[string]bool{}
	for i := range local {
		tops = append(tops, localKey(i))
	}
	for _, r := range g.Roots {
		if pkgs[r] != nil && !seen[r] && !claimed[r] {
			seen[r] = true
			tops = append(tops, r)
		}
	}
	ids := make([]string, 0, len(pkgs))
	for id := range pkgs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !seen[id] && !claimed[id] && TopLevel(g, id) {
			tops = append(tops, id)
		}
	}
	plan := &InstallPlan{APIVersion: lock.APIVersion, Kind: "KudoInstallPlan"}
	params := map[string][]byte{}
	for _, top := range tops {
		instance := ""
		if lo := locals[top]; lo != nil {
			instance = lo.Instance
		}
		steps, err := Plan(pg, top, instance)
		if err != nil {
			return nil, nil, err
		}
		keyOf := map[string]string{}
		for _, s := range steps {
			keyOf[s.Instance] = s.Key
		}
		for _, s := range steps {
			var st InstallStep
			if lo := locals[s.Key]; lo != nil {
				st = InstallStep{Operator: lo.Name, AppVersion: lo.AppVersion, OperatorVersion: lo.OperatorVersion, Local: lo.Package}
				if lf, ok := localFiles[s.Key]; ok {
					st.Tarball = lf.tarball
					if lf.folder != "" {
						st.Folder = lf.folder
					} else {
						st.Command = []string{"kubectl", "kudo", "install", "./" + lf.tarball, "--instance", s.Instance}
					}
				}
			} else {
				id := carrier(g, s.Key)
				in := pkgs[id]
				if in == nil {
					return nil, nil, fmt.Errorf("instance %s: operator %s is not installed", s.Instance, s.Key)
				}
				p := in.pkgs[strings.TrimPrefix(s.Key, id)]
				if p == nil {
					return nil, nil, fmt.Errorf("instance %s: no folder %s in %s", s.Instance, s.Key, in.tarball)
				}
				st = InstallStep{Operator: p.Operator.Name, AppVersion: p.Operator.AppVersion, OperatorVersion: p.Operator.OperatorVersion,
					Source: in.lp.Source, Digest: in.lp.Digest, Tarball: in.tarball}
				if s.Key != id {
					st.Folder = p.Dir
				} else {
					st.Command = []string{"kubectl", "kudo", "install", "./" + in.tarball, "--instance", s.Instance}
					if s.Parent != "" {
						st.Command = append(st.Command, "--skip-instance")
					}
				}
			}
			st.Order = len(plan.Steps) + 1
			st.Instance, st.ClusterInstance, st.Parent, st.Task, st.SkipInstance, st.ParameterFile = s.Instance, s.Cluster, s.Parent, s.Task, s.Parent != "", s.ParameterFile
			if s.ParameterFile != "" {
				pk := keyOf[s.Parent]
				var text, parentName string
				var ok bool
				if lo := locals[pk]; lo != nil {
					parentName = lo.Name
					for _, t := range lo.Tasks {
						if t.Name == s.Task && t.ParameterFile == s.ParameterFile {
							text, ok = t.Parameters, true
						}
					}
				} else {
					pid := carrier(g, pk)
					parent := pkgs[pid].pkgs[strings.TrimPrefix(pk, pid)]
					parentName = parent.Operator.Name
					text, ok = parent.Templates[s.ParameterFile]
				}
				if !ok {
					return nil, nil, fmt.Errorf("instance %s: parameterFile %s is not in %s's templates", s.Instance, s.ParameterFile, parentName)
				}
				rel := path.Join(s.Instance, s.ParameterFile)
				if !filepath.IsLocal(rel) || strings.Contains(rel, `\`) {
					return nil, nil, fmt.Errorf("instance %s: parameterFile %s cannot name a file below %s", s.Instance, s.ParameterFile, paramsDir)
				}
				st.Parameters = InstallDir + "/" + paramsDir + "/" + rel
				params[st.Parameters] = []byte(text)
			}
			plan.Steps = append(plan.Steps, st)
		}
	}
	return plan, params, nil
}

// localKey is the Plan key of the lock's i-th local package; its folder
// dependencies are keyed below it ("local:0/TASK"). No package ID (a
// source) has this form.
func localKey(i int) string { return fmt.Sprintf("local:%d", i) }

// addLocal adds the local packages to pg, keyed by localKey, each task's
// child the locked package it resolved to. It returns the local packages
// by key (folder dependencies included) and the IDs of the packages
// their tasks install.
func addLocal(g *resolve.Graph, pg Graph, local []LocalOperator) (map[string]*LocalOperator, map[string]bool, error) {
	byDigest := map[string]string{} // SOURCE@DIGEST -> package ID
	for id, p := range g.Packages {
		byDigest[p.Source+"@"+p.Descriptor.Digest.String()] = id
	}
	locals := map[string]*LocalOperator{}
	claimed := map[string]bool{}
	var add func(lo *LocalOperator, key string) error
	add = func(lo *LocalOperator, key string) error {
		locals[key] = lo
		n := &Node{Name: lo.Name}
		pg[key] = n
		for i := range lo.Tasks {
			t := &lo.Tasks[i]
			c := Child{Task: t.Name, InstanceName: t.InstanceName, ParameterFile: t.ParameterFile}
			if t.Local != nil {
				c.Key = key + "/" + t.Name
				if err := add(t.Local, c.Key); err != nil {
					return err
				}
			} else {
				id, ok := byDigest[t.Resolved]
				if !ok || pg[id] == nil {
					return fmt.Errorf("local operator %s: task %s installs %s, which is not a KUDO operator of the lock", lo.Name, t.Name, t.Resolved)
				}
				c.Key = id
				claimed[id] = true
			}
			n.Children = append(n.Children, c)
		}
		return nil
	}
	for i := range local {
		if err := add(&local[i], localKey(i)); err != nil {
			return nil, nil, err
		}
	}
	return locals, claimed, nil
}

// script is kudo/install.sh: the plan's commands in order, POSIX sh.
func script(plan *InstallPlan) string {
	var b strings.Builder
	b.WriteString(`#!/bin/sh
# Written by ferry install: the KUDO operators of the lock in KEP-29's
# install order (kudo/plan.json). Each dependency is installed with
# --skip-instance (its Operator and OperatorVersion): its instance is
# created by its parent's KudoOperator task when the parent's deploy plan
# runs, with the parent's parameter file (copied to kudo/params/ for
# reading). Extra arguments (--namespace NS) are passed to every command.
# kubectl kudo resolves a package's dependencies from a repository: set
# KUDO_REPO to a repository added with kubectl kudo repo add (ferry
# serve's /kudo/) when the cluster cannot reach the packages' own.
set -eu
cd "$(dirname "$0")/.."
KUBECTL="${KUBECTL:-kubectl}"
`)
	for _, st := range plan.Steps {
		fmt.Fprintf(&b, "\n# %d. %s %s as instance %s", st.Order, st.Operator, versionTag(st.AppVersion, st.OperatorVersion), st.Instance)
		if st.Parent != "" {
			fmt.Fprintf(&b, ", created by %s's task %s", st.Parent, st.Task)
			if st.ClusterInstance != "" {
				fmt.Fprintf(&b, " (named %s in the cluster)", st.ClusterInstance)
			}
		}
		if st.Parameters != "" {
			fmt.Fprintf(&b, " with %s", st.Parameters)
		}
		b.WriteString("\n")
		switch {
		case st.Local != "" && st.Tarball == "" && st.Parent == "":
			fmt.Fprintf(&b, "# (the local package %s, not in the lock: install it from there once the\n# steps above ran:  kubectl kudo install %s --instance %s)\n", st.Local, shellQuote(st.Local), shellQuote(st.Instance))
			continue
		case st.Local != "" && st.Tarball == "":
			fmt.Fprintf(&b, "# (folder %s of the local package %s: installed with it)\n", st.Local, st.Parent)
			continue
		case len(st.Command) == 0:
			fmt.Fprintf(&b, "# (folder %s of %s: installed with it)\n", st.Folder, st.Tarball)
			continue
		}
		b.WriteString(`"$KUBECTL"`)
		for _, a := range st.Command[1:] {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString(` ${KUDO_REPO:+"--repo=$KUDO_REPO"} "$@"` + "\n")
	}
	return b.String()
}

// shellQuote quotes s for POSIX sh.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readInstalled reads one locked package from the layout: its manifest
// (by the lock's digest), config and tarball (by the manifest's
// digests), the tarball's operator and its folder dependencies.
func (f Format) readInstalled(store *oci.ReadOnlyStore, lp *lock.Package) (*installed, []byte, *Operator, error) {
	ctx := context.Background()
	raw, err := fetchCapped(ctx, store, lp.Descriptor(), 4<<20)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("manifest: %w", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, nil, fmt.Errorf("manifest: %w", err)
	}
	var layer *ocispec.Descriptor
	for i, d := range m.Layers {
		if d.MediaType == PackageLayerMediaType {
			layer = &m.Layers[i]
			break
		}
	}
	if m.Config.MediaType != ConfigMediaType || layer == nil {
		return nil, nil, nil, fmt.Errorf("not a KUDO package artifact (config %s, no layer of type %s)", m.Config.MediaType, PackageLayerMediaType)
	}
	cb, err := fetchCapped(ctx, store, m.Config, 1<<20)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("config: %w", err)
	}
	var cfg Config
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return nil, nil, nil, fmt.Errorf("config: %w", err)
	}
	if want := lp.Attributes[AttributeTarballDigest]; want != "" && want != layer.Digest.String() {
		return nil, nil, nil, fmt.Errorf("package tarball %s: the lock's %s is %s", layer.Digest, AttributeTarballDigest, want)
	}
	// fetchCapped reads through content.ReadAll: bytes that are not
	// the layer's digest and size are refused.
	data, err := fetchCapped(ctx, store, *layer, MaxPackageSize)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("package tarball %s: %w", layer.Digest, err)
	}
	p, err := LoadArchive(data)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("package tarball %s: %w", layer.Digest, err)
	}
	if p.Operator.Name != cfg.Name || p.Operator.AppVersion != cfg.AppVersion || p.Operator.OperatorVersion != cfg.OperatorVersion {
		return nil, nil, nil, fmt.Errorf("its config says %s %s, its operator.yaml %s %s", cfg.Name, versionTag(cfg.AppVersion, cfg.OperatorVersion), p.Operator.Name, p.Version())
	}
	file := tarballFileName(cfg)
	if path.Base(file) != file || strings.ContainsAny(file, `\`) || strings.HasPrefix(file, ".") {
		return nil, nil, nil, fmt.Errorf("operator name %q cannot name a file", cfg.Name)
	}
	repoURL := cfg.Repository
	if repoURL == "" {
		repoURL = f.Settings.defaultRepository()
	}
	op, err := f.walk(p, repoURL, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	in := &installed{lp: lp, cfg: cfg, tarball: InstallDir + "/" + file, pkgs: map[string]*Package{}}
	if err := folderPackages(p, "", in.pkgs); err != nil {
		return nil, nil, nil, err
	}
	return in, data, op, nil
}

// folderPackages maps p (at key, "" for the package itself) and its
// folder dependencies, keyed as ResolvedGraph keys them below the
// package's ID ("/TASK", "/TASK/SUB"), for their templates.
func folderPackages(p *Package, key string, out map[string]*Package) error {
	out[key] = p
	for _, t := range p.OperatorTasks() {
		if classify(t.Spec.Package) != pkgFolder {
			continue
		}
		child, err := loadRel(p, t.Spec.Package)
		if err != nil {
			return fmt.Errorf("task %q: package %s: %w", t.Name, t.Spec.Package, err)
		}
		if err := folderPackages(child, key+"/"+t.Name, out); err != nil {
			return err
		}
	}
	return nil
}
