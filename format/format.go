// Package format defines what a package format tells the resolver: how to
// recognise a package's manifest, and which dependencies, images and mixins
// it declares.
package format

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/ociref"
)

// Kinds of package ferry knows. A manifest no format claims is an opaque
// artifact: locked, mirrored and verified, with no dependencies.
const (
	KindPorterBundle            = "porter.bundle"
	KindCrossplaneConfiguration = "crossplane.configuration"
	KindCrossplaneProvider      = "crossplane.provider"
	KindCrossplaneFunction      = "crossplane.function"
	KindArtifact                = "oci.artifact"
	KindHelmChart               = "helm.chart"
	// KindKudoOperator is a KUDO operator package (KEP-29), mirrored as
	// one OCI artifact holding the package tarball.
	KindKudoOperator = "kudo.operator"
	// KindImage is a container image (a manifest, or an index of
	// platform manifests) that a package deploys, found by the format
	// (the images a Helm chart's templates name).
	KindImage = "image"
)

// Reader reads one package format's metadata from a registry.
type Reader interface {
	// Match reports whether the manifest (desc, with its raw bytes) is a
	// package of this format.
	Match(desc ocispec.Descriptor, manifest []byte) bool
	// Read reads the package's metadata, fetching what else it needs
	// (config blobs, layers, platform manifests) from repo. It fetches
	// each object at most once.
	Read(ctx context.Context, repo content.Fetcher, desc ocispec.Descriptor, manifest []byte) (*Metadata, error)
}

// ImageCarrier is a Reader whose packages carry images of their own in
// their manifest graph (Metadata.Images: a Porter bundle's invocation and
// component images), which the lock records in images[]. verify --deep
// reads such a package again to check that images[] lacks none.
type ImageCarrier interface {
	Reader
	// CarriesImages reports true.
	CarriesImages() bool
}

// Metadata is what the resolver needs to know about one package.
type Metadata struct {
	// Kind is one of the Kind constants.
	Kind string
	// Name is the package's own name, when the format records one.
	Name string
	// Version is the package's own version, when the format records one.
	Version string
	// TaggedByVersion reports that the format publishes a package under a
	// tag spelling its Version (Porter tags a bundle vVERSION, "+" written
	// "_"), so that a tag chosen by a version range must name the version
	// the package declares: the resolver refuses a package found under a
	// semver tag other than its own Version (an older release moved under
	// a newer tag). Porter, Helm and KUDO set it. For a package that
	// declares no version (a Crossplane xpkg, an image), the resolver
	// reads which release it is from its manifest's
	// org.opencontainers.image.version annotation, else from the release
	// below its tag (resolve/release.go).
	TaggedByVersion bool
	// Dependencies lists the packages this one requires, in declared order.
	Dependencies []Dependency
	// Replaces lists repositories (without tag or digest) this package
	// replaces.
	Replaces []string
	// Images lists the images the package carries, for relocation.
	Images []Image
	// Mixins lists the Porter mixins a bundle was built with.
	Mixins []Mixin
	// Attributes are what the format records in the lock beside the
	// fields every package has (an xpkg's `crossplane:`, its
	// spec.crossplane.version constraint); keys are registered with
	// lock.RegisterAttribute.
	Attributes map[string]string
	// Warnings are non-fatal findings, printed by the CLI.
	Warnings []string
	// Data is the format's own view of the package (for a Porter bundle,
	// its parameters, credentials and outputs), for the format's checks
	// after resolution. Pipeline packages never look inside it.
	Data any
}

