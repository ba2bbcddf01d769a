package relocate

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/lock"
)

// ArchiveMetaFile is the small JSON entry every archive written by this
// ferry carries beside ferry.lock: which lock it holds, whether it is
// incremental (--since) and which part of how many it is (--max-size).
const ArchiveMetaFile = "ferry-archive.json"

// ArchiveMeta is the content of ferry-archive.json.
type ArchiveMeta struct {
	// Lock is the digest of the archive's ferry.lock bytes; every part of
	// one archive records the same.
	Lock string `json:"lock"`
	// Since, for an incremental archive, is the digest of the earlier
	// lock's bytes (OLD.lock of --since): content reachable from its
	// packages is left out and expected in the mirror at import.
	Since string `json:"since,omitempty"`
	// Part numbers this part from 1; Parts is how many parts the archive
	// has.
	Part  int `json:"part"`
	Parts int `json:"parts"`
}

// ArchiveOptions are the options of an archive that is not one whole tar:
// incremental (Since) and/or split (MaxSize).
type ArchiveOptions struct {
	// Since, when set, is the lock of an earlier archive or mirror run
	// (--since OLD.lock) and SinceData its exact bytes: blobs and
	// manifests reachable from its packages (their graphs and recorded
	// signatures), and extension blobs (mixin binaries) whose digest it
	// names, are left out of the archive.
	Since     *lock.Lock
	SinceData []byte
	// MaxSize, when positive, is the largest size in bytes of one tar: the
	// archive is split into parts FILE.part1.tar, FILE.part2.tar, …
	// (see PartPath) when it does not fit in one.
	MaxSize int64
}

// ArchiveResult tells what an archive run wrote.
type ArchiveResult struct {
	// Paths are the tars written: one, or the parts in order.
	Paths []string `json:"paths"`
	// Sizes are their sizes in bytes.
	Sizes []int64 `json:"sizes"`
	// Blobs counts the blobs and manifests the archive holds; Omitted
	// those left out because the --since lock reaches them.
	Blobs   int `json:"blobs"`
	Omitted int `json:"omitted,omitempty"`
}

// sizeUnits are the units ParseSize accepts, longest first.
var sizeUnits = []struct {
	suffix string
	mul    float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// ParseSize reads a size such as 4GiB, 700MB, 1.5GiB or 1048576 (bytes):
// KiB, MiB, GiB, TiB are powers of 1024, KB, MB, GB, TB powers of 1000,
// case-insensitively; K, M, G, T alone are taken as KiB, MiB, GiB, TiB.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	low := strings.ToLower(t)
	mul := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(low, u.suffix) {
			mul, low = u.mul, strings.TrimSpace(strings.TrimSuffix(low, u.suffix))
			break
		}
	}
	n, err := strconv.ParseFloat(low, 64)
	if err != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) || n*mul > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional unit (KiB, MiB, GiB, KB, MB, GB), such as 4GiB", s)
	}
	return int64(n * mul), nil
}

// partRE matches a part's file name: NAME.partK.tar.
var partRE = lazyregexp.New(`^(.*)\.part([0-9]+)\.tar$`)

// PartPath names part k of the archive written to path: path without its
// .tar suffix, then .partK.tar (closure.tar: closure.part1.tar,
// closure.part2.tar, …). An archive that fits in one part is written to
// path itself.
func PartPath(path string, k int) string {
	return fmt.Sprintf("%s.part%d.tar", strings.TrimSuffix(path, ".tar"), k)
}

// archiveFile is one file of an archive being written: its name in the
// tar and its bytes or the file holding them.
type archiveFile struct {
	name string
	data []byte
	path string
	size int64
}

// tarCost bounds the bytes an entry of size n takes in a tar: a header, a
// PAX header with its records (three blocks), the content padded to
// 512-byte blocks.
func tarCost(n int64) int64 { return 3*512 + (n+511)/512*512 }

