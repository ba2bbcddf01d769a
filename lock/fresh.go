package lock

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/sizecap"
)

// Freshness follows TUF's rule against rollback (theupdateframework
// specification, "5.3.5 Check for a rollback attack": a new version
// number lower than the trusted one is refused): a lock carries a serial
// under its signature, each lock written over another with other content
// takes the next serial, and a destination that already holds a lock
// (the lock an archive import writes, the install directory's plan)
// refuses a lock with a lower one unless told to accept a downgrade.

// serialOnly reads the serial of a lock without validating the rest.
type serialOnly struct {
	Serial int64 `yaml:"serial" json:"serial"`
}

// SerialOf returns the serial recorded in a lock's bytes (0 when it
// records none), reading nothing else.
func SerialOf(data []byte) (int64, error) {
	var s serialOnly
	if err := yaml.Unmarshal(data, &s); err != nil {
		return 0, fmt.Errorf("not a valid lock: %w", err)
	}
	if s.Serial < 0 {
		return 0, fmt.Errorf("not a valid lock: serial %d is negative", s.Serial)
	}
	return s.Serial, nil
}

// ReadSerial returns the serial of the lock at path and whether a lock is
// there at all.
func ReadSerial(path string) (serial int64, held bool, err error) {
	data, err := sizecap.ReadFile(path, MaxFileSize)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("reading %s: %w", path, err)
	}
	serial, err = SerialOf(data)
	if err != nil {
		return 0, true, fmt.Errorf("%s: %w", path, err)
	}
	return serial, true, nil
}

// Advance sets l's serial for writing it over old, the bytes of the lock
// it replaces: a serial above old's stays; otherwise l takes old's serial
// when its content is old's, and the next one when it is not. Old bytes
// that are no lock leave the serial as it is.
func (l *Lock) Advance(old []byte) {
	held, err := SerialOf(old)
	if err != nil || l.Serial > held {
		return
	}
	l.Serial = held
	if data, err := l.Marshal(); err == nil && bytes.Equal(data, old) {
		return
	}
	l.Serial = held + 1
}

// DowngradeError is a lock older (a lower serial) than the lock a
// destination already holds: a rollback to an older, possibly properly
// signed, lock.
type DowngradeError struct {
	// What names the lock offered (an archive's ferry.lock, a lock file).
	What string
	// Serial is its serial.
	Serial int64
	// Holder names what holds the newer lock (a lock file, an install
	// directory).
	Holder string
	// Held is the serial held.
	Held int64
}

func (e *DowngradeError) Error() string {
	return fmt.Sprintf("%s has serial %d, older than serial %d of the lock %s already holds: "+
		"refusing to roll back to an older lock", e.What, e.Serial, e.Held, e.Holder)
}

// CheckFresh returns nil unless serial is lower than held, the serial of
// the lock holder already has; then a *DowngradeError of kind
// errkind.Mismatch naming both.
func CheckFresh(what string, serial int64, holder string, held int64) error {
	if serial >= held {
		return nil
	}
	return errkind.Mark(errkind.Mismatch, &DowngradeError{What: what, Serial: serial, Holder: holder, Held: held})
}
