package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
)

// A version tag may hold an older release of the same package: a signed
// release moved under a newer tag, at the source or in a mirror (TUF
// calls this a rollback, and refuses it by version numbers signed with
// the content). The package's own metadata decides:
//
//   - the version its format reads in it (format.Metadata.Version with
//     TaggedByVersion): a Porter bundle's bundle.json version, a Helm
//     chart's Chart.yaml version, a KUDO operator's operator.yaml
//     versions (checkDeclared);
//   - for a package whose format records no version (a Crossplane xpkg,
//     an image, an opaque artifact), the version its manifest's
//     annotations record (org.opencontainers.image.version, as
//     docker/metadata-action and `docker buildx --annotation` write it):
//     the manifest's digest, which its signature signs, covers it;
//   - failing that, the release just below the tag in the repository's
//     semver order: the same digest under the lower tag is that older
//     release, and, for an image, within one minor line (patch releases
//     are cut in order) a config `created` earlier than the lower
//     release's is an older build. This costs one HEAD of the lower tag
//     per package; for an image in the same minor line, one GET of the
//     lower tag's manifest instead, and the two images' configs, each
//     image read once per resolution (a mirror run's copy then takes
//     those configs from resolve.Options.Blobs).

// annotationVersion is the OCI annotation recording a package's version
// (image-spec annotations.md, org.opencontainers.image.version).
const annotationVersion = ocispec.AnnotationVersion

// maxConfigBytes caps the image config read for its `created` date.
const maxConfigBytes = 4 << 20

