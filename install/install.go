// Package install materialises a locked closure from the mirror alone: an
// OCI image layout holding every package, a CNAB relocation map, an
// install plan, and the node-level registry mirror configuration (NodeDir:
// containerd, CRI-O/Podman, OpenShift). The destination is built in a
// staging directory beside it (relocate.StagePath) and renamed into place,
// so a failed install leaves it unchanged; the staging is kept after a
// failure or a kill, and the next install of the same lock resumes it.
package install

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/verify"
)

// Files ferry writes into an install directory.
const (
	PlanFile       = "plan.json"
	RelocationFile = "relocation-mapping.json"
)

// Repositories opens registry repositories; *client.Client implements it.
type Repositories interface {
	Repository(repo string) (*remote.Repository, error)
}

// Options configures an install.
type Options struct {
	// Registry opens mirror repositories.
	Registry Repositories
	// Formats are the package formats. When set, each package is read
	// again by the format that claims it, from what install fetched, and
	// the lock must say the same (verify.Contents: its kind, every image
	// it carries in images[]) before anything names it.
	Formats []format.Format
	// Mirror, when set, reads from this mirror instead of the lock's.
	Mirror *relocate.Mapping
	// Dest is the install directory. When it is a symbolic link, the
	// directory it points to is replaced and the link is kept.
	Dest string
	// Concurrency bounds parallel blob downloads per package (default 4).
	Concurrency int
	// Extra, when set, writes more files into the temporary install
	// directory before it is renamed into place (Crossplane manifests,
	// PORTER_HOME content).
	Extra func(ctx context.Context, dir string, plan *Plan) error
	// LockKey, when set, requires the lock's cosign signature before
	// anything is read from the mirror or written: LockFile+".sig" must
	// verify with LockKey over LockFile's exact bytes, and those bytes must
	// be the lock installed. Otherwise Install refuses (exit code 3).
	LockKey  *signature.PublicKey
	LockFile string
	// RequireSignedLock refuses a lock without a valid signature: with no
	// LockFile+".sig" the exit code is 3, and with one but no LockKey to
	// check it with, 2.
	RequireSignedLock bool
	// AllowDowngrade installs a lock older (a lower serial) than the one
	// an earlier install into Dest recorded; without it Install refuses
	// (CheckFresh).
	AllowDowngrade bool
	// Writers are the formats that write files of their own into the
	// install directory (Crossplane manifests).
	Writers []Writer
	// Retry bounds the tries of a download that fails with a transient
	// error and, as the catch all, of a whole package's copy.
	Retry client.RetryPolicy
	// PlainHTTP lists the registry hosts spoken to over plain HTTP
	// (--plain-http), for the node mirror configuration (NodeDir).
	PlainHTTP []string
	// Reporter, when set, is told of each package and blob as they are
	// fetched, for live progress. Nil reports nothing.
	Reporter progress.Reporter
}

// Writer is a format that writes files of its own into an install
// directory: Crossplane's package manifests and ImageConfig.
type Writer interface {
	format.Format
	// WriteInstall writes, under dir (the staged install directory,
	// renamed into place once everything is written), what the format's
	// packages of plan need. It writes through WriteFile, which keeps
	// every path inside dir. It may fill in its steps' Wiring; plan.json
	// is written after every writer.
	WriteInstall(dir string, l *lock.Lock, plan *Plan) error
}

// Plan is the content of plan.json: the packages in install order.
type Plan struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Inputs is the lock's inputs digest.
	Inputs string `json:"inputs"`
	// Serial is the lock's serial (lock.Lock.Serial): a later install
	// into the directory refuses a lock with a lower one (CheckFresh).
	Serial int64  `json:"serial,omitempty"`
	Steps  []Step `json:"steps"`
}

// Step is one package in the plan.
type Step struct {
	Order   int    `json:"order"`
	Source  string `json:"source"`
	Kind    string `json:"kind"`
	Version string `json:"version,omitempty"`
	// Tags are the other tags of the digest (lock.Package.Tags).
	Tags   []string `json:"tags,omitempty"`
	Digest string   `json:"digest"`
	// Mirror is "MIRROR_REPO@DIGEST", where the package was installed from.
	Mirror string `json:"mirror"`
	// Dependencies are the sources this step depends on.
	Dependencies []string `json:"dependencies,omitempty"`
	// Wiring is how the package passes values to its dependencies, by
	// dependency name, as its format declares it (Porter v2: each
	// dependency's parameters, credentials and outputs and their
	// sources), filled in by the format's Writer.
	Wiring []Wiring `json:"wiring,omitempty"`
}

