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

	"github.com/ferryhq/ferry/errkind"
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
//	to: HOST/PREFIX         # the mirror of the latest run
//	packages:
//	  - source: SRCHOST/PATH
//	    digest: sha256:…
//	    mirror: HOST/PREFIX/PATH
//	extensions:             # content formats carry in their lock sections
//	  - section: mixins
//	    name: exec
//	    version: v1.2.3
//	    mirror: HOST/PREFIX/porter-mixins/exec@sha256:…
//	earlier:                # other mirrors this lock went to, latest first
//	  - to: HOST2/PREFIX
//	    packages: [...]
//	    extensions: [...]
//
// Each mirror run records its destination on top and keeps the others a
// sidecar of the same lock records (one entry per destination): as copies
// with crane, oras or skopeo, each destination is a copy of its own, and
// the one copied last is the default of verify and install (the mirror
// an unsigned lock records). The sidecar is not signed and need not be: it
// only says where to read, and everything read is checked against the
// signed lock's digests. A sidecar whose lock digest is not the lock's is
// stale and ignored.

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
	// MirrorRecord is the latest mirror run's destination and locations.
	MirrorRecord `yaml:",inline"`
	// Earlier are the other mirrors the lock was copied to, latest first,
	// one per destination.
	Earlier []MirrorRecord `yaml:"earlier,omitempty" json:"earlier,omitempty"`
}

// MirrorRecord is where one mirror run copied a lock's content.
type MirrorRecord struct {
	// To is the mirror HOST[/PREFIX] the packages were copied to, as
	// `ferry mirror --to` takes it.
	To string `yaml:"to" json:"to"`
	// Packages are each package's mirror repository.
	Packages []MirrorLocation `yaml:"packages,omitempty" json:"packages,omitempty"`
	// Extensions are the mirror locations of the items of the lock's
	// format sections (Porter mixins), as their formats record them
	// (RegisterSectionMirrors).
	Extensions []ItemMirror `yaml:"extensions,omitempty" json:"extensions,omitempty"`
}

// MirrorLocation is where one locked package was mirrored.
type MirrorLocation struct {
	Source string `yaml:"source" json:"source"`
	Digest string `yaml:"digest" json:"digest"`
	Mirror string `yaml:"mirror" json:"mirror"`
}

// ItemMirror is where one item of a format's lock section (a Porter mixin
// version) was mirrored.
type ItemMirror struct {
	// Section is the lock section ("mixins"); a format's SectionMirrors
	// leaves it empty, the sidecar sets it.
	Section string `yaml:"section,omitempty" json:"section,omitempty"`
	// Name and Version identify the item in its section.
	Name    string `yaml:"name" json:"name"`
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Mirror is "REPO@DIGEST" of the item in the mirror.
	Mirror string `yaml:"mirror" json:"mirror"`
}

// SectionMirrors reads and sets the mirror locations of the items of a
// format's lock section, so that a signed lock's sidecar records them as
// it records its packages'.
type SectionMirrors struct {
	// Get returns the mirror location l records for each item of the
	// section that has one.
	Get func(l *Lock) ([]ItemMirror, error)
	// Set records the locations in l, for the items l locks; it sets no
	// content, only where to read it (checked against l when read).
	Set func(l *Lock, items []ItemMirror) error
}

// sectionMirrors holds the registrations, made by the first one.
var sectionMirrors map[string]SectionMirrors

// RegisterSectionMirrors declares how the mirror locations of section
// key's items are read and set (see SectionMirrors); the format that owns
// the section registers it, as it registers the section
// (RegisterSection).
func RegisterSectionMirrors(key string, m SectionMirrors) {
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	if sectionMirrors == nil {
		sectionMirrors = map[string]SectionMirrors{}
	}
	sectionMirrors[key] = m
}

// registeredSectionMirrors returns the registrations, by section name.
func registeredSectionMirrors() map[string]SectionMirrors {
	sectionsMu.RLock()
	defer sectionsMu.RUnlock()
	out := make(map[string]SectionMirrors, len(sectionMirrors))
	for k, v := range sectionMirrors {
		out[k] = v
	}
	return out
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
// lock after a mirror run set them) holds for its packages and for the
// items of its format sections, and to, the mirror they were copied to.
func NewMirrors(signed, mirrored *Lock, to string) (*Mirrors, error) {
	d, err := signed.Digest()
	if err != nil {
		return nil, err
	}
	m := &Mirrors{APIVersion: APIVersion, Kind: MirrorsKind, Lock: d, MirrorRecord: MirrorRecord{To: to}}
	for _, p := range mirrored.Resolved() {
		if p.Mirror != "" {
			m.Packages = append(m.Packages, MirrorLocation{Source: p.Source, Digest: p.Digest, Mirror: p.Mirror})
		}
	}
	sort.Slice(m.Packages, func(i, j int) bool {
		a, b := m.Packages[i], m.Packages[j]
		return a.Source+"@"+a.Digest < b.Source+"@"+b.Digest
	})
	regs := registeredSectionMirrors()
	keys := make([]string, 0, len(regs))
	for k := range regs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := mirrored.Sections[k]; !ok {
			continue
		}
		items, err := regs[k].Get(mirrored)
		if err != nil {
			return nil, fmt.Errorf("lock section %s: %w", k, err)
		}
		for _, it := range items {
			it.Section = k
			m.Extensions = append(m.Extensions, it)
		}
	}
	return m, nil
}