// writeParts writes the layout at dir into one tar at dest, or, when it
// does not fit in maxSize, into parts PartPath(dest, k), leaving out the
// blobs in omit. Each part is an OCI layout of its own: oci-layout, an
// index.json naming the manifests the part holds, the lock, its
// signature, ferry-archive.json and its share of the blobs. Tars are
// written in stageDir and renamed into place at the end.
func writeParts(dir, stageDir, dest string, lockData, sig []byte, since string, omit map[digest.Digest]bool, maxSize int64) (*ArchiveResult, error) {
	layoutData, err := os.ReadFile(filepath.Join(dir, ocispec.ImageLayoutFile))
	if err != nil {
		return nil, err
	}
	indexData, err := os.ReadFile(filepath.Join(dir, ocispec.ImageIndexFile))
	if err != nil {
		return nil, err
	}
	var index ocispec.Index
	if err := json.Unmarshal(indexData, &index); err != nil {
		return nil, fmt.Errorf("reading the staged index.json: %w", err)
	}
	var blobs []archiveFile
	res := &ArchiveResult{}
	blobDir := filepath.Join(dir, ocispec.ImageBlobsDir)
	err = filepath.WalkDir(blobDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(blobDir, p)
		if err != nil {
			return err
		}
		alg, enc, ok := strings.Cut(filepath.ToSlash(rel), "/")
		if !ok {
			return nil
		}
		if omit[digest.NewDigestFromEncoded(digest.Algorithm(alg), enc)] {
			res.Omitted++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		blobs = append(blobs, archiveFile{name: ocispec.ImageBlobsDir + "/" + alg + "/" + enc, path: p, size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Blobs = len(blobs)
	kept := index.Manifests[:0:0]
	for _, m := range index.Manifests {
		if !omit[m.Digest] {
			kept = append(kept, m)
		}
	}
	index.Manifests = kept
	fullIndex, err := json.Marshal(index)
	if err != nil {
		return nil, err
	}
	meta := ArchiveMeta{Lock: digest.FromBytes(lockData).String(), Since: since, Part: 1, Parts: 1}
	// The fixed files every part carries; ferry-archive.json and
	// index.json are bounded by their largest form.
	fixed := tarCost(int64(len(layoutData))) + tarCost(int64(len(lockData))) + tarCost(1<<10) + tarCost(int64(len(fullIndex))) + 2*tarCost(0) + 2*512
	if sig != nil {
		fixed += tarCost(int64(len(sig)))
	}
	var parts [][]archiveFile
	if maxSize <= 0 {
		parts = [][]archiveFile{blobs}
	} else {
		room := maxSize - fixed
		if room <= 0 {
			return nil, &PartSizeError{Msg: fmt.Sprintf("a part size of %d bytes leaves no room for blobs: each part carries the lock, its signature and index.json (%d bytes)", maxSize, fixed)}
		}
		for _, b := range blobs {
			if tarCost(b.size) > room {
				return nil, &PartSizeError{Msg: fmt.Sprintf("blob %s is %d bytes: it does not fit in one part of %d bytes (%d bytes are left beside the lock and index); nothing was written", strings.TrimPrefix(strings.ReplaceAll(b.name, "/", ":"), "blobs:"), b.size, maxSize, room)}
			}
		}
		// First fit, largest first.
		sorted := append([]archiveFile(nil), blobs...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].size > sorted[j].size })
		var free []int64
		for _, b := range sorted {
			placed := false
			for i := range parts {
				if c := tarCost(b.size); c <= free[i] {
					parts[i], free[i], placed = append(parts[i], b), free[i]-c, true
					break
				}
			}
			if !placed {
				parts = append(parts, []archiveFile{b})
				free = append(free, room-tarCost(b.size))
			}
		}
		if len(parts) == 0 {
			parts = [][]archiveFile{nil}
		}
	}
	meta.Parts = len(parts)
	var partials []string
	for k, files := range parts {
		meta.Part = k + 1
		partIndex := fullIndex
		if len(parts) > 1 {
			in := map[digest.Digest]bool{}
			for _, f := range files {
				alg, enc, _ := strings.Cut(strings.TrimPrefix(f.name, ocispec.ImageBlobsDir+"/"), "/")
				in[digest.NewDigestFromEncoded(digest.Algorithm(alg), enc)] = true
			}
			pi := index
			pi.Manifests = nil
			for _, m := range index.Manifests {
				if in[m.Digest] {
					pi.Manifests = append(pi.Manifests, m)
				}
			}
			if partIndex, err = json.Marshal(pi); err != nil {
				return nil, err
			}
		}
		metaData, err := json.Marshal(meta)
		if err != nil {
			return nil, err
		}
		all := append([]archiveFile{
			{name: ocispec.ImageLayoutFile, data: layoutData},
			{name: ocispec.ImageIndexFile, data: partIndex},
			{name: ArchiveLockFile, data: lockData},
			{name: ArchiveMetaFile, data: metaData},
		}, files...)
		if sig != nil {
			all = append(all, archiveFile{name: ArchiveLockSigFile, data: sig})
		}
		partial := filepath.Join(stageDir, fmt.Sprintf("archive.part%d.partial", k+1))
		if err := writeFilesTar(all, partial); err != nil {
			return nil, fmt.Errorf("writing archive %s: %w", dest, err)
		}
		info, err := os.Stat(partial)
		if err != nil {
			return nil, err
		}
		if maxSize > 0 && info.Size() > maxSize {
			return nil, fmt.Errorf("part %d of %s is %d bytes, over the part size %d: this is a bug in ferry", k+1, dest, info.Size(), maxSize)
		}
		partials = append(partials, partial)
		res.Sizes = append(res.Sizes, info.Size())
	}
	// The new archive replaces every file of an earlier one at dest.
	if len(parts) == 1 {
		res.Paths = []string{dest}
		for k := 1; ; k++ {
			if err := os.Remove(PartPath(dest, k)); errors.Is(err, fs.ErrNotExist) {
				break
			} else if err != nil {
				return nil, err
			}
		}
		return res, os.Rename(partials[0], dest)
	}
	if err := os.Remove(dest); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for k, p := range partials {
		name := PartPath(dest, k+1)
		if err := os.Rename(p, name); err != nil {
			return nil, err
		}
		res.Paths = append(res.Paths, name)
	}
	for k := len(partials) + 1; ; k++ {
		if err := os.Remove(PartPath(dest, k)); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// writeFilesTar writes files into a tar at path, sorted by name with the
// directories of the blobs first, with fixed modes and no timestamps,
// synced.
func writeFilesTar(files []archiveFile, path string) error {
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	dirs := map[string]bool{}
	err = func() error {
		for _, af := range files {
			if d, _, ok := strings.Cut(af.name, "/"); ok {
				for _, dir := range []string{d + "/", af.name[:strings.LastIndex(af.name, "/")+1]} {
					if !dirs[dir] {
						dirs[dir] = true
						if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o755, Format: tar.FormatPAX}); err != nil {
							return err
						}
					}
				}
			}
			size := int64(len(af.data))
			if af.path != "" {
				size = af.size
			}
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: af.name, Mode: 0o644, Size: size, Format: tar.FormatPAX}); err != nil {
				return err
			}
			if af.path == "" {
				if _, err := tw.Write(af.data); err != nil {
					return err
				}
				continue
			}
			in, err := os.Open(af.path)
			if err != nil {
				return err
			}
			_, err = io.Copy(tw, in)
			in.Close()
			if err != nil {
				return err
			}
		}
		return tw.Close()
	}()
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Archive is an archive opened for reading: one tar, or every part of a
// split archive read as one OCI layout. Nothing is extracted: blobs are
// read in place from the tars.
type Archive struct {
	// Paths are the tars, in part order.
	Paths []string
	// Meta is ferry-archive.json (zero for an archive written by a ferry
	// that did not write it: one whole tar).
	Meta ArchiveMeta
	// Lock is the archive's ferry.lock, LockData its exact bytes, LockSig
	// ferry.lock.sig (nil when the archive carries none).
	Lock     *lock.Lock
	LockData []byte
	LockSig  []byte
	// Store reads the layout of every part as one.
	Store *oci.ReadOnlyStore
	files []*os.File
}

// Incremental reports whether the archive was written with --since.
func (a *Archive) Incremental() bool { return a.Meta.Since != "" }

// Close closes the archive's tars.
func (a *Archive) Close() error {
	var errs []error
	for _, f := range a.files {
		errs = append(errs, f.Close())
	}
	a.files = nil
	return errors.Join(errs...)
}

// PartSizeError is an archive part size (ArchiveOptions.MaxSize) too
// small for what a part must carry; nothing was written. It is bad input;
// the caller names the setting.
type PartSizeError struct{ Msg string }

func (e *PartSizeError) Error() string { return e.Msg }

// Is makes a PartSizeError bad input (errkind.BadInput).
func (e *PartSizeError) Is(target error) bool { return target == errkind.BadInput }
