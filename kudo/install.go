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
	Source string `json:"source"`
	Digest string `json:"digest"`
	// Tarball is the package's tarball, relative to the install
	// directory; for a folder dependency, the tarball carrying it
	// (installed with it: Folder names it there).
	Tarball string `json:"tarball"`
	Folder  string `json:"folder,omitempty"`
	// Instance is the instance's name (aa.bb.ee); Parent the instance
	// whose KudoOperator task Task creates it, empty for a top-level
	// instance.
	Instance string `json:"instance"`
	Parent   string `json:"parent,omitempty"`
	Task     string `json:"task,omitempty"`
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
//     dependency that has one;
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
func (f Format) WriteInstall(dir string, l *lock.Lock, _ *install.Plan) error {
	g := l.Graph()
	var ids []string
	for id, p := range g.Packages {
		if p.Kind == format.KindKudoOperator {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
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
	plan, params, err := buildInstallPlan(g, pkgs)
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
// of g (the lock's roots first, in order, then the others by ID) with
// Plan, and returns the plan and the parameter files' contents by path.
func buildInstallPlan(g *resolve.Graph, pkgs map[string]*installed) (*InstallPlan, map[string][]byte, error) {
	pg, err := ResolvedGraph(g)
	if err != nil {
		return nil, nil, err
	}
	var tops []string
	seen := map[string]bool{}
	for _, r := range g.Roots {
		if pkgs[r] != nil && !seen[r] {
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
		if !seen[id] && TopLevel(g, id) {
			tops = append(tops, id)
		}
	}
	plan := &InstallPlan{APIVersion: lock.APIVersion, Kind: "KudoInstallPlan"}
	params := map[string][]byte{}
	for _, top := range tops {
		steps, err := Plan(pg, top, "")
		if err != nil {
			return nil, nil, err
		}
		keyOf := map[string]string{}
		for _, s := range steps {
			keyOf[s.Instance] = s.Key
		}
		for _, s := range steps {
			id := carrier(g, s.Key)
			in := pkgs[id]
			if in == nil {
				return nil, nil, fmt.Errorf("instance %s: operator %s is not installed", s.Instance, s.Key)
			}
			p := in.pkgs[strings.TrimPrefix(s.Key, id)]
			if p == nil {
				return nil, nil, fmt.Errorf("instance %s: no folder %s in %s", s.Instance, s.Key, in.tarball)
			}
			st := InstallStep{
				Order: len(plan.Steps) + 1, Operator: p.Operator.Name, AppVersion: p.Operator.AppVersion, OperatorVersion: p.Operator.OperatorVersion,
				Source: in.lp.Source, Digest: in.lp.Digest, Tarball: in.tarball,
				Instance: s.Instance, Parent: s.Parent, Task: s.Task, SkipInstance: s.Parent != "", ParameterFile: s.ParameterFile,
			}
			if s.Key != id {
				st.Folder = p.Dir
			} else {
				st.Command = []string{"kubectl", "kudo", "install", "./" + in.tarball, "--instance", s.Instance}
				if st.SkipInstance {
					st.Command = append(st.Command, "--skip-instance")
				}
			}
			if s.ParameterFile != "" {
				pk := keyOf[s.Parent]
				pid := carrier(g, pk)
				parent := pkgs[pid].pkgs[strings.TrimPrefix(pk, pid)]
				text, ok := parent.Templates[s.ParameterFile]
				if !ok {
					return nil, nil, fmt.Errorf("instance %s: parameterFile %s is not in %s's templates", s.Instance, s.ParameterFile, parent.Operator.Name)
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
		}
		if st.Parameters != "" {
			fmt.Fprintf(&b, " with %s", st.Parameters)
		}
		b.WriteString("\n")
		if len(st.Command) == 0 {
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
