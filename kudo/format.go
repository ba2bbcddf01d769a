package kudo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
)

// Format is the KUDO operator format.
type Format struct {
	// Settings are the format's ferry.yaml keys.
	Settings Settings
	// repos reads KUDO repositories; one per process, so that a run reads
	// each index.yaml once.
	repos *RepoCache
}

// New returns the KUDO format.
func New() Format {
	return Format{Settings: Settings{Repositories: map[string]string{Community: CommunityURL}}, repos: NewRepoCache()}
}

var (
	_ format.Reader          = Format{}
	_ format.Origin          = Format{}
	_ resolve.Rules          = Format{}
	_ mirrorset.SectionOwner = Format{}
	_ mirrorset.RootOwner    = Format{}
	_ mirrorset.InputReader  = Format{}
	_ format.MirrorOpener    = Format{}
)

// Name returns "kudo".
func (Format) Name() string { return "kudo" }

// Kinds lists the package kinds the format reads.
func (Format) Kinds() []string { return []string{format.KindKudoOperator} }

// Sections lists the ferry.yaml keys the format owns.
func (Format) Sections() []string { return []string{KeyOperators, KeyKudo} }

// RootSections lists the key that names roots: `operators`. A ferry.yaml
// read for the settings of a ROOT given on the command line does not add
// its operators as roots.
func (Format) RootSections() []string { return []string{KeyOperators} }

// CheckSections validates the format's ferry.yaml keys.
func (Format) CheckSections(m *mirrorset.MirrorSet) error {
	_, err := settingsOf(m)
	return err
}

// Configure returns the format with ferry.yaml's settings.
func (f Format) Configure(m *mirrorset.MirrorSet) (format.Format, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	f.Settings = s
	if f.repos == nil {
		f.repos = NewRepoCache()
	}
	return f, nil
}

// SectionRoots returns the roots of ferry.yaml's `operators:`: a
// repository package or a tarball URL is a root; a local folder or .tgz
// is not published, so its dependencies and images are.
func (f Format) SectionRoots(m *mirrorset.MirrorSet) ([]mirrorset.Package, error) {
	s, err := settingsOf(m)
	if err != nil {
		return nil, err
	}
	f.Settings = s
	var out []mirrorset.Package
	for i, o := range s.Operators {
		where := fmt.Sprintf("%s[%d]", KeyOperators, i)
		switch classify(o.Package) {
		case pkgFolder:
			set := &mirrorset.MirrorSet{}
			op, err := f.localRoots(o.Package, set)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if len(set.Packages) == 0 && !op.hasFolders() {
				// As for the package given as ROOT: an entry locking
				// nothing is a mistake, not an empty lock.
				return nil, fmt.Errorf("%s: %s: %w", where, o.Package, errNothing(op))
			}
			out = append(out, set.Packages...)
		case pkgURL:
			out = append(out, mirrorset.Package{Ref: SourcePrefix + o.Package, Format: "kudo"})
		default:
			repoURL, err := s.repositoryURL(o.Repo)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			ref, c := versionedRef(Source(repoURL, o.Package), o.AppVersion, o.OperatorVersion)
			out = append(out, mirrorset.Package{Ref: ref, Version: c, Format: "kudo"})
		}
	}
	return out, nil
}

// Qualify completes a reference a package's dependency names: operator
// references are written fully ("kudo+https://REPO/NAME"), and images are
// normalised the Docker way, as the kubelet's runtime reads them.
func (Format) Qualify(ref string, _ ociref.Reference) (ociref.Reference, error) {
	if ociref.IsURLSource(ref) {
		return ociref.Parse(ref)
	}
	return ociref.ParseNormalized(ref, "")
}

// Policy is `kubectl kudo install`'s: every KudoOperator task installs
// its own instance, so every edge is resolved on its own (one operator
// may be locked at two versions), to the first version of the index
// order (appVersion, then operatorVersion, newest first) that matches
// the appVersion and operatorVersion asked for
// (kudobuilder/kudo pkg/kudoctl/util/repo/resolver_repo.go
// FindFirstMatch, index.go sortPackages).
func (Format) Policy() resolve.Policy {
	return resolve.Policy{Name: "newest (KUDO)", Unshared: true, Pick: Pick}
}