// Dependency is one dependency as its parent declares it.
type Dependency struct {
	// Name is the dependency's name in its parent (Porter's requires key),
	// or the reference for formats without names.
	Name string
	// Ref is the reference as written, possibly partial or empty (an
	// interface-only Porter v2 dependency).
	Ref string
	// Constraint is a semver constraint, "sha256:..." digest, or empty
	// (use the tag or digest in Ref).
	Constraint string
	// Prereleases allows prerelease versions (Porter v1 `prereleases`).
	Prereleases bool
	// Interface is true when the dependency declares only an interface.
	Interface bool
	// InterfaceRef is the bundle whose parameters, credentials and outputs
	// define the dependency's interface (Porter PEP003
	// `interface.reference`); it is part of the closure.
	InterfaceRef string
	// InterfaceDocument is the dependency's inline interface document
	// (PEP003 `interface.document`), as JSON.
	InterfaceDocument []byte
	// SharingGroup names the sharing group the dependency belongs to
	// (Porter v2 `sharing.group.name` with sharing on): every dependency of
	// one group on one repository resolves to one version. Empty: the
	// dependency is resolved on its own (unshared) when its format's
	// version policy allows several versions of one repository.
	SharingGroup string
	// After names sibling dependencies that must be installed first
	// (Porter v2 output wiring).
	After []string
	// Kind, when set, is the kind the dependency is locked as when no
	// format claims its manifest (KindImage for the images a Helm chart
	// deploys); a format that reads the manifest decides otherwise.
	Kind string
}

// Image is an image a package carries.
type Image struct {
	// Name is the image's name in the package ("invocation" for the
	// invocation image, the `images` key for components).
	Name string
	// Ref is the original reference as the package records it.
	Ref string
	// Descriptor locates the image in the package's repository.
	Descriptor ocispec.Descriptor
}

// Mixin is a mixin a Porter bundle was built with
// (`custom."sh.porter".mixins.NAME`).
type Mixin struct {
	// Name is the mixin's name.
	Name string
	// Version is the recorded version; empty: unknown, resolve to latest.
	Version string
	// URL is the feed or download location the bundle records, if any.
	URL string
	// Binaries maps a binary's file name (NAME-OS-ARCH[.exe]) to the
	// digest the bundle records for it.
	Binaries map[string]string
}

// ErrNotPackage is returned (wrapped) by a Reader's Read when the manifest
// matched cheaply but turned out not to hold a package of its format. The
// resolver then treats the manifest as an opaque artifact.
var ErrNotPackage = errors.New("not a package of this format")

// Format is one package format: Porter bundles, Porter mixins, Crossplane
// packages. Every format is registered once, in package formats; each
// pipeline step asks a format for what it needs through a small interface
// of its own, which the format implements when the step concerns it:
//
//   - mirrorset.InputReader: the local files it accepts as ROOT
//     (porter.yaml, crossplane.yaml);
//   - mirrorset.SectionOwner: the ferry.yaml keys it owns (mixins,
//     porter, crossplane);
//   - Reader: recognising and reading its packages in a registry;
//   - resolve.Rules: qualifying a reference written in one of its
//     packages, and choosing a dependency's version (its version policy,
//     and whether a graph may hold several versions of one repository);
//   - resolve.Checker: checks of the whole closure once resolved
//     (Porter's interface documents);
//   - ferry.Extension: content beyond registry packages (mixin binaries):
//     its lock section, its mirror, archive and verify steps;
//   - install.Writer: what `ferry install` writes for its packages.
//
// Pipeline packages (resolve, lock, relocate, verify, install and the root
// package) never import a format package.
type Format interface {
	// Name is the format's short name: "porter", "crossplane", "mixin".
	Name() string
}

// Repository is a read-only view of one source repository: what
// resolution reads (tags, manifests by tag or digest, blobs) and what a
// copy reads. *remote.Repository implements it, and so does an Origin's
// view of a source that is not a registry.
type Repository interface {
	content.ReadOnlyStorage
	content.Resolver
	registry.ReferenceFetcher
	registry.TagLister
}

