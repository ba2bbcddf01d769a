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

// CheckUnsignedWrite reports whether an unsigned lock may be written at
// path (an import of an archive whose lock carries no signature): not
// over a signed lock (path.sig beside it), which would let an older or
// other closure pass for the signed one (TUF's rule: trusted metadata is
// never replaced by untrusted), nor when requireSigned (ferry.yaml
// `lock: {requireSigned: true}`) says every lock must be signed.
func CheckUnsignedWrite(path string, requireSigned bool) error {
	if _, err := os.Stat(path + sigSuffix); err == nil {
		return fmt.Errorf("%w: %s is signed (%s) and the new lock is not; sign it (ferry lock --sign-key, or mirror --to-archive --sign-key on the connected side), or write it elsewhere with --lock", ErrUnsignedReplace, path, path+sigSuffix)
	}
	if requireSigned {
		return fmt.Errorf("%w: ferry.yaml's lock.requireSigned is set and the new lock for %s is not signed; sign it (ferry lock --sign-key) before it is carried", ErrUnsignedReplace, path)
	}
	return nil
}