// versionedRef returns the reference and constraint for a package asked
// at appVersion and operatorVersion: both give the tag APP_OPV; one alone
// is a constraint Pick reads ("appVersion=X" or "operatorVersion=Y"). It
// is no semver range: a locked version is kept only if the resolver asks
// Pick whether it still matches (a tag APP_OPV reads as semver APP+OPV,
// whose build metadata no range can test).
func versionedRef(ref, app, opv string) (string, string) {
	switch {
	case app != "" && opv != "":
		return ref + ":" + versionTag(app, opv), ""
	case app != "":
		return ref, "appVersion=" + app
	case opv != "":
		return ref, "operatorVersion=" + opv
	}
	return ref, ""
}

// splitTag splits a tag APP_OPV (or OPV) into its versions.
func splitTag(tag string) (app, opv string) {
	i := strings.LastIndexByte(tag, '_')
	if i < 0 {
		return "", tag
	}
	return tag[:i], tag[i+1:]
}

// Pick chooses among tags APP_OPV for reqs as Policy describes. A
// constraint is "appVersion=X", "operatorVersion=Y", both joined by ",",
// or a semver range on the operatorVersion.
func Pick(reqs []resolve.Request, tags []string) (string, error) {
	type want struct {
		tag, app, opv string
		rng           *semver.Constraints
	}
	var wants []want
	for _, r := range reqs {
		w := want{tag: r.Tag}
		if r.Constraint != "" {
			for _, part := range strings.Split(r.Constraint, ",") {
				k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
				switch {
				case ok && k == "appVersion":
					w.app = v
				case ok && k == "operatorVersion":
					w.opv = v
				default:
					c, err := semver.NewConstraint(r.Constraint)
					if err != nil {
						return "", fmt.Errorf("%s: %q is neither appVersion=X, operatorVersion=Y nor a version range: %w", r.From, r.Constraint, err)
					}
					w.rng = c
				}
			}
		}
		wants = append(wants, w)
	}
	var cands []string
	for _, t := range tags {
		app, opv := splitTag(t)
		ok := true
		for _, w := range wants {
			if (w.tag != "" && w.tag != t) || (w.app != "" && w.app != app) || (w.opv != "" && w.opv != opv) {
				ok = false
				break
			}
			if w.rng != nil {
				v, err := semver.NewVersion(opv)
				if err != nil || !w.rng.Check(v) {
					ok = false
					break
				}
			}
		}
		if ok {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		var asked []string
		for _, r := range reqs {
			switch {
			case r.Constraint != "":
				asked = append(asked, fmt.Sprintf("%s asks %s", r.From, r.Constraint))
			case r.Tag != "":
				asked = append(asked, fmt.Sprintf("%s asks %s", r.From, r.Tag))
			}
		}
		list := append([]string(nil), tags...)
		sortTags(list)
		if len(list) == 0 {
			list = []string{"none"}
		}
		return "", fmt.Errorf("no operator version matches: %s; versions: %s", strings.Join(asked, " and "), strings.Join(list, ", "))
	}
	sortTags(cands)
	return cands[0], nil
}

// sortTags sorts tags APP_OPV newest first (SortNewestFirst's order).
func sortTags(tags []string) {
	sort.SliceStable(tags, func(i, j int) bool {
		ai, oi := splitTag(tags[i])
		aj, oj := splitTag(tags[j])
		return newer(ai, oi, aj, oj)
	})
}

// Owns reports whether source is a KUDO package: kudo+http(s)://….
func (Format) Owns(source string) bool {
	_, _, _, ok := SplitSource(source)
	return ok
}

// Open returns source as a read-only repository of package artifacts.
func (f Format) Open(source string, hc *http.Client) (format.Repository, error) {
	repos := f.repos
	if repos == nil {
		repos = NewRepoCache()
	}
	return repos.Open(source, hc)
}

// OpenMirror returns source read at location, a mirror of its repository
// (RepoCache.OpenMirror).
func (f Format) OpenMirror(source, location string, hc *http.Client) (format.Repository, error) {
	repos := f.repos
	if repos == nil {
		repos = NewRepoCache()
	}
	return repos.OpenMirror(source, location, hc)
}

// MirrorPath is "kudo-operators/NAME" (see MirrorPath).
func (Format) MirrorPath(source string) string { return MirrorPath(source) }

// Match reports whether a manifest is a KUDO package artifact.
func (Format) Match(_ ocispec.Descriptor, manifest []byte) bool {
	if !bytes.Contains(manifest, []byte(ConfigMediaType)) {
		return false
	}
	var m ocispec.Manifest
	return json.Unmarshal(manifest, &m) == nil && m.Config.MediaType == ConfigMediaType
}

// Read reads a package artifact: its config (the repository the package
// came from) and its tarball.
func (f Format) Read(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*format.Metadata, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(manifest, &m); err != nil {
		return nil, fmt.Errorf("KUDO package manifest: %w", err)
	}
	var layer *ocispec.Descriptor
	for i, l := range m.Layers {
		if l.MediaType == PackageLayerMediaType {
			layer = &m.Layers[i]
			break
		}
	}
	if layer == nil {
		return nil, fmt.Errorf("KUDO package manifest %s has no layer of type %s", desc.Digest, PackageLayerMediaType)
	}
	cb, err := fetchCapped(ctx, repo, m.Config, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("KUDO package config %s: %w", m.Config.Digest, err)
	}
	var cfg Config
	if err := json.Unmarshal(cb, &cfg); err != nil {
		return nil, fmt.Errorf("KUDO package config %s: %w", m.Config.Digest, err)
	}
	data, err := fetchCapped(ctx, repo, *layer, MaxPackageSize)
	if err != nil {
		return nil, fmt.Errorf("KUDO package layer %s: %w", layer.Digest, err)
	}
	p, err := LoadArchive(data)
	if err != nil {
		return nil, fmt.Errorf("KUDO package layer %s: %w", layer.Digest, err)
	}
	if p.Operator.Name != cfg.Name || p.Operator.AppVersion != cfg.AppVersion || p.Operator.OperatorVersion != cfg.OperatorVersion {
		return nil, fmt.Errorf("KUDO package %s: its config says %s %s, its operator.yaml %s %s", desc.Digest, cfg.Name, versionTag(cfg.AppVersion, cfg.OperatorVersion), p.Operator.Name, p.Version())
	}
	repoURL := cfg.Repository
	if repoURL == "" {
		repoURL = f.Settings.defaultRepository()
	}
	op, err := f.walk(p, repoURL, nil)
	if err != nil {
		return nil, err
	}
	if err := op.checkImages(op.Name); err != nil {
		return nil, err
	}
	meta := &format.Metadata{
		Kind:    format.KindKudoOperator,
		Name:    p.Operator.Name,
		Version: p.Version(),
		// The artifact is tagged APPVERSION_OPERATORVERSION (repo.go
		// buildPackage), from operator.yaml: a tag naming other versions
		// holds another release.
		TaggedByVersion: true,
		Dependencies:    append(op.dependencies(), op.imageDeps()...),
		Warnings:        op.warnings(),
		Attributes:      map[string]string{AttributeTarballDigest: layer.Digest.String()},
		Data:            op,
	}
	return meta, nil
}

// AttributeTarballDigest is the lock attribute holding a package
// tarball's sha256 (the artifact's layer): for a package from a KUDO
// repository, the digest its index.yaml records, which the download was
// checked against. `ferry install` checks the tarball it writes against
// it once more.
const AttributeTarballDigest = "tarballDigest"

func fetchCapped(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, max int64) ([]byte, error) {
	if desc.Size > max {
		return nil, fmt.Errorf("%d bytes is more than the %d allowed", desc.Size, max)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
}

// pkgKind is what a KudoOperator task's spec.package names.
type pkgKind int

const (
	pkgName   pkgKind = iota // a package in a repository
	pkgFolder                // a local folder or .tgz
	pkgURL                   // a package tarball's URL
)

// classify tells what spec.package names, as
// kudobuilder/kudo pkg/kudoctl/packages/resolver/resolver.go Resolve
// tells it: a path ("./", "../", absolute) is local, an http(s) URL a
// tarball, anything else a repository package. (KUDO also takes a bare
// name that happens to exist on disk as local; ferry does not, so that
// a name means the same everywhere.)
func classify(pkg string) pkgKind {
	l := strings.ToLower(pkg)
	switch {
	case strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://"):
		return pkgURL
	case strings.HasPrefix(pkg, "./") || strings.HasPrefix(pkg, "../") || strings.HasPrefix(pkg, "/") || filepath.IsAbs(pkg) || pkg == "." || pkg == "..":
		return pkgFolder
	case strings.HasSuffix(l, ".tgz") || strings.HasSuffix(l, ".tar.gz"):
		return pkgFolder
	}
	return pkgName
}
