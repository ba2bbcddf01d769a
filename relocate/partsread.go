package relocate

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
)

// Reading a split archive: its parts found from any one of them, checked
// against each other, and served as one file system to the OCI layout.

// OpenArchive opens the archive at path: a whole tar, or a split archive
// given by any of its parts (closure.part2.tar) or by the name it was
// written to (closure.tar, when only its parts exist). Every part must be
// there (a missing one is exit code 2) and carry the same lock and part
// count, numbered once each (else exit code 3); an extra part beyond the
// count is exit code 3 too. Within a part an entry named twice, or one
// escaping the root, is refused with exit code 2.
func OpenArchive(ctx context.Context, path string) (*Archive, error) {
	first := path
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !partRE.MatchString(path) {
		if _, err1 := os.Stat(PartPath(path, 1)); err1 == nil {
			first = PartPath(path, 1)
		}
	}
	a := &Archive{}
	fsys := &partsFS{entries: map[string]tarEntry{}}
	p, err := readPart(first, fsys)
	if err != nil {
		return nil, err
	}
	a.files = append(a.files, p.f)
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	a.Meta, a.LockData, a.LockSig = p.meta, p.lock, p.sig
	parts := map[int]*part{p.meta.Part: p}
	if p.meta.Parts > 1 {
		m := partRE.FindStringSubmatch(first)
		if m == nil {
			return nil, errkind.Markf(errkind.BadInput, "archive %s is part %d of %d of a split archive: give the parts by the names they were written with (NAME.partK.tar)", first, p.meta.Part, p.meta.Parts)
		}
		base := m[1] + ".tar"
		if m[2] != strconv.Itoa(p.meta.Part) {
			return nil, errkind.Markf(errkind.Mismatch, "archive %s says it is part %d: its name does not match", first, p.meta.Part)
		}
		for k := 1; k <= p.meta.Parts; k++ {
			name := PartPath(base, k)
			if k == p.meta.Part {
				continue
			}
			if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
				return nil, errkind.Markf(errkind.BadInput, "archive %s: part %d of %d, %s, is missing", base, k, p.meta.Parts, name)
			}
			q, err := readPart(name, fsys)
			if err != nil {
				return nil, err
			}
			a.files = append(a.files, q.f)
			if err := samePart(q, p, k); err != nil {
				return nil, err
			}
			parts[k] = q
		}
		if extra := PartPath(base, p.meta.Parts+1); fileExists(extra) {
			return nil, errkind.Markf(errkind.Mismatch, "archive %s has %d parts, but %s is there too: it belongs to another archive; remove it", base, p.meta.Parts, extra)
		}
	}
	for k := 1; k <= max(p.meta.Parts, 1); k++ {
		if q := parts[k]; q != nil {
			a.Paths = append(a.Paths, q.path)
		}
	}
	if a.Lock, err = lock.Parse(a.LockData); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "archive %s: %s: %w", first, ArchiveLockFile, err)
	}
	// One tar's lock is checked by its signature (LockCheck) and by what
	// it names; the parts of a split archive must hold the lock their
	// ferry-archive.json records.
	if a.Meta.Parts > 1 && digest.FromBytes(a.LockData).String() != a.Meta.Lock {
		return nil, errkind.Markf(errkind.Mismatch, "archive %s: %s does not match the lock digest %s its %s records", first, ArchiveLockFile, a.Meta.Lock, ArchiveMetaFile)
	}
	idx, err := json.Marshal(fsys.index)
	if err != nil {
		return nil, err
	}
	fsys.indexData = idx
	// The manifests index.json names are read (and hashed) when the
	// layout is opened: one changed is named here.
	if err := fsys.checkIndexed(first); err != nil {
		return nil, err
	}
	if a.Store, err = oci.NewFromFS(ctx, fsys); err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) {
			return nil, errkind.Markf(errkind.Mismatch, "archive %s: a manifest does not match its digest, the archive was changed: %w", first, err)
		}
		return nil, errkind.Markf(errkind.BadInput, "archive %s is not an OCI layout: %w", first, err)
	}
	ok = true
	return a, nil
}

