package ferry

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
)

// RecordInput notes in l which input file it was made from, relative to
// the lock's directory, so verify can tell a stale lock; nothing for
// command-line roots.
func RecordInput(l *lock.Lock, inputFile, lockPath string) {
	l.Input = ""
	if inputFile == "" {
		return
	}
	in, err1 := filepath.Abs(inputFile)
	dir, err2 := filepath.Abs(filepath.Dir(lockPath))
	if err1 != nil || err2 != nil {
		return
	}
	if rel, err := filepath.Rel(dir, in); err == nil {
		l.Input = filepath.ToSlash(rel)
	}
}

// Inputs loads the input file a lock was made from, with the format
// settings flags give (see mirrorset.MirrorSet.Apply; nil for none). It
// returns nil, with the path, when the file is gone, and nil with no path
// when the lock was made from command-line roots.
func (e *Env) Inputs(l *lock.Lock, lockPath string, settings *mirrorset.MirrorSet) (*mirrorset.MirrorSet, string, error) {
	if l.Input == "" {
		return nil, "", nil
	}
	path := filepath.Join(filepath.Dir(lockPath), filepath.FromSlash(l.Input))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, path, nil
	}
	ms, err := mirrorset.LoadFile(path, e.Formats, settings)
	if err == nil {
		err = ms.Apply(settings, e.Formats)
	}
	return ms, path, err
}
