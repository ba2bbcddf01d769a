package relocate

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
)

// ArchiveLockFile is the lock's name inside an archive;
// ArchiveLockSigFile its cosign blob signature, carried when the lock was
// signed.
const (
	ArchiveLockFile    = "ferry.lock"
	ArchiveLockSigFile = ArchiveLockFile + ".sig"
)

// An archive is a tar of an OCI image layout holding every package of a
// lock (whole graphs by digest, with the signatures of every manifest of
// each graph) and the lock itself as ferry.lock. Each package is named in
// index.json by SOURCE:TAG for each of its tags (or SOURCE@DIGEST when it
// has no tag), each cosign signature, attestation or SBOM by
// SOURCE:sha256-HEX.sig (.att, .sbom); OCI referrers are kept untagged in
// index.json and found again through their subject field.

// archiveRef names a tag of p's repository inside an archive.
func archiveRef(p *lock.Package, tag string) string { return p.Source + ":" + tag }

// archiveName is the name of p's root manifest inside an archive.
func archiveName(p *lock.Package) string {
	if p.Version != "" {
		return archiveRef(p, p.Version)
	}
	return p.Source + "@" + p.Digest
}

// archiveNames are every name of p's root manifest inside an archive:
// archiveName, then SOURCE:TAG for each other tag of the digest
// (lock.Package.Tags), which an import pushes as tags too.
func archiveNames(p *lock.Package) []string {
	out := []string{archiveName(p)}
	for _, t := range p.Tags {
		out = append(out, archiveRef(p, t))
	}
	return out
}

// ToArchive writes every resolved package of l, and l, into a tar archive
// at path for carrying across an air gap. extra, when set, adds more
// artifacts (mixins) to the archive's layout. The layout is built in a
// staging directory beside path (see StagePath), kept after a failure or a
// kill so that a run with the same lock resumes it, and the tar is written
// inside it and renamed into place. Every package that can be copied is;
// the failures are reported together.
func ToArchive(ctx context.Context, l *lock.Lock, path string, opts Options, extra func(context.Context, *oci.Store) error) (*Report, error) {
	return ToArchiveSigned(ctx, l, nil, path, opts, extra)
}

// ToArchiveSigned is ToArchive for a signed lock: sig, when set, is the
// cosign blob signature of l's canonical bytes (l.Marshal, what the archive
// carries as ferry.lock), written beside it as ferry.lock.sig.
func ToArchiveSigned(ctx context.Context, l *lock.Lock, sig []byte, path string, opts Options, extra func(context.Context, *oci.Store) error) (*Report, error) {
	rep, _, err := ToArchiveParts(ctx, l, sig, path, opts, ArchiveOptions{}, extra)
	return rep, err
}

// ToArchiveParts is ToArchiveSigned writing an incremental archive
// (aopts.Since: only what the earlier lock's import lacks) and/or one
// split into parts of at most aopts.MaxSize bytes (PartPath names them;
// an archive that fits in one part is written to path). Every part
// carries ferry.lock, ferry.lock.sig when sig is set, and
// ferry-archive.json (ArchiveMeta) tying the parts together. The layout
// is staged whole (the staging is shared with a full archive of the same
// lock); what --since leaves out is left out of the tars.
func ToArchiveParts(ctx context.Context, l *lock.Lock, sig []byte, path string, opts Options, aopts ArchiveOptions, extra func(context.Context, *oci.Store) error) (*Report, *ArchiveResult, error) {
	rep, res, err := toArchive(ctx, l, sig, path, opts, aopts, extra)
	if err != nil {
		return nil, nil, err
	}
	return rep, res, nil
}

