// Package exitcode attaches ferry's documented exit codes to errors.
//
//	0 success
//	1 failure: network, registry, I/O, a graph that cannot be resolved
//	2 usage or bad input file
//	3 the lock and reality disagree
package exitcode

import (
	"errors"
	"fmt"
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
// Error in its chain, else Failure.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}
