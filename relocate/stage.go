package relocate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/errkind"
)

// Staging. An archive (mirror --to-archive) or an install directory is
// built in a staging directory beside its destination DEST and moved into
// place when complete:
//
//	DIR/.NAME.ferry-stage-KEY/        NAME = base name of DEST
//	    ferry-stage.json              the marker: ferry made this directory
//	    ...                           what is being built
//
// KEY is the first 16 hex digits of the SHA-256 of the lock's canonical
// bytes (for install, followed by a NUL and the --mirror override), so a
// run interrupted by a failure or a kill is resumed by the next run with
// the same lock: what the staging already holds is not fetched again. A
// run removes staging of the same DEST under another KEY (it cannot be
// resumed), and removes its own staging once DEST is in place. Ferry never
// removes a directory that lacks the marker, except an empty one with a
// staging name (a run killed between creating it and writing the marker).
// While a run uses a staging directory it holds an advisory lock on the
// marker (flock, where the system has it), so a second run, or ferry gc,
// leaves it alone; the lock dies with the process, whatever ends it.
const (
	stageInfix = ".ferry-stage-"
	// StageMarker is the marker file inside every staging directory.
	StageMarker = "ferry-stage.json"
)

// ErrStageInUse is wrapped by the errors of OpenStage and RemoveStaging
// when another ferry process holds the staging directory.
var ErrStageInUse = errors.New("staging directory is in use by another ferry process")

// StageKey returns the staging key of parts: the first 16 hex digits of
// the SHA-256 of parts joined by NUL bytes.
func StageKey(parts ...[]byte) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// StagePath returns the staging directory of dest under key.
func StagePath(dest, key string) string {
	return filepath.Join(filepath.Dir(dest), "."+filepath.Base(dest)+stageInfix+key)
}

// Stage is an open staging directory, locked against other ferry runs
// until Close or Remove.
type Stage struct {
	// Dir is the staging directory.
	Dir string
	// Resumed reports that Dir was left by an earlier run and reopened.
	Resumed bool
	lock    *os.File
}

type stageMarker struct {
	Tool string `json:"tool"`
	Dest string `json:"dest"`
	Key  string `json:"key"`
}