// keep records, below m's own mirror, the mirrors prev (an earlier sidecar
// of the same lock) records for other destinations, latest first.
func (m *Mirrors) keep(prev *Mirrors) {
	if prev == nil || prev.Lock != m.Lock {
		return
	}
	m.Earlier = nil
	seen := map[string]bool{m.To: true}
	for _, r := range append([]MirrorRecord{prev.MirrorRecord}, prev.Earlier...) {
		if r.To == "" || seen[r.To] {
			continue
		}
		seen[r.To] = true
		m.Earlier = append(m.Earlier, r)
	}
}

// Record returns the record of the mirror to (HOST[/PREFIX], as `ferry
// mirror --to` takes it), or the latest one when to is empty; nil when the
// sidecar records no mirror to.
func (m *Mirrors) Record(to string) *MirrorRecord {
	if m == nil {
		return nil
	}
	if to == "" || m.To == to {
		return &m.MirrorRecord
	}
	for i := range m.Earlier {
		if m.Earlier[i].To == to {
			return &m.Earlier[i]
		}
	}
	return nil
}

// Write writes the sidecar beside the lock at lockPath, atomically. The
// mirrors a sidecar of the same lock already there records for other
// destinations are kept, below this one (Earlier).
func (m *Mirrors) Write(lockPath string) error {
	if prev, err := readMirrorsFile(MirrorsPath(lockPath)); err == nil {
		m.keep(prev)
	}
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

// readMirrorsFile reads and checks a sidecar file, whatever lock it
// belongs to; a missing file is os.ErrNotExist, a malformed one bad input.
func readMirrorsFile(path string) (*Mirrors, error) {
	data, err := sizecap.ReadFile(path, maxMirrorsFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "reading %s: %w", path, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m Mirrors
	if err := dec.Decode(&m); err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	if m.APIVersion != APIVersion || m.Kind != MirrorsKind {
		return nil, errkind.Markf(errkind.BadInput, "%s: apiVersion %q kind %q: want %s %s", path, m.APIVersion, m.Kind, APIVersion, MirrorsKind)
	}
	if m.To == "" {
		return nil, errkind.Markf(errkind.BadInput, "%s: no mirror (to:)", path)
	}
	for i, r := range m.Earlier {
		if r.To == "" {
			return nil, errkind.Markf(errkind.BadInput, "%s: earlier[%d]: no mirror (to:)", path, i)
		}
	}
	return &m, nil
}

// ReadMirrors reads the sidecar of the lock at lockPath, l being that
// lock as read: nil and no error when there is none; ErrStaleMirrors (with
// the sidecar) when it names another lock; a malformed sidecar is bad
// input (exit code 2).
func ReadMirrors(lockPath string, l *Lock) (*Mirrors, error) {
	m, err := readMirrorsFile(MirrorsPath(lockPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	d, err := l.Digest()
	if err != nil {
		return nil, err
	}
	if m.Lock != d {
		return m, fmt.Errorf("%s: %w (it names %s, the lock is %s)", MirrorsPath(lockPath), ErrStaleMirrors, m.Lock, d)
	}
	return m, nil
}

// Apply sets the mirror location of every package of l the sidecar's
// latest mirror names (by source and digest), and of every item of l's
// format sections (see MirrorRecord.Apply). It changes l's bytes: a lock
// whose signature is checked afterwards must be checked before, or use To
// as the mirror.
func (m *Mirrors) Apply(l *Lock) error { return m.MirrorRecord.Apply(l) }

// Apply sets the mirror location of every package of l the record names
// (by source and digest), and has each format set the locations of its
// section's items (SectionMirrors.Set). Only locations are set: what is
// read there is checked against l.
func (r *MirrorRecord) Apply(l *Lock) error {
	at := map[string]string{}
	for _, p := range r.Packages {
		at[p.Source+"@"+p.Digest] = p.Mirror
	}
	for _, p := range l.Resolved() {
		if mirror, ok := at[p.Source+"@"+p.Digest]; ok {
			p.Mirror = mirror
		}
	}
	bySection := map[string][]ItemMirror{}
	for _, it := range r.Extensions {
		bySection[it.Section] = append(bySection[it.Section], it)
	}
	regs := registeredSectionMirrors()
	keys := make([]string, 0, len(bySection))
	for k := range bySection {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		reg, ok := regs[k]
		if !ok {
			continue // a section no format of this build owns
		}
		if _, ok := l.Sections[k]; !ok {
			continue
		}
		if err := reg.Set(l, bySection[k]); err != nil {
			return fmt.Errorf("lock section %s: mirror locations: %w", k, err)
		}
	}
	return nil
}

// ApplyMirrors applies to l, the lock at lockPath as a run is about to
// mirror it, the mirror locations its sidecar records (see
// MirrorRecord.Apply): those of the mirror from (HOST[/PREFIX]) when the
// sidecar records it, else of the latest. A signed lock records no
// location of its own, and mirror to mirror reads its mixins where the
// sidecar says they are. No sidecar, or a stale one, applies nothing.
func ApplyMirrors(lockPath string, l *Lock, from string) error {
	m, err := ReadMirrors(lockPath, l)
	if errors.Is(err, ErrStaleMirrors) || m == nil {
		return nil
	}
	if err != nil {
		return err
	}
	r := m.Record(from)
	if r == nil {
		r = &m.MirrorRecord
	}
	return r.Apply(l)
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
// is. It sets l's serial for writing over the file first (Advance).
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
	if data != nil {
		l.Advance(data)
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
