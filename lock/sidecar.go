package lock

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sort"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/sizecap"
)

// A signed lock (LOCK with its cosign signature LOCK.sig) is never
// rewritten in place: recording where its packages were mirrored would
// change the signed bytes. The mirror locations go instead into a sidecar,
// LOCK.mirror.yaml, beside it:
//
//	apiVersion: ferry.dev/v1alpha1
//	kind: LockMirrors
//	lock: sha256:HEX        # the lock (canonical bytes) this sidecar belongs to
//	to: HOST/PREFIX         # the mirror every package was copied to
//	packages:
//	  - source: SRCHOST/PATH
//	    digest: sha256:…
//	    mirror: HOST/PREFIX/PATH
//
// The sidecar is not signed and need not be: it only says where to read,
// and everything read is checked against the signed lock's digests. A
// sidecar whose lock digest is not the lock's is stale and ignored.

// MirrorsKind identifies a mirror sidecar; MirrorsSuffix is what its name
// adds to the lock's.
const (
	MirrorsKind   = "LockMirrors"
	MirrorsSuffix = ".mirror.yaml"
)

// ErrStaleMirrors: a sidecar belongs to another version of the lock.
var ErrStaleMirrors = errors.New("mirror sidecar belongs to another version of the lock")

// maxMirrorsFile bounds a sidecar; it is smaller than its lock.
var maxMirrorsFile = MaxFileSize

// Mirrors is the content of a mirror sidecar, LOCK.mirror.yaml.
type Mirrors struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	// Lock is the SHA-256 digest of the canonical bytes (Marshal) of the
	// lock these locations belong to.
	Lock string `yaml:"lock" json:"lock"`
	// To is the mirror HOST[/PREFIX] the packages were copied to, as
	// `ferry mirror --to` takes it.
	To string `yaml:"to" json:"to"`
	// Packages are each package's mirror repository.
	Packages []MirrorLocation `yaml:"packages,omitempty" json:"packages,omitempty"`
}

// MirrorLocation is where one locked package was mirrored.
type MirrorLocation struct {
	Source string `yaml:"source" json:"source"`
	Digest string `yaml:"digest" json:"digest"`
	Mirror string `yaml:"mirror" json:"mirror"`
}

// MirrorsPath is the sidecar of the lock at lockPath.
func MirrorsPath(lockPath string) string { return lockPath + MirrorsSuffix }

// Digest returns the SHA-256 digest of the lock's canonical bytes, as a
// sidecar names it.
func (l *Lock) Digest() (string, error) {
	data, err := l.Marshal()
	if err != nil {
		return "", err
	}
	return digestOf(data), nil
}

func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// NewMirrors returns the sidecar for signed, the lock as signed (without
// the locations), recording the mirror locations that mirrored (the same
// lock after a mirror run set them) holds for its packages, and to, the
// mirror they were copied to.
func NewMirrors(signed, mirrored *Lock, to string) (*Mirrors, error) {
	d, err := signed.Digest()
	if err != nil {
		return nil, err
	}
	m := &Mirrors{APIVersion: APIVersion, Kind: MirrorsKind, Lock: d, To: to}
	for _, p := range mirrored.Resolved() {
		if p.Mirror != "" {
			m.Packages = append(m.Packages, MirrorLocation{Source: p.Source, Digest: p.Digest, Mirror: p.Mirror})
		}
	}
	sort.Slice(m.Packages, func(i, j int) bool {
		a, b := m.Packages[i], m.Packages[j]
		return a.Source+"@"+a.Digest < b.Source+"@"+b.Digest
	})
	return m, nil
}

// Write writes the sidecar beside the lock at lockPath, atomically.
func (m *Mirrors) Write(lockPath string) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return WriteFileAtomic(MirrorsPath(lockPath), buf.Bytes(), 0o644)
}

