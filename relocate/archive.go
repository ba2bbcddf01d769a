package relocate

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
)

// ArchiveLockFile is the lock's name inside an archive.
const ArchiveLockFile = "ferry.lock"

// An archive is a tar of an OCI image layout holding every package of a
// lock (whole graphs by digest, with cosign signatures) and the lock
// itself as ferry.lock. Each package is named in index.json by
// SOURCE:TAG (or SOURCE@DIGEST when it has no tag), and each signature by
// SOURCE:sha256-HEX.sig.

// archiveRef names a tag of p's repository inside an archive.
func archiveRef(p *lock.Package, tag string) string { return p.Source + ":" + tag }

// archiveName is the name of p's root manifest inside an archive.
func archiveName(p *lock.Package) string {
	if p.Version != "" {
		return archiveRef(p, p.Version)
	}
	return p.Source + "@" + p.Digest
}

// ToArchive writes every resolved package of l, and l, into a tar archive
// at path for carrying across an air gap. extra, when set, adds more
// artifacts (mixins) to the archive's layout. The archive is written to a
// temporary file beside path and renamed into place.
func ToArchive(ctx context.Context, l *lock.Lock, path string, opts Options, extra func(context.Context, *oci.Store) error) (*Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	dir := filepath.Dir(path)
	stage, err := os.MkdirTemp(dir, "."+filepath.Base(path)+".stage-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	store, err := oci.NewWithContext(ctx, stage)
	if err != nil {
		return nil, err
	}
	pkgs := l.Resolved()
	results := make([]PackageResult, len(pkgs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, p := range pkgs {
		g.Go(func() error {
			res, err := archivePackage(gctx, p, store, opts)
			if err != nil {
				return fmt.Errorf("archiving %s: %w", p.Source, err)
			}
			results[i] = *res
			if opts.Progress != nil {
				opts.Progress(*res)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if extra != nil {
		if err := extra(ctx, store); err != nil {
			return nil, err
		}
	}
	data, err := l.Marshal()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(stage, ArchiveLockFile), data, 0o644); err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(stage, "ingest"))
	if err := writeTar(stage, path); err != nil {
		return nil, err
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return &Report{To: path, Packages: results}, nil
}

func archivePackage(ctx context.Context, p *lock.Package, store *oci.Store, opts Options) (*PackageResult, error) {
	src, err := opts.Source.Repository(p.Source)
	if err != nil {
		return nil, err
	}
	res := &PackageResult{Source: p.Source, Mirror: archiveName(p), Digest: p.Digest, Tag: p.Version}
	root := p.Descriptor()
	var copied, sent atomic.Int64
	defer func() { res.Copied, res.Bytes = copied.Load(), sent.Load() }()
	copyOpts := oras.CopyGraphOptions{
		Concurrency: opts.Concurrency,
		PostCopy: func(_ context.Context, d ocispec.Descriptor) error {
			copied.Add(1)
			sent.Add(d.Size)
			return nil
		},
	}
	if err := oras.CopyGraph(ctx, src, store, root, copyOpts); err != nil {
		return nil, err
	}
	if err := store.Tag(ctx, root, archiveName(p)); err != nil {
		return nil, err
	}
	for _, tag := range signatureTags(root) {
		desc, err := src.Resolve(ctx, tag)
		if errors.Is(err, errdef.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("looking for %s: %w", tag, err)
		}
		if err := oras.CopyGraph(ctx, src, store, desc, copyOpts); err != nil {
			return nil, fmt.Errorf("copying %s: %w", tag, err)
		}
		if err := store.Tag(ctx, desc, archiveRef(p, tag)); err != nil {
			return nil, err
		}
		res.Signatures = append(res.Signatures, tag)
	}
	return res, nil
}

// writeTar writes the files under dir into a tar at path, in sorted order
// with fixed timestamps, through a temporary file and rename.
func writeTar(dir, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: 0o755, Format: tar.FormatPAX})
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: info.Size(), Format: tar.FormatPAX}); err != nil {
			return err
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, in)
		in.Close()
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing archive %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// ReadArchiveLock returns the lock carried in an archive.
func ReadArchiveLock(path string) (*lock.Lock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, exitcode.BadInput("archive: %w", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, exitcode.BadInput("archive %s holds no %s: it was not written by ferry mirror --to-archive", path, ArchiveLockFile)
		}
		if err != nil {
			return nil, exitcode.BadInput("archive %s: %w", path, err)
		}
		if strings.TrimPrefix(h.Name, "./") != ArchiveLockFile {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, 64<<20))
		if err != nil {
			return nil, fmt.Errorf("archive %s: %w", path, err)
		}
		l, err := lock.Parse(data)
		if err != nil {
			return nil, exitcode.BadInput("archive %s: %s: %w", path, ArchiveLockFile, err)
		}
		return l, nil
	}
}

// FromArchive copies every package of an archive into the mirror and
// returns the archive's lock with the mirror locations recorded. The
// archive is read in place: nothing is extracted to disk. extra, when set,
// imports more artifacts (mixins) from the archive's layout once the
// packages are copied.
func FromArchive(ctx context.Context, path string, opts Options, extra func(context.Context, *oci.ReadOnlyStore, *lock.Lock) error) (*lock.Lock, *Report, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Target == nil {
		opts.Target = opts.Source
	}
	l, err := ReadArchiveLock(path)
	if err != nil {
		return nil, nil, err
	}
	store, err := oci.NewFromTar(ctx, path)
	if err != nil {
		return nil, nil, exitcode.BadInput("archive %s is not an OCI layout: %w", path, err)
	}
	pkgs := l.Resolved()
	var sources []string
	for _, p := range pkgs {
		sources = append(sources, p.Source)
	}
	if err := opts.To.Check(sources); err != nil {
		return nil, nil, err
	}
	if err := opts.To.CheckLayout(l, opts.Formats); err != nil {
		return nil, nil, err
	}
	led := newLedger(opts.Concurrency)
	results := make([]PackageResult, len(pkgs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, p := range pkgs {
		g.Go(func() error {
			res, err := copyFrom(gctx, store, archiveRef, p, opts, led)
			if err != nil {
				if errors.Is(err, errdef.ErrNotFound) {
					return exitcode.Mismatchf("importing %s: the archive lacks content the lock names: %w", p.Source, err)
				}
				return fmt.Errorf("importing %s: %w", p.Source, err)
			}
			results[i] = *res
			if opts.Progress != nil {
				opts.Progress(*res)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	if extra != nil {
		if err := extra(ctx, store, l); err != nil {
			return nil, nil, err
		}
	}
	for _, p := range pkgs {
		p.Mirror = opts.To.Repo(p.Source)
	}
	sort.SliceStable(results, func(i, j int) bool { return results[i].Source+results[i].Digest < results[j].Source+results[j].Digest })
	return l, &Report{To: opts.To.String(), Packages: results}, nil
}