func toArchive(ctx context.Context, l *lock.Lock, sig []byte, path string, opts Options, aopts ArchiveOptions, extra func(context.Context, *oci.Store) error) (*Report, *ArchiveResult, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	dest, err := filepath.Abs(path)
	if err != nil {
		return nil, nil, err
	}
	data, err := l.Marshal()
	if err != nil {
		return nil, nil, err
	}
	stage, err := OpenStage(dest, StageKey(data))
	if err != nil {
		return nil, nil, err
	}
	defer stage.Close()
	layout := filepath.Join(stage.Dir, "layout")
	// A tar cut short by a kill is written again from the start.
	if partials, err := filepath.Glob(filepath.Join(stage.Dir, "archive.*partial")); err == nil {
		for _, p := range partials {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, nil, err
			}
		}
	}
	store, err := OpenLayout(ctx, layout)
	if err != nil {
		return nil, nil, err
	}
	pkgs := l.Resolved()
	led := newLedger(opts.Concurrency)
	rep := progress.Or(opts.Reporter)
	rep.AddPackages(len(pkgs))
	results, err := forEachPackage(ctx, pkgs, opts, nil, rep, "archiving", nil, func(p *lock.Package) (*PackageResult, error) {
		return archivePackage(ctx, p, store, opts, led)
	})
	if err != nil {
		return nil, nil, err
	}
	if extra != nil {
		if err := extra(ctx, store); err != nil {
			return nil, nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(layout, ArchiveLockFile), data, 0o644); err != nil {
		return nil, nil, err
	}
	sigPath := filepath.Join(layout, ArchiveLockSigFile)
	if sig != nil {
		if err := os.WriteFile(sigPath, sig, 0o644); err != nil {
			return nil, nil, err
		}
	} else if err := os.Remove(sigPath); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	if err := os.RemoveAll(filepath.Join(layout, "ingest")); err != nil {
		return nil, nil, err
	}
	var omit map[digest.Digest]bool
	since := ""
	if aopts.Since != nil {
		if omit, err = sinceOmit(ctx, aopts.Since, aopts.SinceData, store, opts); err != nil {
			return nil, nil, err
		}
		since = digest.FromBytes(aopts.SinceData).String()
	}
	res, err := writeParts(layout, stage.Dir, dest, data, sig, since, omit, aopts.MaxSize)
	if err != nil {
		return nil, nil, err
	}
	if err := stage.Remove(); err != nil {
		return nil, nil, fmt.Errorf("removing staging %s: %w", stage.Dir, err)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return &Report{To: path, Packages: results}, res, nil
}

// archivePackage copies p from its source repository into the archive's
// layout by copyTree, the copy a mirror to a registry makes.
func archivePackage(ctx context.Context, p *lock.Package, store *oci.Store, opts Options, led *ledger) (*PackageResult, error) {
	repo, err := opts.openSource(p)
	if err != nil {
		return nil, err
	}
	defer led.release(p.Source)
	res := &PackageResult{Source: p.Source, Mirror: archiveName(p), Digest: p.Digest, Tag: p.Version, Tags: p.Tags, Nodes: NewNodes()}
	cp := copier{
		src: repo, srcRef: repoTag, dst: store, dstName: p.Source, conc: opts.Concurrency, led: led, retry: opts.Retry, rep: opts.Reporter,
		tag: func(ctx context.Context, desc ocispec.Descriptor, tag string) error {
			return store.Tag(ctx, desc, archiveRef(p, tag))
		},
		tagRoot: func(ctx context.Context, root ocispec.Descriptor) error {
			for _, name := range archiveNames(p) {
				if err := store.Tag(ctx, root, name); err != nil {
					return err
				}
			}
			return nil
		},
	}
	if err := copyTree(ctx, cp, p, res); err != nil {
		return nil, err
	}
	return res, nil
}

// ReadArchiveLock returns the lock carried in an archive. An archive with
// an entry named twice (which copy a reader takes is up to the reader: the
// lock read here would not be the one `tar x` leaves) or an entry that
// escapes the archive's root is refused with exit code 2.
func ReadArchiveLock(path string) (*lock.Lock, error) {
	l, _, _, err := ReadArchiveLockSigned(path)
	return l, err
}

// ReadArchiveLockSigned is ReadArchiveLock that also returns the lock's
// exact bytes in the archive and its signature, ferry.lock.sig (nil when
// the archive carries none).
func ReadArchiveLockSigned(path string) (*lock.Lock, []byte, []byte, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && fileExists(PartPath(path, 1)) {
		// A split archive: every part carries the lock.
		path = PartPath(path, 1)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive: %w", err)
	}
	defer f.Close()
	var data, sig []byte
	seen := map[string]bool{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: %w", path, err)
		}
		name, err := archiveEntryName(h.Name)
		if err != nil {
			return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: %w", path, err)
		}
		if seen[name] {
			return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: entry %q appears more than once: refusing an archive whose content depends on which copy is read", path, h.Name)
		}
		seen[name] = true
		if name == ArchiveLockSigFile {
			// A signature is base64 of a few hundred bytes.
			if h.Size > 64<<10 {
				return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: entry \"%s\" is %d bytes, not a cosign signature", path, ArchiveLockSigFile, h.Size)
			}
			if sig, err = io.ReadAll(tr); err != nil {
				return nil, nil, nil, fmt.Errorf("archive %s: %w", path, err)
			}
			continue
		}
		if name != ArchiveLockFile {
			continue
		}
		if h.Size > lock.MaxFileSize {
			return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: entry \"%s\" is %d bytes, over the %d bytes a lock may have", path, ArchiveLockFile, h.Size, lock.MaxFileSize)
		}
		if data, err = io.ReadAll(tr); err != nil {
			return nil, nil, nil, fmt.Errorf("archive %s: %w", path, err)
		}
	}
	if data == nil {
		return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s holds no %s: it is not an archive ferry mirror wrote", path, ArchiveLockFile)
	}
	l, err := lock.Parse(data)
	if err != nil {
		return nil, nil, nil, errkind.Markf(errkind.BadInput, "archive %s: %s: %w", path, ArchiveLockFile, err)
	}
	return l, data, sig, nil
}