// samePart checks that q is part k of the archive p is a part of.
func samePart(q, p *part, k int) error {
	switch {
	case q.meta.Lock != p.meta.Lock || q.meta.Since != p.meta.Since || !bytes.Equal(q.lock, p.lock):
		return errkind.Markf(errkind.Mismatch, "archive part %s holds another lock (%s) than %s (%s): the parts are not of one archive", q.path, q.meta.Lock, p.path, p.meta.Lock)
	case q.meta.Parts != p.meta.Parts:
		return errkind.Markf(errkind.Mismatch, "archive part %s says the archive has %d parts, %s says %d", q.path, q.meta.Parts, p.path, p.meta.Parts)
	case q.meta.Part != k:
		return errkind.Markf(errkind.Mismatch, "archive part %s says it is part %d, not %d", q.path, q.meta.Part, k)
	case !bytes.Equal(q.sig, p.sig):
		return errkind.Markf(errkind.Mismatch, "archive part %s carries another %s than %s", q.path, ArchiveLockSigFile, p.path)
	}
	return nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// part is one tar of an archive, indexed.
type part struct {
	path      string
	f         *os.File
	meta      ArchiveMeta
	lock, sig []byte
}

// readPart indexes the tar at path into fsys: the offset and size of each
// regular file, index.json merged into fsys.index. The lock, its
// signature and ferry-archive.json are read.
func readPart(path string, fsys *partsFS) (*part, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "archive: %w", err)
	}
	p := &part{path: path, f: f}
	if err := p.index(fsys); err != nil {
		f.Close()
		return nil, err
	}
	return p, nil
}

func (p *part) index(fsys *partsFS) error {
	path := p.path
	seen := map[string]bool{}
	tr := tar.NewReader(p.f)
	var metaData []byte
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return errkind.Markf(errkind.BadInput, "archive %s: %w", path, err)
		}
		name, err := archiveEntryName(h.Name)
		if err != nil {
			return errkind.Markf(errkind.BadInput, "archive %s: %w", path, err)
		}
		if seen[name] {
			return errkind.Markf(errkind.BadInput, "archive %s: entry %q appears more than once: refusing an archive whose content depends on which copy is read", path, h.Name)
		}
		seen[name] = true
		if h.Typeflag != tar.TypeReg {
			continue
		}
		// archive/tar reads a header in whole blocks and no further: the
		// file's offset is where the entry's content starts.
		off, err := p.f.Seek(0, io.SeekCurrent)
		if err != nil {
			return err
		}
		read := func(limit int64) ([]byte, error) {
			if h.Size > limit {
				return nil, errkind.Markf(errkind.BadInput, "archive %s: entry %q is %d bytes, over the %d bytes it may have", path, name, h.Size, limit)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				return nil, fmt.Errorf("archive %s: %w", path, err)
			}
			return b, nil
		}
		switch name {
		case ArchiveLockFile:
			if h.Size > lock.MaxFileSize {
				return errkind.Markf(errkind.BadInput, "archive %s: entry \"%s\" is %d bytes, over the %d bytes a lock may have", path, ArchiveLockFile, h.Size, lock.MaxFileSize)
			}
			if p.lock, err = read(lock.MaxFileSize); err != nil {
				return err
			}
		case ArchiveLockSigFile:
			// A signature is base64 of a few hundred bytes.
			if h.Size > 64<<10 {
				return errkind.Markf(errkind.BadInput, "archive %s: entry \"%s\" is %d bytes, not a cosign signature", path, ArchiveLockSigFile, h.Size)
			}
			if p.sig, err = read(64 << 10); err != nil {
				return err
			}
		case ArchiveMetaFile:
			if metaData, err = read(64 << 10); err != nil {
				return err
			}
		case ocispec.ImageIndexFile:
			b, err := read(lock.MaxFileSize)
			if err != nil {
				return err
			}
			var idx ocispec.Index
			if err := json.Unmarshal(b, &idx); err != nil {
				return errkind.Markf(errkind.BadInput, "archive %s: index.json: %w", path, err)
			}
			fsys.merge(idx)
		default:
			if _, ok := fsys.entries[name]; !ok {
				fsys.entries[name] = tarEntry{f: p.f, off: off, size: h.Size}
			}
		}
	}
	if p.lock == nil {
		return errkind.Markf(errkind.BadInput, "archive %s holds no %s: it is not an archive ferry mirror wrote", path, ArchiveLockFile)
	}
	p.meta = ArchiveMeta{Part: 1, Parts: 1}
	if metaData != nil {
		if err := json.Unmarshal(metaData, &p.meta); err != nil || p.meta.Parts < 1 || p.meta.Part < 1 || p.meta.Part > p.meta.Parts {
			return errkind.Markf(errkind.BadInput, "archive %s: %s is not valid: %s", path, ArchiveMetaFile, metaData)
		}
	}
	return nil
}