// versionAnnotation returns org.opencontainers.image.version of a
// manifest or index, if any.
func versionAnnotation(raw []byte) string {
	var m struct {
		Annotations map[string]string `json:"annotations"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return m.Annotations[annotationVersion]
}

// OlderReleaseError is a package found under a version tag whose digest is
// an older release of the same package, by the repository's lower tags:
// the same digest as a lower version's tag, or an image built before the
// lower version of its minor line.
type OlderReleaseError struct {
	// Ref is the reference the package was read from (SOURCE:TAG).
	Ref string
	// Tag is the tag it was found under, Digest what the tag points at.
	Tag, Digest string
	// Older is the lower version's tag, OlderDigest what it points at.
	Older, OlderDigest string
	// Created and OlderCreated are the images' `created` dates when they
	// decided; zero otherwise.
	Created, OlderCreated time.Time
}

func (e *OlderReleaseError) Error() string {
	why := fmt.Sprintf("it is the digest tagged %s", e.Older)
	if e.Digest != e.OlderDigest {
		why = fmt.Sprintf("it was created %s, before %s (%s) was, created %s",
			e.Created.UTC().Format(time.RFC3339), e.Older, e.OlderDigest, e.OlderCreated.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("%s: tag %s (%s) holds an older release than %s: %s; "+
		"an older release may have been moved under a newer tag; refusing it", e.Ref, e.Tag, e.Digest, e.Older, why)
}

// checkRelease refuses a package that a version tag names but that is an
// older release of it (see above). Tags that are not semantic versions
// and packages read by digest alone are not compared.
func (rs *roundState) checkRelease(ctx context.Context, source string, c choice, reqs []requirement, e *fetchEntry) error {
	if err := checkDeclared(source, c, reqs, e.meta); err != nil {
		return err
	}
	if c.tag == "" || e.meta == nil || e.meta.Version != "" {
		return nil // the format's own version decided
	}
	tv := ParseTag(c.tag)
	if tv == nil {
		return nil
	}
	if e.released != "" {
		annotated := &format.Metadata{Version: e.released, TaggedByVersion: true}
		if err := checkDeclared(source, c, reqs, annotated); err != nil {
			return err
		}
		return nil
	}
	if !rs.comparesReleases(source, e.meta.Kind) {
		return nil
	}
	tags, err := rs.r.listTags(ctx, source)
	if err != nil {
		return nil // the tag was read; a list that fails decides nothing
	}
	older, ov := previousRelease(tags, tv)
	if older == "" {
		return nil
	}
	repo, err := rs.r.open(source)
	if err != nil {
		return nil
	}
	// Within one minor line an image's build date decides too: the lower
	// release's manifest is then read whole by its tag (one GET) rather
	// than resolved (HEAD) and read again by digest.
	k := e.meta.Kind
	dates := ov.Major() == tv.Major() && ov.Minor() == tv.Minor() && (k == format.KindImage || k == format.KindArtifact)
	ot, err := rs.r.resolveTag(ctx, repo, source, older, dates)
	if err != nil {
		return nil
	}
	od := ot.desc
	refuse := &OlderReleaseError{Ref: source + ":" + c.tag, Tag: c.tag, Digest: e.desc.Digest.String(), Older: older, OlderDigest: od.Digest.String()}
	if od.Digest == e.desc.Digest {
		return errkind.Mark(errkind.Mismatch, refuse)
	}
	if ov.Major() != tv.Major() || ov.Minor() != tv.Minor() {
		return nil // a patch of an older line may be built after a newer release
	}
	if !dates {
		return nil // an xpkg's build date is its builder's (crossplane xpkg build writes none)
	}
	created, err1 := rs.r.createdOf(ctx, repo, source, e.desc, nil)
	oc, err2 := rs.r.createdOf(ctx, repo, source, od, ot.raw)
	if err1 != nil || err2 != nil || created.IsZero() || oc.IsZero() || !created.Before(oc) {
		return nil
	}
	refuse.Created, refuse.OlderCreated = created, oc
	return errkind.Mark(errkind.Mismatch, refuse)
}

// taggedEntry is one tag resolved for the rollback check: its
// descriptor, and its manifest when it was read whole.
type taggedEntry struct {
	once sync.Once
	desc ocispec.Descriptor
	raw  []byte
	err  error
}

// resolveTag resolves source:tag once per resolution, from the
// resolver's own read of that tag when it reads it anyway (read, being
// read, or chosen by a tag selection: whether the check or the root's
// visit gets there first, one read serves both; otherwise the check
// would HEAD a tag its root's read then GETs). With read, a
// tag not read yet is fetched whole (GET, its bytes checked against the
// digest the registry names) instead of resolved (HEAD), for a caller
// that reads the manifest next; when that read fails, the tag is
// resolved as without read.
func (r *resolver) resolveTag(ctx context.Context, repo format.Repository, source, tag string, read bool) (*taggedEntry, error) {
	r.mu.Lock()
	fe, selected := r.fetches[source+"@"+tag], r.selected[source+"@"+tag]
	r.mu.Unlock()
	if fe != nil || selected {
		// A tag this resolution reads anyway (read, being read, or
		// chosen by a tag selection and not yet begun): that read
		// serves the check, whichever of the two starts it.
		if e, err := r.fetch(ctx, source, choice{tag: tag}); err == nil {
			return &taggedEntry{desc: e.desc}, nil
		}
	}
	v, _ := r.released.LoadOrStore(source+":"+tag, &taggedEntry{})
	te := v.(*taggedEntry)
	te.once.Do(func() {
		release, err := r.acquire(ctx)
		if err != nil {
			te.err = err
			return
		}
		defer release()
		if read {
			if te.desc, te.raw = readTag(ctx, repo, tag); te.raw != nil {
				return
			}
		}
		// Resolved alone, or read whole and failed: the digest the
		// registry names still decides the comparison by digest.
		te.desc, te.err = repo.Resolve(ctx, tag)
	})
	return te, te.err
}

// readTag reads the manifest tag names whole, checked against the digest
// the registry names; nil when it cannot (a read that fails, a manifest
// larger than maxManifestBytes).
func readTag(ctx context.Context, repo format.Repository, tag string) (ocispec.Descriptor, []byte) {
	desc, rc, err := repo.FetchReference(ctx, tag)
	if err != nil {
		return ocispec.Descriptor{}, nil
	}
	defer rc.Close()
	if desc.Size > maxManifestBytes {
		return ocispec.Descriptor{}, nil
	}
	raw, err := content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
	if err != nil {
		return ocispec.Descriptor{}, nil
	}
	return desc, raw
}

// comparesReleases reports whether a package of kind read from source,
// which records no version of its own, is compared with the release
// below it: always for Crossplane packages (few tags, every one a
// release), and for images and other artifacts when the repository's
// tags were listed anyway (a range or a selection chose among them), so
// that an image named by an exact tag costs no tag list.
func (rs *roundState) comparesReleases(source, kind string) bool {
	switch kind {
	case format.KindCrossplaneConfiguration, format.KindCrossplaneProvider, format.KindCrossplaneFunction:
		return true
	}
	rs.r.mu.Lock()
	defer rs.r.mu.Unlock()
	_, listed := rs.r.tags[source]
	return listed
}

// previousRelease returns the highest tag of tags that is a semantic
// version below v (prereleases included), and its version; "" when none.
func previousRelease(tags []string, v *semver.Version) (string, *semver.Version) {
	best, bv := "", (*semver.Version)(nil)
	for _, t := range tags {
		tv := ParseTag(t)
		if tv == nil || !tv.LessThan(v) {
			continue
		}
		if bv == nil || bv.LessThan(tv) {
			best, bv = t, tv
		}
	}
	return best, bv
}

// createdEntry is one image's `created` date, read once per resolution.
type createdEntry struct {
	once    sync.Once
	created time.Time
	err     error
}

// createdOf returns the `created` date of an image's config (see
// readCreated), reading each image of source once per resolution (an
// image is both a selected release and the release below another). raw,
// when set, is desc's manifest, already read and checked. Each config
// read is offered to Options.Blobs, so that a mirror run's copy does not
// read it again.
func (r *resolver) createdOf(ctx context.Context, repo format.Repository, source string, desc ocispec.Descriptor, raw []byte) (time.Time, error) {
	v, _ := r.created.LoadOrStore(source+"@"+desc.Digest.String(), &createdEntry{})
	ce := v.(*createdEntry)
	ce.once.Do(func() {
		ce.created, ce.err = readCreated(ctx, repo, desc, raw, func(d ocispec.Descriptor, b []byte) { r.opts.Blobs.Put(source, d, b) })
	})
	return ce.created, ce.err
}

// readCreated returns the `created` date of an image's config: of desc's
// config, or for an index of its linux/amd64 manifest's (else of its
// first manifest that is no attestation). Zero when it records none. raw,
// when set, is desc's manifest; keep is given each config read.
func readCreated(ctx context.Context, repo format.Repository, desc ocispec.Descriptor, raw []byte, keep func(ocispec.Descriptor, []byte)) (time.Time, error) {
	if raw == nil {
		var err error
		if raw, err = fetchCapped(ctx, repo, desc, maxManifestBytes); err != nil {
			return time.Time{}, err
		}
	}
	var m struct {
		MediaType string               `json:"mediaType"`
		Config    ocispec.Descriptor   `json:"config"`
		Manifests []ocispec.Descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return time.Time{}, err
	}
	if len(m.Manifests) > 0 {
		i := slices.IndexFunc(m.Manifests, func(d ocispec.Descriptor) bool {
			return d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == "amd64"
		})
		if i < 0 {
			i = slices.IndexFunc(m.Manifests, func(d ocispec.Descriptor) bool { return d.Platform == nil || d.Platform.OS != "unknown" })
		}
		if i < 0 {
			return time.Time{}, nil
		}
		return readCreated(ctx, repo, m.Manifests[i], nil, keep)
	}
	if m.Config.Digest == "" {
		return time.Time{}, nil
	}
	b, err := fetchCapped(ctx, repo, m.Config, maxConfigBytes)
	if err != nil {
		return time.Time{}, err
	}
	keep(m.Config, b)
	var cfg struct {
		Created *time.Time `json:"created"`
	}
	if json.Unmarshal(b, &cfg) != nil || cfg.Created == nil {
		return time.Time{}, nil
	}
	return *cfg.Created, nil
}

// fetchCapped reads desc whole, refusing more than max bytes.
func fetchCapped(ctx context.Context, repo format.Repository, desc ocispec.Descriptor, max int64) ([]byte, error) {
	if desc.Size > max {
		return nil, fmt.Errorf("%s: %d bytes is more than the %d allowed", desc.Digest, desc.Size, max)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return content.ReadAll(io.LimitReader(rc, desc.Size+1), desc)
}