// archiveEntryName returns a tar entry's name cleaned ("./a/" is "a"), or
// an error naming the entry when it is absolute or escapes the root.
func archiveEntryName(raw string) (string, error) {
	n := raw
	if strings.HasPrefix(n, "/") || filepath.VolumeName(raw) != "" {
		return "", fmt.Errorf("entry %q is an absolute path", raw)
	}
	n = pathpkg.Clean(n)
	if n == ".." || strings.HasPrefix(n, "../") {
		return "", fmt.Errorf("entry %q escapes the archive's root", raw)
	}
	return n, nil
}

// FromArchive copies every package of an archive into the mirror and
// returns the archive's lock with the mirror locations recorded. The
// archive is read in place: nothing is extracted to disk. extra, when set,
// imports more artifacts (mixins) from the archive's layout once the
// packages are copied.
//
// Only what the archive's lock names is pushed. A package whose lock entry
// lists its signatures gets exactly those; any other cosign tag or
// referrer the archive holds for its manifests is left out and listed in
// its PackageResult.Ignored. A lock written before signatures were
// recorded (signatures absent) gets every signature and referrer the
// archive holds for its manifests, as before. Entries of index.json that
// name another repository of a registry, or another tag of a package's
// repository, are never pushed and are listed in Report.Ignored; names
// without a registry host belong to extensions (porter-mixins/NAME) and
// are left to extra.
func FromArchive(ctx context.Context, path string, opts Options, extra func(context.Context, *oci.ReadOnlyStore, *lock.Lock) error) (*lock.Lock, *Report, error) {
	return FromArchiveChecked(ctx, path, opts, nil, extra)
}

// LockCheck checks an archive's lock before anything is pushed: data is
// ferry.lock's exact bytes in the archive, sig ferry.lock.sig's (nil when
// the archive carries none), l the lock parsed from data.
type LockCheck func(l *lock.Lock, data, sig []byte) error

