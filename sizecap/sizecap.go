// Package sizecap reads input files (ferry.yaml, porter.yaml,
// crossplane.yaml, ferry.lock) with a cap on their size, checked before
// any of the file is parsed, so that a huge or endless input fails fast
// with a clear error instead of taking the machine's memory.
package sizecap

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError reports an input larger than its cap.
type TooLargeError struct {
	// Path is the file read.
	Path string
	// Size is the file's size, or -1 when it is not a regular file and
	// only reading past the cap showed it too large.
	Size int64
	// Max is the cap.
	Max int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s is larger than the %s an input file may have", e.Path, human(e.Max))
	}
	return fmt.Sprintf("%s is %s (%d bytes), larger than the %s an input file may have", e.Path, human(e.Size), e.Size, human(e.Max))
}

// human writes n bytes in MiB or KiB.
func human(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// IsTooLarge reports whether err is, or wraps, a *TooLargeError.
func IsTooLarge(err error) bool {
	var e *TooLargeError
	return errors.As(err, &e)
}

// ReadFile reads the file at path, at most max bytes. A regular file
// larger than max fails before a byte is read; any other file (a pipe, a
// device) is read through a limit of max+1 bytes. Other errors are those
// of os.Open and reading, unwrapped, so that errors.Is(err, os.ErrNotExist)
// still holds.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > max {
		return nil, &TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		// The file grew while it was read, or is not a regular file.
		return nil, &TooLargeError{Path: path, Size: -1, Max: max}
	}
	return data, nil
}