// Origin is a format whose packages may come from somewhere other than an
// OCI registry (Helm's classic HTTP chart repositories). It presents such
// a source as a Repository holding exactly the OCI artifacts the format
// pushes to a mirror, so that resolution, locking, mirroring and
// verification treat it like any registry repository.
type Origin interface {
	Format
	// Owns reports whether source (a package source as the lock records
	// it) is one of the format's non-registry sources.
	Owns(source string) bool
	// Open returns source as a read-only repository; hc carries the run's
	// TLS, proxy, timeouts and retries.
	Open(source string, hc *http.Client) (Repository, error)
	// MirrorPath is the repository path, below a mirror's HOST/PREFIX,
	// where source lands ("charts/nginx").
	MirrorPath(source string) string
}

// OriginOf returns the format among formats that owns source (see
// Origin), or false when source is a registry repository.
func OriginOf(formats []Format, source string) (Origin, bool) {
	for _, f := range formats {
		if o, ok := f.(Origin); ok && o.Owns(source) {
			return o, true
		}
	}
	return nil, false
}

// Registries opens registry repositories; *client.Client implements it.
type Registries interface {
	Repository(repo string) (*remote.Repository, error)
}

// SourceMapper is a Registries that opens, for every source, the registry
// repository standing in for it (the mirror, when `ferry verify --resolve`
// proves the mirror alone resolves the closure), non-registry sources
// included.
type SourceMapper interface {
	MapsSources() bool
}

// httpClienter is what a Registries offers when it also fetches plain
// HTTP content (*client.Client): the run's TLS, proxy, timeouts and
// retries.
type httpClienter interface {
	HTTPClient() *http.Client
}

// Open opens the repository named source for reading: through the format
// that owns it when it is not a registry (a chart in a classic Helm
// repository, see Origin), else through regs.
//
// A Registries that maps every source to another registry repository (a
// mirror standing in for the sources, see SourceMapper), or that reads
// sources from their mirrors (SourceOpener), opens every source itself.
func Open(regs Registries, formats []Format, source string) (Repository, error) {
	if m, ok := regs.(SourceMapper); ok && m.MapsSources() {
		repo, err := regs.Repository(source)
		if err != nil {
			return nil, err
		}
		return repo, nil
	}
	if o, ok := regs.(SourceOpener); ok {
		return o.OpenSource(formats, source)
	}
	if o, ok := OriginOf(formats, source); ok {
		hc := http.DefaultClient
		if c, ok := regs.(httpClienter); ok {
			hc = c.HTTPClient()
		}
		return o.Open(source, hc)
	}
	if ociref.IsURLSource(source) {
		return nil, fmt.Errorf("%s: no package format reads this kind of URL; name a registry repository as HOST/PATH, without a scheme", source)
	}
	repo, err := regs.Repository(source)
	if err != nil {
		return nil, err
	}
	return repo, nil
}

// SourceOpener is a Registries that opens sources itself: it reads a
// source from other locations serving the same content (the mirrors of
// ferry.yaml's `mirrors:`, see package sourcemirror) while the source
// keeps its name. Open hands it every source.
type SourceOpener interface {
	OpenSource(formats []Format, source string) (Repository, error)
}

// MirrorOpener is an Origin whose artifacts name the repository they
// were published in (a KUDO package's config names its repository, where
// its dependencies are looked up). OpenMirror reads source at location, a
// mirror serving the same content (sourcemirror), and builds the
// artifacts source itself gives: the same digests, and the source's
// names, wherever they were read.
type MirrorOpener interface {
	Origin
	OpenMirror(source, location string, hc *http.Client) (Repository, error)
}

// OpenMirror opens location, a mirror of source, for reading source's
// content: through the format's MirrorOpener when the format that owns
// location has one, else as Open opens location.
func OpenMirror(regs Registries, formats []Format, source, location string) (Repository, error) {
	if location != source {
		if o, ok := OriginOf(formats, location); ok {
			if m, ok := o.(MirrorOpener); ok {
				hc := http.DefaultClient
				if c, ok := regs.(httpClienter); ok {
					hc = c.HTTPClient()
				}
				return m.OpenMirror(source, location, hc)
			}
		}
	}
	return Open(regs, formats, location)
}