// FromArchiveChecked is FromArchive that first runs check, when set, on
// the archive's lock and signature; its error stops the import before
// anything is pushed.
func FromArchiveChecked(ctx context.Context, path string, opts Options, check LockCheck, extra func(context.Context, *oci.ReadOnlyStore, *lock.Lock) error) (*lock.Lock, *Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Target == nil {
		opts.Target = opts.Source
	}
	opts.To = opts.To.WithFormats(opts.Formats)
	a, err := OpenArchive(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	defer a.Close()
	l, store := a.Lock, a.Store
	if check != nil {
		if err := check(l, a.LockData, a.LockSig); err != nil {
			return nil, nil, err
		}
	}
	pkgs := l.Resolved()
	broken, err := checkDestination(l, pkgs, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := checkRegistry(ctx, opts); err != nil {
		return nil, nil, err
	}
	led := newLedger(opts.Concurrency)
	led.journal = openJournal(opts.JournalDir)
	var src origin = store
	// What would be pushed is re-hashed, and what an incremental archive
	// lacks must be in the mirror, before anything is pushed.
	loc, err := checkImport(ctx, a, pkgs, opts)
	if err != nil {
		return nil, nil, err
	}
	if a.Incremental() {
		for d, repo := range loc.at {
			led.record(repo, d)
		}
		src = fallbackOrigin{ReadOnlyStore: store, repos: opts.Target, loc: loc}
	}
	results := make([]PackageResult, len(pkgs))
	errs := make([]error, len(pkgs))
	rep := progress.Or(opts.Reporter)
	rep.AddPackages(len(pkgs))
	var g errgroup.Group
	g.SetLimit(opts.Concurrency)
	gate := newRefusalGate(pkgs, opts)
	if err := gate.preflight(ctx, led); err != nil {
		return nil, nil, err
	}
	for i, p := range pkgs {
		g.Go(func() error {
			rep.PackageStarted(p.Source)
			if !gate.begin(i) {
				rep.PackageDone(p.Source, errNotStarted)
				return nil
			}
			res, err := retryPackage(ctx, opts.Retry, "importing "+p.Source, func() (*PackageResult, error) {
				return copyFrom(ctx, src, archiveRef, p, opts, led)
			})
			rep.PackageDone(p.Source, err)
			switch {
			case errors.Is(err, errdef.ErrNotFound):
				errs[i] = errkind.Markf(errkind.Mismatch, "importing %s: the archive lacks content the lock names: %w", p.Source, err)
			case client.IsRepositoryRefused(err):
				// Every repository not yet written to is checked, and
				// listed with this one (refusalGate).
				explained := client.ExplainRepositoryRefused(err)
				errs[i] = fmt.Errorf("importing %s: %w", p.Source, explained)
				gate.refused(ctx, i, explained)
			case err != nil:
				errs[i] = fmt.Errorf("importing %s: %w", p.Source, err)
			default:
				results[i] = *res
				if opts.Progress != nil {
					opts.Progress(*res)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := gate.err(errs); err != nil {
		return nil, nil, err
	}
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	if extra != nil {
		if err := extra(ctx, store, l); err != nil {
			return nil, nil, err
		}
	}
	ignored, err := notImported(ctx, store, pkgs, results)
	if err != nil {
		return nil, nil, fmt.Errorf("archive %s: %w", path, err)
	}
	for _, p := range pkgs {
		p.Mirror = opts.To.Repo(p.Source)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return l, &Report{To: opts.To.String(), Packages: results, Ignored: ignored, BrokenReferences: broken}, nil
}

// notImported returns the names in the archive's index.json that no
// package's copy used: not a package's root, not a cosign tag of a
// manifest of a package's graph. Names whose repository has no registry
// host (porter-mixins/NAME:VERSION) are the extensions' and left out.
func notImported(ctx context.Context, store *oci.ReadOnlyStore, pkgs []*lock.Package, results []PackageResult) ([]string, error) {
	names, err := client.ListTags(ctx, store)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, p := range pkgs {
		for _, name := range archiveNames(p) {
			used[name] = true
		}
	}
	for _, r := range results {
		for _, n := range r.seen {
			used[n] = true
		}
	}
	var out []string
	for _, n := range names {
		if used[n] || !hasRegistryHost(n) {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}

// hasRegistryHost reports whether name's first path component is a
// registry host, as the distribution reference grammar tells a domain from
// a path component: it has a '.' or a ':', or is localhost
// (github.com/distribution/reference normalize.go, splitDockerDomain).
func hasRegistryHost(name string) bool {
	host, _, ok := strings.Cut(name, "/")
	return ok && (strings.ContainsAny(host, ".:") || host == "localhost")
}