// Wiring is one dependency's wiring: each parameter and credential the
// package passes to it, and each output it promotes from it, by name.
type Wiring struct {
	// Dependency is the dependency's name in the package.
	Dependency string `json:"dependency"`
	// Parameters, Credentials and Outputs map a name to its source.
	Parameters  map[string]WiringSource `json:"parameters,omitempty"`
	Credentials map[string]WiringSource `json:"credentials,omitempty"`
	Outputs     map[string]WiringSource `json:"outputs,omitempty"`
}

// WiringSource is where a wired value comes from: the template as written,
// and each reference in it (none for a literal value).
type WiringSource struct {
	// Template is the value as the package writes it.
	Template string `json:"template"`
	// Sources are the references the template makes, in order.
	Sources []WiringRef `json:"sources,omitempty"`
}

// WiringRef is one reference of a template: a parameter or credential of
// the package itself, or an output of one of its dependencies.
type WiringRef struct {
	Dependency string `json:"dependency,omitempty"`
	Parameter  string `json:"parameter,omitempty"`
	Credential string `json:"credential,omitempty"`
	Output     string `json:"output,omitempty"`
}

// Install installs l into opts.Dest from the mirror. Every package that
// can be fetched is; the failures are reported together.
func Install(ctx context.Context, l *lock.Lock, opts Options) (*Plan, error) {
	if err := CheckLockSignature(l, opts); err != nil {
		return nil, err
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	// A symbolic link is followed: the directory it points to is what is
	// replaced, and the link stays.
	dest, err := relocate.ResolveDest(opts.Dest)
	if err != nil {
		return nil, err
	}
	if err := checkDest(dest); err != nil {
		return nil, err
	}
	if err := CheckFresh(l, dest, opts.AllowDowngrade); err != nil {
		return nil, err
	}
	plan, relocation, err := build(l, opts.Mirror)
	if err != nil {
		return nil, err
	}
	data, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	var mirror string
	if opts.Mirror != nil {
		mirror = opts.Mirror.String()
	}
	stage, err := relocate.OpenStage(dest, relocate.StageKey(data, []byte(mirror)))
	if err != nil {
		return nil, err
	}
	defer stage.Close()
	tree, old := filepath.Join(stage.Dir, "tree"), filepath.Join(stage.Dir, "old")
	if err := recoverSwap(dest, old); err != nil {
		return nil, err
	}
	if err := cleanTree(tree); err != nil {
		return nil, err
	}
	store, err := relocate.OpenLayout(ctx, tree)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(plan.Steps))
	slots := make(chan struct{}, opts.Concurrency)
	var g errgroup.Group
	g.SetLimit(opts.Concurrency)
	rep := progress.Or(opts.Reporter)
	rep.AddPackages(len(plan.Steps))
	for i, st := range plan.Steps {
		g.Go(func() error {
			p := l.PackageAt(st.Source, st.Digest)
			rep.PackageStarted(p.Source)
			defer func() { rep.PackageDone(p.Source, errs[i]) }()
			errs[i] = relocate.RetryPackage(ctx, opts.Retry, "installing "+p.Source, func() error {
				nodes, err := fetchStep(ctx, p, st, store, opts, slots)
				if err != nil {
					return err
				}
				// Before relocation-mapping.json names them: the
				// lock's images must be nodes of the graph fetched,
				// and the package's own images in the lock.
				if err := p.CheckImages(nodes.Has); err != nil {
					return err
				}
				return checkContents(ctx, p, store, opts.Formats)
			})
			return nil
		})
	}
	_ = g.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(tree, RelocationFile), relocation); err != nil {
		return nil, err
	}
	// Every image of the closure, whatever format brought it in, pulled
	// from the mirror by the cluster's nodes (nodeconfig.go).
	if _, err := WriteNodeConfig(tree, l, NodeConfigOptions{Mirror: opts.Mirror, PlainHTTP: opts.PlainHTTP}); err != nil {
		return nil, err
	}
	for _, w := range opts.Writers {
		if err := w.WriteInstall(tree, l, plan); err != nil {
			return nil, fmt.Errorf("%s: %w", w.Name(), err)
		}
	}
	// After the writers, which may fill in their steps' wiring.
	if err := writeJSON(filepath.Join(tree, PlanFile), plan); err != nil {
		return nil, err
	}
	if opts.Extra != nil {
		if err := opts.Extra(ctx, tree, plan); err != nil {
			return nil, err
		}
	}
	// The layout store stages downloads in ingest/; it is empty by now.
	_ = os.Remove(filepath.Join(tree, "ingest"))
	if err := os.Chmod(tree, 0o755); err != nil {
		return nil, err
	}
	// Nothing written above may point outside the destination.
	if err := CheckTree(tree); err != nil {
		return nil, err
	}
	if err := swap(tree, dest, old); err != nil {
		return nil, err
	}
	if err := stage.Remove(); err != nil {
		return nil, fmt.Errorf("removing staging %s: %w", stage.Dir, err)
	}
	return plan, nil
}