// ReadMirrors reads the sidecar of the lock at lockPath, l being that
// lock as read: nil and no error when there is none; ErrStaleMirrors (with
// the sidecar) when it names another lock; a malformed sidecar is bad
// input (exit code 2).
func ReadMirrors(lockPath string, l *Lock) (*Mirrors, error) {
	path := MirrorsPath(lockPath)
	data, err := sizecap.ReadFile(path, maxMirrorsFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, exitcode.BadInput("reading %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m Mirrors
	if err := dec.Decode(&m); err != nil {
		return nil, exitcode.BadInput("%s: %w", path, err)
	}
	if m.APIVersion != APIVersion || m.Kind != MirrorsKind {
		return nil, exitcode.BadInput("%s: apiVersion %q kind %q: want %s %s", path, m.APIVersion, m.Kind, APIVersion, MirrorsKind)
	}
	if m.To == "" {
		return nil, exitcode.BadInput("%s: no mirror (to:)", path)
	}
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	if m.Lock != d {
		return &m, fmt.Errorf("%s: %w (it names %s, the lock is %s)", path, ErrStaleMirrors, m.Lock, d)
	}
	return &m, nil
}

// Apply sets the mirror location of every package of l the sidecar names
// (by source and digest). It changes l's bytes: a lock whose signature is
// checked afterwards must be checked before, or use To as the mirror.
func (m *Mirrors) Apply(l *Lock) {
	at := map[string]string{}
	for _, p := range m.Packages {
		at[p.Source+"@"+p.Digest] = p.Mirror
	}
	for _, p := range l.Resolved() {
		if mirror, ok := at[p.Source+"@"+p.Digest]; ok {
			p.Mirror = mirror
		}
	}
}

// ReadWithMirrors reads the lock at path and its mirror sidecar, if one
// belongs to it. The lock is returned as it is on disk (its signature, if
// any, still covers it); the sidecar, nil when there is none or when it is
// stale, says where its packages were mirrored. A stale sidecar is
// reported in stale, for a warning.
func ReadWithMirrors(path string) (l *Lock, m *Mirrors, stale error, err error) {
	l, err = Read(path)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err = ReadMirrors(path, l)
	if errors.Is(err, ErrStaleMirrors) {
		return l, nil, err, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return l, m, nil, nil
}

// SignatureSuffix names a lock's cosign blob signature, LOCK.sig.
const SignatureSuffix = ".sig"

// SignedState reads what is at lockPath for a command about to write l
// there: the file's bytes (nil when there is no lock), its signature
// LOCK.sig (nil when there is none), and whether l's canonical bytes are
// exactly the file's, so that writing l would leave a signed lock as it
// is.
func SignedState(lockPath string, l *Lock) (data, sig []byte, same bool, err error) {
	data, err = sizecap.ReadFile(lockPath, MaxFileSize)
	if errors.Is(err, os.ErrNotExist) {
		data, err = nil, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading %s: %w", lockPath, err)
	}
	sig, err = sizecap.ReadFile(lockPath+SignatureSuffix, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		sig, err = nil, nil
	}
	if err != nil {
		return nil, nil, false, fmt.Errorf("reading %s: %w", lockPath+SignatureSuffix, err)
	}
	want, err := l.Marshal()
	if err != nil {
		return nil, nil, false, err
	}
	return data, sig, data != nil && bytes.Equal(data, want), nil
}

// WriteSigned writes a signed lock's exact bytes and its signature to
// lockPath and LOCK.sig, with the sidecar m when set, removing a sidecar
// that m does not replace. A lock already holding data is left untouched.
func WriteSigned(lockPath string, data, sig []byte, m *Mirrors) error {
	if old, err := os.ReadFile(lockPath); err != nil || !bytes.Equal(old, data) {
		if err := WriteFileAtomic(lockPath, data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", lockPath, err)
		}
	}
	if err := WriteFileAtomic(lockPath+SignatureSuffix, sig, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", lockPath+SignatureSuffix, err)
	}
	if m != nil {
		return m.Write(lockPath)
	}
	return RemoveMirrors(lockPath)
}

// RemoveMirrors removes the sidecar of the lock at lockPath, if any: a
// lock written with its mirror locations inside needs none.
func RemoveMirrors(lockPath string) error {
	if err := os.Remove(MirrorsPath(lockPath)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
