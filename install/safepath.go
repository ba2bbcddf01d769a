package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ferryhq/ferry/errkind"
)

// ErrUnsafePath is wrapped by every error SafeJoin, WriteFile and
// CheckTree return for a name or link that would land outside the
// destination.
var ErrUnsafePath = errors.New("would land outside the destination")

// unsafePath returns a usage error (exit 2: the lock or registry content is
// bad input) wrapping ErrUnsafePath.
func unsafePath(name, why string) error {
	return errkind.Mark(errkind.BadInput, fmt.Errorf("refusing %q: %s: %w", name, why, ErrUnsafePath))
}

// SafeJoin returns root joined with name, a slash-separated relative path
// that comes from untrusted data (a package, repository or mixin name). It
// refuses empty names, absolute paths, volume names, ".." components,
// backslashes, colons, NUL and control characters, and any existing
// component below root that is a symbolic link resolving outside root.
func SafeJoin(root, name string) (string, error) {
	if err := checkRelName(name); err != nil {
		return "", err
	}
	p := filepath.Join(root, filepath.FromSlash(name))
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", unsafePath(name, "not below "+root)
	}
	if err := checkLinks(root, rel); err != nil {
		return "", err
	}
	return p, nil
}

// checkRelName checks the lexical form of a relative name.
func checkRelName(name string) error {
	switch {
	case name == "":
		return unsafePath(name, "empty name")
	case strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "":
		return unsafePath(name, "absolute path")
	}
	for _, r := range name {
		switch {
		case r == '\\':
			return unsafePath(name, "backslash in name")
		case r == ':':
			return unsafePath(name, "colon in name")
		case r < 0x20 || r == 0x7f:
			return unsafePath(name, "control character in name")
		}
	}
	for _, c := range strings.Split(name, "/") {
		if c == ".." {
			return unsafePath(name, `".." in path`)
		}
	}
	return nil
}

// checkLinks refuses a symbolic link among the existing components of rel
// below root that resolves outside root.
func checkLinks(root, rel string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing exists yet, so no link either
		}
		return err
	}
	cur := root
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(cur)
		if err != nil || !within(realRoot, target) {
			return unsafePath(rel, "symbolic link "+cur+" points outside "+root)
		}
	}
	return nil
}

// within reports whether path is root or below it.
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// WriteFile writes data to name below root (see SafeJoin), creating parent
// directories, and refuses to write through a symbolic link.
func WriteFile(root, name string, data []byte, perm fs.FileMode) error {
	p, err := SafeJoin(root, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return unsafePath(name, "is a symbolic link")
	}
	return os.WriteFile(p, data, perm)
}

// CheckTree walks root and refuses any symbolic link whose target resolves
// outside root (or does not resolve at all). Install runs it on the
// temporary directory before moving it into place.
func CheckTree(root string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		target, err := filepath.EvalSymlinks(path)
		if err != nil || !within(realRoot, target) {
			return unsafePath(filepath.ToSlash(rel), "symbolic link points outside the destination")
		}
		return nil
	})
}