// layoutFiles are what an install's staged tree keeps between runs: the
// OCI image layout. Everything else is written again at the end.
var layoutFiles = []string{"oci-layout", "index.json", "blobs"}

// cleanTree removes from a staged tree left by an interrupted run what is
// not the OCI image layout (the files formats write, ingest/).
func cleanTree(tree string) error {
	entries, err := os.ReadDir(tree)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !slices.Contains(layoutFiles, e.Name()) {
			if err := os.RemoveAll(filepath.Join(tree, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// recoverSwap puts back an earlier install that a run killed in the middle
// of swap had moved aside to old, or removes old when dest is in place.
func recoverSwap(dest, old string) error {
	if _, err := os.Lstat(old); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(dest); errors.Is(err, os.ErrNotExist) {
		return os.Rename(old, dest)
	}
	return os.RemoveAll(old)
}

// SignedLockRequiredError refuses a lock that must be signed
// (Options.RequireSignedLock): its signature Sig is missing (Missing, a
// mismatch), or no key was given to check it (bad input). The caller
// says how to sign the lock or give the key.
type SignedLockRequiredError struct {
	Sig     string
	Missing bool
}

func (e *SignedLockRequiredError) Error() string {
	if e.Missing {
		return fmt.Sprintf("refusing to install: a signed lock is required and %s is missing", e.Sig)
	}
	return fmt.Sprintf("a signed lock is required: no public key was given to check %s", e.Sig)
}

// Is makes a missing signature a mismatch and a missing key bad input.
func (e *SignedLockRequiredError) Is(target error) bool {
	if e.Missing {
		return target == errkind.Mismatch
	}
	return target == errkind.BadInput
}

// NoMirrorError is a package the lock records no mirror for, with no
// mirror given in its stead (Options.Mirror). It is bad input; the
// caller says how to mirror it or name the mirror.
type NoMirrorError struct{ Source string }

func (e *NoMirrorError) Error() string {
	return fmt.Sprintf("package %s has no mirror in the lock", e.Source)
}

// Is makes a NoMirrorError bad input (errkind.BadInput).
func (e *NoMirrorError) Is(target error) bool { return target == errkind.BadInput }

// CheckLockSignature applies opts.LockKey (see Options): nil when no key
// is set or the lock's signature verifies, else an error with exit code 3
// for a missing or bad signature. Callers that write elsewhere before
// Install (a PORTER_HOME) call it first.
func CheckLockSignature(l *lock.Lock, opts Options) error {
	if opts.RequireSignedLock && opts.LockKey == nil {
		sigPath := opts.LockFile + signature.SigSuffix
		if _, err := os.Stat(sigPath); errors.Is(err, os.ErrNotExist) {
			return &SignedLockRequiredError{Sig: sigPath, Missing: true}
		}
		return &SignedLockRequiredError{Sig: sigPath}
	}
	if opts.LockKey == nil {
		return nil
	}
	p, err := verify.LockSignature(l, opts.LockFile, opts.LockKey)
	if err != nil {
		return err
	}
	if p != nil {
		return errkind.Markf(errkind.Mismatch, "refusing to install: %s", p.Detail)
	}
	return nil
}

// CheckFresh refuses, with a *lock.DowngradeError of kind
// errkind.Mismatch, to install l into dest over an earlier install of a
// newer lock (a higher serial in its plan.json), unless allowDowngrade is
// set (TUF's rule against rollback; see lock.CheckFresh). A directory
// without an earlier install, or whose plan records no serial, holds
// serial 0.
func CheckFresh(l *lock.Lock, dest string, allowDowngrade bool) error {
	data, err := os.ReadFile(filepath.Join(dest, PlanFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the earlier install's %s: %w", PlanFile, err)
	}
	var held struct {
		Serial int64 `json:"serial"`
	}
	if err := json.Unmarshal(data, &held); err != nil {
		return errkind.Markf(errkind.BadInput, "install destination %s: %s: %w", dest, PlanFile, err)
	}
	if allowDowngrade {
		return nil
	}
	return lock.CheckFresh("the lock to install", l.Serial, "the install in "+dest, held.Serial)
}

// checkDest refuses to replace a directory that holds something other than
// an earlier ferry install.
func checkDest(dest string) error {
	entries, err := os.ReadDir(dest)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errkind.Markf(errkind.BadInput, "install destination %s: %w", dest, err)
	}
	if len(entries) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dest, PlanFile)); err == nil {
		return nil
	}
	return errkind.Markf(errkind.BadInput, "install destination %s is not empty and holds no earlier ferry install; choose a new or empty directory", dest)
}

// swap renames tree to dest, replacing an earlier install, which is
// moved aside to old (in the staging directory) first and removed last.
func swap(tree, dest, old string) error {
	if _, err := os.Stat(dest); err == nil {
		if err := os.Rename(dest, old); err != nil {
			return err
		}
		if err := os.Rename(tree, dest); err != nil {
			_ = os.Rename(old, dest)
			return err
		}
		return os.RemoveAll(old)
	}
	return os.Rename(tree, dest)
}

// build derives the plan and the CNAB relocation map from the lock.
func build(l *lock.Lock, mirror *relocate.Mapping) (*Plan, map[string]string, error) {
	g := l.Graph()
	order, err := g.Plan()
	if err != nil {
		return nil, nil, err
	}
	plan := &Plan{APIVersion: lock.APIVersion, Kind: "InstallPlan", Inputs: l.Inputs, Serial: l.Serial}
	relocation := map[string]string{}
	mirrorOf := map[string]string{}
	for _, p := range l.Resolved() {
		repo := mirrorRepo(p, mirror)
		if repo == "" {
			return nil, nil, &NoMirrorError{Source: p.Source}
		}
		mirrorOf[p.Source+"@"+p.Digest] = repo + "@" + p.Digest
	}
	for i, rp := range order {
		p := l.PackageAt(rp.Source, rp.Descriptor.Digest.String())
		repo := mirrorRepo(p, mirror)
		st := Step{Order: i + 1, Source: p.Source, Kind: p.Kind, Version: p.Version, Tags: p.Tags, Digest: p.Digest, Mirror: repo + "@" + p.Digest}
		for _, d := range p.Dependencies {
			target, _, _ := strings.Cut(d.Resolved, "@")
			if d.Role == "" {
				st.Dependencies = append(st.Dependencies, target)
			}
			if d.Ref != "" {
				relocation[d.Ref] = mirrorOf[d.Resolved]
			}
		}
		plan.Steps = append(plan.Steps, st)
		if p.Ref != "" {
			relocation[p.Ref] = st.Mirror
		}
		for _, t := range p.AllTags() {
			relocation[p.Source+":"+t] = st.Mirror
		}
		relocation[p.Source+"@"+p.Digest] = st.Mirror
		for _, im := range p.Images {
			relocation[im.Ref] = repo + "@" + im.Digest
		}
	}
	return plan, relocation, nil
}

func mirrorRepo(p *lock.Package, override *relocate.Mapping) string {
	if override != nil {
		return override.Repo(p.Source)
	}
	return p.Mirror
}

// fetchStep copies one package's graph from the mirror into the layout,
// reading within slots and retrying a write that fails with a transient
// error. The layout store verifies every blob's digest and size as it is
// written. It returns the digests of the package's graph.
func fetchStep(ctx context.Context, p *lock.Package, st Step, store *oci.Store, opts Options, slots chan struct{}) (*relocate.Nodes, error) {
	repoName, _, _ := strings.Cut(st.Mirror, "@")
	repo, err := opts.Registry.Repository(repoName)
	if err != nil {
		return nil, err
	}
	root := p.Descriptor()
	nodes := relocate.NewNodes()
	copyOpts := oras.CopyGraphOptions{
		Concurrency: opts.Concurrency,
		PostCopy: func(_ context.Context, d ocispec.Descriptor) error {
			nodes.Add(d)
			return nil
		},
		// What an interrupted run staged is not fetched again, but the
		// mirror must still hold it: install answers for the mirror.
		OnCopySkipped: func(ctx context.Context, d ocispec.Descriptor) error {
			return nodes.AddSkipped(ctx, store, d, func(ctx context.Context, d ocispec.Descriptor) error {
				ok, err := repo.Exists(ctx, d)
				if err == nil && !ok {
					err = fmt.Errorf("%s@%s: %w", repoName, d.Digest, errdef.ErrNotFound)
				}
				return err
			})
		},
	}
	var from content.ReadOnlyStorage = repo
	if opts.Reporter != nil {
		from = relocate.ReportProgress(opts.Reporter, repoName, repo, &copyOpts)
	}
	src := relocate.LimitReads(from, slots)
	dst := relocate.RetryingTarget(store, repo, opts.Retry)
	if err := oras.CopyGraph(ctx, src, dst, root, copyOpts); err != nil {
		err = fmt.Errorf("installing %s from %s: %w", p.Source, st.Mirror, err)
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) || errors.Is(err, errdef.ErrInvalidDigest) {
			return nil, errkind.Mark(errkind.Mismatch, err)
		}
		return nil, err
	}
	// The mirror's tags (the version and every other tag of the digest,
	// lock.Package.Tags) must still name the locked digest, as ferry
	// verify requires: a tag moved in the mirror (an older release under
	// a newer tag) means the mirror and the lock disagree, even though
	// what is installed is read by digest. The layout names the root by
	// each of them.
	for _, t := range p.AllTags() {
		desc, err := repo.Resolve(ctx, t)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			return nil, errkind.Markf(errkind.Mismatch, "refusing to install %s: tag %s:%s is missing from the mirror", p.Source, repoName, t)
		case err != nil:
			return nil, fmt.Errorf("installing %s: resolving %s:%s: %w", p.Source, repoName, t, err)
		case desc.Digest.String() != p.Digest:
			return nil, errkind.Markf(errkind.Mismatch, "refusing to install %s: tag %s:%s points at %s in the mirror, the lock has %s", p.Source, repoName, t, desc.Digest, p.Digest)
		}
	}
	names := []string{repoName + ":" + strings.Replace(p.Digest, ":", "-", 1)}
	if tags := p.AllTags(); len(tags) > 0 {
		names = nil
		for _, t := range tags {
			names = append(names, repoName+":"+t)
		}
	}
	for _, name := range names {
		if err := store.Tag(ctx, root, name); err != nil {
			return nil, fmt.Errorf("installing %s: %w", p.Source, err)
		}
	}
	return nodes, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// checkContents reads the installed package again from store with its
// format (verify.Contents) and refuses a lock that says otherwise (exit
// 3): an image the package carries that images[] lacks would be missing
// from relocation-mapping.json, an edited kind would install it as
// something else.
func checkContents(ctx context.Context, p *lock.Package, store *oci.Store, formats []format.Format) error {
	if len(formats) == 0 {
		return nil
	}
	root := p.Descriptor()
	raw, err := content.FetchAll(ctx, store, root)
	if err != nil {
		return fmt.Errorf("%s: reading the installed manifest: %w", p.Source, err)
	}
	var msgs []string
	for _, pr := range verify.Contents(ctx, store, formats, p, root, raw) {
		msgs = append(msgs, pr.Kind+": "+pr.Detail)
	}
	if len(msgs) > 0 {
		return errkind.Markf(errkind.Mismatch, "%s@%s: the lock and the package disagree: %s", p.Source, p.Digest, strings.Join(msgs, "; "))
	}
	return nil
}