// OpenStage opens dest's staging directory for key: it creates it, or
// reopens the one an interrupted run left. It first removes dest's
// staging under any other key (unless another run holds it). A directory
// with the staging name that ferry did not make is refused.
func OpenStage(dest, key string) (*Stage, error) {
	dir := StagePath(dest, key)
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return nil, err
	}
	stale, err := filepath.Glob(filepath.Join(filepath.Dir(dest), globEscape("."+filepath.Base(dest)+stageInfix)+"*"))
	if err != nil {
		return nil, err
	}
	for _, s := range stale {
		if s != dir && isStage(s) {
			if _, err := RemoveStaging(s); err != nil && !errors.Is(err, ErrStageInUse) {
				return nil, fmt.Errorf("removing stale staging: %w", err)
			}
		}
	}
	st := &Stage{Dir: dir}
	switch err := os.Mkdir(dir, 0o700); {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		if !isStage(dir) {
			return nil, errkind.Markf(errkind.BadInput, "%s exists and was not made by ferry (it holds no %s): remove it or choose another destination", dir, StageMarker)
		}
		st.Resumed = true
	default:
		return nil, err
	}
	marker := filepath.Join(dir, StageMarker)
	if _, err := os.Lstat(marker); errors.Is(err, fs.ErrNotExist) {
		data, _ := json.Marshal(stageMarker{Tool: "ferry", Dest: filepath.Base(dest), Key: key})
		if err := os.WriteFile(marker, append(data, '\n'), 0o600); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(marker, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	st.lock = f
	return st, nil
}

// Close releases the staging directory, keeping it for a later run.
func (s *Stage) Close() error {
	if s.lock == nil {
		return nil
	}
	err := s.lock.Close()
	s.lock = nil
	return err
}

// Remove deletes the staging directory, the marker last, and releases it.
func (s *Stage) Remove() error {
	err := removeStageDir(s.Dir)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeStageDir removes everything in dir but the marker, then the
// marker, then dir: a kill part way leaves a directory still marked.
func removeStageDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, e := range entries {
		if e.Name() != StageMarker {
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := os.Remove(filepath.Join(dir, StageMarker)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// isStage reports whether path is a directory with a staging name that
// ferry made: it holds the marker, or it is empty.
func isStage(path string) bool {
	if !strings.Contains(filepath.Base(path), stageInfix) || !strings.HasPrefix(filepath.Base(path), ".") {
		return false
	}
	if fi, err := os.Lstat(path); err != nil || !fi.IsDir() {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(path, StageMarker)); err == nil {
		return fi.Mode().IsRegular()
	}
	entries, err := os.ReadDir(path)
	return err == nil && len(entries) == 0
}

// globEscape escapes filepath.Match's special characters in s.
func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// FindStaging returns the staging directories ferry left for the
// destinations paths: for each PATH, DIR/.NAME.ferry-stage-* beside it
// (beside what it points to, too, when it is a symbolic link), and, when
// PATH is a directory, every staging directory inside it. Directories
// without the marker are never returned.
func FindStaging(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	add := func(pattern string) error {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return err
		}
		for _, m := range matches {
			if !seen[m] && isStage(m) {
				seen[m] = true
				out = append(out, m)
			}
		}
		return nil
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, err
		}
		targets := []string{abs}
		if real, err := ResolveDest(abs); err == nil && real != abs {
			targets = append(targets, real)
		}
		for _, t := range targets {
			if err := add(filepath.Join(filepath.Dir(t), globEscape("."+filepath.Base(t)+stageInfix)+"*")); err != nil {
				return nil, err
			}
			if fi, err := os.Stat(t); err == nil && fi.IsDir() {
				if err := add(filepath.Join(globEscape(t), ".*"+stageInfix+"*")); err != nil {
					return nil, err
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// RemoveStaging removes a staging directory FindStaging returned and
// returns the bytes it freed. It refuses a directory without the marker,
// and one another ferry process is using (ErrStageInUse).
func RemoveStaging(dir string) (int64, error) {
	if !isStage(dir) {
		return 0, fmt.Errorf("%s is not a ferry staging directory", dir)
	}
	marker := filepath.Join(dir, StageMarker)
	if f, err := os.OpenFile(marker, os.O_RDWR, 0); err == nil {
		defer f.Close()
		if err := lockFile(f); err != nil {
			return 0, fmt.Errorf("%s: %w", dir, err)
		}
	}
	var size int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	return size, removeStageDir(dir)
}

// ResolveDest follows dest while it is a symbolic link and returns the
// path it ends at, which may not exist yet.
func ResolveDest(dest string) (string, error) {
	p, err := filepath.Abs(dest)
	if err != nil {
		return "", err
	}
	for range 255 {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return p, nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			return p, nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = filepath.Clean(target)
	}
	return "", errkind.Markf(errkind.BadInput, "%s: too many levels of symbolic links", dest)
}

// OpenLayout opens the OCI image layout at dir in a staging directory,
// left by an earlier run or new. An index.json cut short by a kill is dropped: the blobs stay, and
// the copies skip them.
func OpenLayout(ctx context.Context, dir string) (*oci.Store, error) {
	// The layout store writes each blob to ingest/ and renames it into
	// blobs/ once its digest checks: what ingest/ holds was cut short.
	if err := os.RemoveAll(filepath.Join(dir, "ingest")); err != nil {
		return nil, err
	}
	store, err := oci.NewWithContext(ctx, dir)
	if err == nil {
		return store, nil
	}
	if rmErr := os.Remove(filepath.Join(dir, "index.json")); rmErr != nil {
		return nil, err
	}
	return oci.NewWithContext(ctx, dir)
}