// partsFS is the OCI layout of an archive's parts as one file system:
// each file read in place from its tar, index.json the union of theirs.
type partsFS struct {
	entries   map[string]tarEntry
	index     ocispec.Index
	indexData []byte
	seen      map[string]bool
}

type tarEntry struct {
	f         *os.File
	off, size int64
}

// merge adds idx's manifests to the union index.json.
func (fsys *partsFS) merge(idx ocispec.Index) {
	if fsys.seen == nil {
		fsys.seen = map[string]bool{}
		fsys.index = idx
		fsys.index.Manifests = nil
	}
	for _, m := range idx.Manifests {
		key := m.Digest.String() + " " + m.Annotations[ocispec.AnnotationRefName]
		if !fsys.seen[key] {
			fsys.seen[key] = true
			fsys.index.Manifests = append(fsys.index.Manifests, m)
		}
	}
}

// checkIndexed hashes every manifest index.json names that the layout
// holds (up to 4 MiB each, as oras-go reads them), and fails with exit
// code 3 naming the first one that does not match its digest.
func (fsys *partsFS) checkIndexed(path string) error {
	for _, m := range fsys.index.Manifests {
		if m.Digest.Validate() != nil || m.Size > 4<<20 {
			continue
		}
		e, ok := fsys.entries[ocispec.ImageBlobsDir+"/"+m.Digest.Algorithm().String()+"/"+m.Digest.Encoded()]
		if !ok {
			continue
		}
		v := m.Digest.Verifier()
		if _, err := io.Copy(v, io.NewSectionReader(e.f, e.off, e.size)); err != nil {
			return fmt.Errorf("archive %s: reading %s: %w", path, m.Digest, err)
		}
		if !v.Verified() || e.size != m.Size {
			return errkind.Markf(errkind.Mismatch, "archive %s: manifest %s (%s) does not match its digest: the archive was changed", path, m.Digest, m.Annotations[ocispec.AnnotationRefName])
		}
	}
	return nil
}

// Open opens a file of the layout.
func (fsys *partsFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == ocispec.ImageIndexFile && fsys.indexData != nil {
		return &memFile{Reader: bytes.NewReader(fsys.indexData), name: name, size: int64(len(fsys.indexData))}, nil
	}
	e, ok := fsys.entries[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &memFile{Reader: io.NewSectionReader(e.f, e.off, e.size), name: name, size: e.size}, nil
}

// memFile is a read-only file of partsFS.
type memFile struct {
	io.Reader
	name string
	size int64
}

func (f *memFile) Stat() (fs.FileInfo, error) { return fileInfo{name: f.name, size: f.size}, nil }
func (f *memFile) Close() error               { return nil }

type fileInfo struct {
	name string
	size int64
}

func (i fileInfo) Name() string       { return filepath.Base(i.name) }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }
