// Package errkind names the kinds of failure ferry's libraries report,
// without saying what a kind means to a caller: the CLI alone maps them
// to exit codes (exitcode.Of). A library marks an error with its kind and
// keeps its message.
package errkind

import (
	"errors"
	"fmt"
)

var (
	// BadInput is a file, flag value or setting the user gave that does
	// not hold (PRODUCT.md: exit 2).
	BadInput = errors.New("bad input")
	// Mismatch is the lock disagreeing with reality: a digest, a tag, a
	// signature, a package's contents (PRODUCT.md: exit 3).
	Mismatch = errors.New("the lock and reality disagree")
)

// Mark returns err, with its message unchanged, as an error of kind k
// (errors.Is(result, k)); nil stays nil.
func Mark(k, err error) error {
	if err == nil {
		return nil
	}
	return &marked{kind: k, err: err}
}

// BadInputError returns an error of kind BadInput with message msg, for
// a package-level sentinel: unlike Mark(BadInput, errors.New(msg)), the
// compiler lays it out in the binary's data, so nothing runs at start-up.
func BadInputError(msg string) error { return &sentinel{msg: msg, kind: badInput} }

// MismatchError is BadInputError for kind Mismatch.
func MismatchError(msg string) error { return &sentinel{msg: msg, kind: mismatch} }

// sentinel is an error made by BadInputError or MismatchError. Its kind
// is a constant, not the kind's variable, which another package's
// package-level value cannot name without an initialiser.
type sentinel struct {
	msg  string
	kind kindCode
}

// kindCode names a kind by a constant.
type kindCode uint8

const (
	badInput kindCode = iota + 1
	mismatch
)

// err returns the kind's error value.
func (c kindCode) err() error {
	if c == mismatch {
		return Mismatch
	}
	return BadInput
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.kind.err() }

// Markf is Mark of fmt.Errorf(format, args...).
func Markf(k error, format string, args ...any) error {
	return Mark(k, fmt.Errorf(format, args...))
}

type marked struct {
	kind error
	err  error
}

func (m *marked) Error() string   { return m.err.Error() }
func (m *marked) Unwrap() []error { return []error{m.err, m.kind} }

// Of returns the kind of err: that of the outermost mark in its chain
// (Mark, or an error in the chain whose Is method reports BadInput or
// Mismatch), nil when nothing marks it. A mark wrapping another decides,
// as an outer exit code decided over an inner one.
func Of(err error) error {
	for err != nil {
		if m, ok := err.(*marked); ok {
			return m.kind
		}
		if s, ok := err.(*sentinel); ok {
			return s.kind.err()
		}
		if x, ok := err.(interface{ Is(error) bool }); ok {
			for _, k := range []error{Mismatch, BadInput} {
				if x.Is(k) {
					return k
				}
			}
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if k := Of(e); k != nil {
					return k
				}
			}
			return nil
		default:
			return nil
		}
	}
	return nil
}
