// Package exitcode attaches ferry's documented exit codes to errors.
//
//	0 success
//	1 failure: network, registry, I/O, a graph that cannot be resolved
//	2 usage or bad input file
//	3 the lock and reality disagree (a digest mismatch of fetched bytes
//	  included: see Of)
package exitcode

import (
	"errors"
	"fmt"
	"github.com/ferryhq/ferry/errkind"

	"oras.land/oras-go/v2/content"
)

// The exit codes ferry documents.
const (
	OK       = 0
	Failure  = 1
	Usage    = 2
	Mismatch = 3
)

// Error is an error with the exit code the CLI should end with.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *Error) Unwrap() error { return e.Err }

// With wraps err so that the CLI exits with code.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// BadInput returns a formatted error that exits with Usage (2).
func BadInput(format string, args ...any) error {
	return With(Usage, fmt.Errorf(format, args...))
}

// Mismatchf returns a formatted error that exits with Mismatch (3).
func Mismatchf(format string, args ...any) error {
	return With(Mismatch, fmt.Errorf(format, args...))
}

// Of returns the exit code for err: 0 for nil, the code of the outermost
// Error in its chain, else the code of the kind its outermost mark names
// (package errkind: Mismatch for errkind.Mismatch, Usage for
// errkind.BadInput), else Mismatch for bytes that do not hash to the
// digest they were fetched by, else Failure: libraries mark what went
// wrong, and this is where it becomes a code.
//
// A manifest or blob whose bytes do not hash to its digest (oras-go's
// content.ErrMismatchedDigest, or content.ErrTrailingData: more bytes
// than its size) is reality disagreeing with the digest the lock or a
// manifest pins, whatever the registry answers, at every stage (lock,
// mirror, verify, install): it is never retried (client.IsTransient) and
// it exits with Mismatch.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	switch errkind.Of(err) {
	case errkind.Mismatch:
		return Mismatch
	case errkind.BadInput:
		return Usage
	}
	if IsDigestMismatch(err) {
		return Mismatch
	}
	return Failure
}

// IsDigestMismatch reports whether err is fetched bytes that do not hash
// to their digest, or run past their size (see Of).
func IsDigestMismatch(err error) bool {
	return errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData)
}
