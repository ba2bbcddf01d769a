package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/manifest"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
)

// Archive checks an archive written by `ferry mirror --to-archive` offline,
// before anything is imported from it: with key, that the archive's
// ferry.lock.sig signs the exact lock bytes it carries; then, for every
// package of that lock, that every manifest and blob of its graph is in
// the archive and hashes to its digest, that its images are nodes of the
// graph, and that every signature artifact the lock records is there and
// whole. Problems go into the report (exit code 3); the error is for an
// archive that cannot be read at all.
func Archive(ctx context.Context, path string, key *signature.PublicKey) (*Report, error) {
	rep, _, err := ArchiveDetail(ctx, path, key)
	return rep, err
}

// ArchiveInfo describes the archive ArchiveDetail checked.
type ArchiveInfo struct {
	// Paths are its tars: one, or every part of a split archive.
	Paths []string `json:"paths"`
	// Since is, for an incremental archive (--since), the digest of the
	// earlier lock whose import it expects in the mirror.
	Since string `json:"since,omitempty"`
	// Expected are the nodes an incremental archive leaves to the earlier
	// import: named by its lock, not in the archive, not a problem here.
	Expected []relocate.MissingNode `json:"expected,omitempty"`
}

// ArchiveDetail is Archive for any archive ferry writes: a split one,
// given by any of its parts (every part is checked, and must be of one
// archive), and an incremental one, whose nodes left to the earlier
// import are listed in the ArchiveInfo instead of reported missing.
func ArchiveDetail(ctx context.Context, path string, key *signature.PublicKey) (*Report, *ArchiveInfo, error) {
	arc, err := relocate.OpenArchive(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer arc.Close()
	l, data, sig := arc.Lock, arc.LockData, arc.LockSig
	info := &ArchiveInfo{Paths: arc.Paths, Since: arc.Meta.Since}
	rep := &Report{Deep: true, Problems: []Problem{}}
	lockRef := path + ":" + relocate.ArchiveLockFile
	if key != nil {
		switch {
		case sig == nil:
			rep.Problems = append(rep.Problems, Problem{Package: "(lock)", Ref: lockRef, Kind: ProblemSignature, Detail: "the archive carries no " + relocate.ArchiveLockFile + signature.SigSuffix})
		default:
			if err := key.Verify(data, signature.DecodeBlobSignature(sig)); err != nil {
				rep.Problems = append(rep.Problems, Problem{Package: "(lock)", Ref: lockRef, Kind: ProblemSignature, Detail: fmt.Sprintf("%s%s does not sign the archive's lock: %v", relocate.ArchiveLockFile, signature.SigSuffix, err)})
			}
		}
	}
	store := arc.Store
	// One blob file per digest in the archive: each is re-hashed once,
	// however many packages share it.
	hashed := map[blobKey]bool{}
	defer func() { rep.UniqueBlobs = len(hashed) }()
	for _, p := range l.Resolved() {
		rep.Packages++
		a := &archiveCheck{store: store, rep: rep, pkg: p.Source, seen: map[digest.Digest]bool{}, hashed: hashed}
		if arc.Incremental() {
			a.expected = &info.Expected
		}
		if err := a.node(ctx, p.Descriptor()); err != nil {
			return nil, nil, err
		}
		// Below a node left to the earlier import, the images cannot be
		// told apart offline: the import checks them.
		if !a.partial {
			if err := p.CheckImages(func(d digest.Digest) bool { return a.seen[d] }); err != nil {
				rep.Problems = append(rep.Problems, Problem{Package: p.Source, Ref: p.Source + "@" + p.Digest, Kind: ProblemImage, Detail: err.Error()})
			}
		}
		for _, s := range p.Signatures {
			d, err := digest.Parse(s.Digest)
			if err != nil {
				continue // lock.Parse refuses such a lock
			}
			if err := a.node(ctx, ocispec.Descriptor{MediaType: s.MediaType, Digest: d, Size: s.Size}); err != nil {
				return nil, nil, err
			}
		}
	}
	// Extension artifacts (porter-mixins/NAME:TAG) are re-hashed too: an
	// import pushes them.
	names, err := client.ListTags(ctx, store)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range names {
		if host, _, ok := strings.Cut(name, "/"); ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
			continue // a package's tag or signature, checked above
		}
		desc, err := store.Resolve(ctx, name)
		if err != nil {
			return nil, nil, err
		}
		a := &archiveCheck{store: store, rep: rep, pkg: name, seen: map[digest.Digest]bool{}, hashed: hashed}
		if arc.Incremental() {
			a.expected = &info.Expected
		}
		if err := a.node(ctx, desc); err != nil {
			return nil, nil, err
		}
	}
	return rep, info, nil
}

// archiveCheck re-hashes one package's graph inside an archive.
type archiveCheck struct {
	store *oci.ReadOnlyStore
	rep   *Report
	pkg   string
	seen  map[digest.Digest]bool
	// hashed is shared by the checks of one archive: the blobs read
	// already, true when they hashed to their digest (a blob that did not
	// is read again, and reported, for each package).
	hashed map[blobKey]bool
	// expected, for an incremental archive, collects the nodes it lacks
	// (left to the earlier import) instead of reporting them missing;
	// partial tells that one was.
	expected *[]relocate.MissingNode
	partial  bool
}

// node reads desc from the archive, hashing it, and then its children
// when it is a manifest.
func (a *archiveCheck) node(ctx context.Context, desc ocispec.Descriptor) error {
	if a.seen[desc.Digest] {
		return nil
	}
	a.seen[desc.Digest] = true
	isManifest := manifest.IsManifest(desc.MediaType)
	key := blobKey{desc.Digest, desc.Size}
	if !isManifest && a.hashed[key] {
		// Read and proven for another package: the same file.
		a.rep.Blobs++
		return nil
	}
	ref := a.pkg + "@" + desc.Digest.String()
	problem := func(kind, format string, args ...any) {
		a.rep.Problems = append(a.rep.Problems, Problem{Package: a.pkg, Ref: ref, Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	rc, err := a.store.Fetch(ctx, desc)
	if errors.Is(err, errdef.ErrNotFound) {
		if a.expected != nil {
			a.partial = true
			*a.expected = append(*a.expected, relocate.MissingNode{Package: a.pkg, Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size})
			return nil
		}
		problem(ProblemMissing, "not in the archive")
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s from the archive: %w", ref, err)
	}
	defer rc.Close()
	if isManifest {
		a.rep.Manifests++
	} else {
		a.rep.Blobs++
	}
	if desc.Size <= 0 {
		problem(ProblemSize, "the lock or its parent manifest gives no size")
		return nil
	}
	if !isManifest {
		// Streamed: a layer may be gigabytes.
		vr := content.NewVerifyReader(rc, desc)
		n, err := io.Copy(io.Discard, vr)
		a.rep.HashedBlobs++
		a.rep.HashedBytes += n
		if err == nil {
			err = vr.Verify()
		}
		a.hashed[key] = err == nil
		if err != nil {
			problem(ProblemDigest, "%v", err)
		}
		return nil
	}
	raw, err := content.ReadAll(rc, desc)
	if err != nil {
		problem(ProblemDigest, "%v", err)
		return nil
	}
	children, err := manifest.Children(raw)
	if err != nil {
		problem(ProblemUnreadable, "%v", err)
		return nil
	}
	for _, c := range children {
		if err := a.node(ctx, c); err != nil {
			return err
		}
	}
	return nil
}
