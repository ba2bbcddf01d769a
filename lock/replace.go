package lock

import (
	"errors"
	"fmt"
	"os"
)

// sigSuffix names a lock's signature beside it, LOCK.sig, as
// signature.SigSuffix does (package lock does not import signature).
const sigSuffix = ".sig"

// ErrUnsignedReplace is wrapped by the error CheckUnsignedWrite returns
// when an unsigned lock would replace a signed one, or when the policy
// requires signed locks.
var ErrUnsignedReplace = errors.New("an unsigned lock may not replace a signed one")

// UnsignedReplaceError is the error of CheckUnsignedWrite: an unsigned
// lock would replace the signed lock at Path (Required false), or
// lock.requireSigned asks for a signed lock there (Required true). It is
// errors.Is ErrUnsignedReplace; the caller says how to sign the lock or
// name another.
type UnsignedReplaceError struct {
	Path     string
	Required bool
}

func (e *UnsignedReplaceError) Error() string {
	if e.Required {
		return fmt.Sprintf("%v: ferry.yaml's lock.requireSigned is set and the new lock for %s is not signed", ErrUnsignedReplace, e.Path)
	}
	return fmt.Sprintf("%v: %s is signed (%s) and the new lock is not", ErrUnsignedReplace, e.Path, e.Path+sigSuffix)
}

// Is reports whether target is ErrUnsignedReplace.
func (e *UnsignedReplaceError) Is(target error) bool { return target == ErrUnsignedReplace }

// CheckUnsignedWrite reports whether an unsigned lock may be written at
// path (an import of an archive whose lock carries no signature): not
// over a signed lock (path.sig beside it), which would let an older or
// other closure pass for the signed one (TUF's rule: trusted metadata is
// never replaced by untrusted), nor when requireSigned (ferry.yaml
// `lock: {requireSigned: true}`) says every lock must be signed. The
// error is an *UnsignedReplaceError.
func CheckUnsignedWrite(path string, requireSigned bool) error {
	if _, err := os.Stat(path + sigSuffix); err == nil {
		return &UnsignedReplaceError{Path: path}
	}
	if requireSigned {
		return &UnsignedReplaceError{Path: path, Required: true}
	}
	return nil
}
