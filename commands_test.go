package ferry_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
)

// recorder is a Hooks that keeps what a call reported: its lines, and the
// phases started and stopped.
type recorder struct {
	mu     sync.Mutex
	lines  []string
	phases []progress.Phase
	stops  int
	warns  []string
}

func (r *recorder) hooks() ferry.Hooks {
	return ferry.Hooks{
		Logf: func(format string, args ...any) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.lines = append(r.lines, fmt.Sprintf(format, args...))
		},
		Start: func(p progress.Phase) progress.Reporter {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.phases = append(r.phases, p)
			return progress.Discard
		},
		Stop: func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.stops++
		},
	}
}

func (r *recorder) warn(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.warns = append(r.warns, msg)
}

func (r *recorder) has(sub string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range append(append([]string{}, r.lines...), r.warns...) {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// signKey writes a cosign key pair into dir and returns the private key.
func signKey(t *testing.T, dir string) (*signature.PrivateKey, *signature.PublicKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := signature.EncryptPrivateKey(k, []byte("pw"), signature.ScryptLegacy)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cosign.key")
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	priv, err := signature.LoadPrivateKey(path, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := priv.Public()
	if err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// TestCommandCalls runs each command's one library call in the order a
// user does, over real registries: lock, mirror to a registry, verify
// (plain and deep), install, archive out and in, mirror to mirror, a
// shard, and resolve. Each call holds its whole order of steps; the test
// only passes options and reads results.
func TestCommandCalls(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	rec := &recorder{}
	e := w.env()
	e.Warn = rec.warn
	defer e.Close()
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ferry.lock")
	ms := w.inputs(t, "p/app:1.0.0")

	g, err := ferry.Resolve(ctx, ferry.ResolveOptions{Env: e, Inputs: ms, Hooks: rec.hooks()})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if len(g.Packages) != 2 {
		t.Fatalf("Resolve: %d packages, want 2", len(g.Packages))
	}

	var checked, beforeWrite bool
	lr, err := ferry.Lock(ctx, ferry.LockOptions{Env: e, Inputs: ms, Roots: []string{"app"}, LockPath: lockPath, Hooks: rec.hooks(),
		Check:       func(prev *lock.Lock) error { checked = prev == nil; return nil },
		BeforeWrite: func(*lock.Lock) error { beforeWrite = true; return nil }})
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if !checked || !beforeWrite {
		t.Errorf("Lock ran Check (no previous lock) %v and BeforeWrite %v, want both", checked, beforeWrite)
	}
	if len(lr.Lock.Resolved()) != 2 {
		t.Fatalf("Lock: %d packages, want 2", len(lr.Lock.Resolved()))
	}
	if _, err := os.Stat(lockPath); err != nil {
		t.Fatalf("Lock wrote no lock: %v", err)
	}

	to := w.mirror.Host + "/m"
	mr, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, To: to, Hooks: rec.hooks()})
	if err != nil {
		t.Fatalf("Mirror: %v", err)
	}
	if mr.Wrote != "lock "+lockPath || len(mr.Report.Packages) != 2 {
		t.Errorf("Mirror wrote %q, %d packages; want the lock and 2", mr.Wrote, len(mr.Report.Packages))
	}
	if !rec.has("mirrored " + w.src.Host + "/p/app -> ") {
		t.Errorf("Mirror reported no package line: %q", rec.lines)
	}
	mirrored, err := lock.Read(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mirrored.Resolved() {
		if !strings.HasPrefix(p.Mirror, to+"/") {
			t.Errorf("%s mirror %q, want under %s", p.Source, p.Mirror, to)
		}
	}

	for _, deep := range []bool{false, true} {
		rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: lockPath, Deep: deep, Hooks: rec.hooks()})
		if err != nil {
			t.Fatalf("Verify deep=%v: %v", deep, err)
		}
		if !rep.OK() || rep.Packages != 2 || rep.Deep != deep {
			t.Errorf("Verify deep=%v: ok %v, %d packages, deep %v; problems %v", deep, rep.OK(), rep.Packages, rep.Deep, rep.Problems)
		}
	}

	dest := filepath.Join(dir, "install")
	staged := &stagedHome{}
	ir, err := ferry.Install(ctx, ferry.InstallOptions{Env: e, LockPath: lockPath, Dest: dest, Hooks: rec.hooks(),
		StageHome: func(_ context.Context, l *lock.Lock, m *relocate.Mapping) (ferry.StagedHome, error) {
			return staged, nil
		}})
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	if len(ir.Plan.Steps) != 2 {
		t.Errorf("Install: %d steps, want 2", len(ir.Plan.Steps))
	}
	if !staged.committed || !staged.discarded {
		t.Errorf("Install: staged home committed %v, discarded %v; want both", staged.committed, staged.discarded)
	}
	for _, f := range []string{"plan.json", "relocation-mapping.json"} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("Install wrote no %s: %v", f, err)
		}
	}

	// Archive out, verified offline, and in to a third registry.
	archive := filepath.Join(dir, "closure.tar")
	ar, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, ToArchive: archive, Hooks: rec.hooks()})
	if err != nil {
		t.Fatalf("Mirror to archive: %v", err)
	}
	if !rec.has("wrote " + archive) {
		t.Errorf("Mirror to archive: no line for %s in %q", ar.Report.To, rec.lines)
	}
	rep, err := ferry.Verify(ctx, ferry.VerifyOptions{LockPath: lockPath, Archive: archive})
	if err != nil || !rep.OK() {
		t.Fatalf("Verify archive: %v %v", err, rep)
	}
	air := registrytest.New(t)
	airLock := filepath.Join(t.TempDir(), "ferry.lock")
	ir2, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: airLock, FromArchive: archive, To: air.Host + "/air", Hooks: rec.hooks()})
	if err != nil {
		t.Fatalf("Mirror from archive: %v", err)
	}
	if ir2.Wrote != "lock "+airLock || len(ir2.Report.Packages) != 2 {
		t.Errorf("Mirror from archive wrote %q, %d packages", ir2.Wrote, len(ir2.Report.Packages))
	}
	if rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: airLock}); err != nil || !rep.OK() {
		t.Errorf("Verify the imported mirror: %v %v", err, rep)
	}

	// Mirror to mirror, from the first mirror, and one shard of one.
	from, err := relocate.ParseMapping(to)
	if err != nil {
		t.Fatal(err)
	}
	next := registrytest.New(t)
	if _, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, From: &from, To: next.Host + "/next"}); err != nil {
		t.Fatalf("Mirror to mirror: %v", err)
	}
	if rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: lockPath, Mirror: next.Host + "/next"}); err != nil || !rep.OK() {
		t.Errorf("Verify the next mirror: %v %v", err, rep)
	}
	sh, err := relocate.ParseShard("1/1")
	if err != nil {
		t.Fatal(err)
	}
	shard := registrytest.New(t)
	res, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, To: shard.Host + "/s", Shard: &sh})
	if err != nil {
		t.Fatalf("Mirror shard: %v", err)
	}
	if res.Report.Shard == nil {
		t.Error("Mirror shard: no shard report")
	}
	if len(rec.phases) == 0 || rec.stops == 0 {
		t.Errorf("no phase started (%v) or stopped (%d)", rec.phases, rec.stops)
	}
}

type stagedHome struct{ committed, discarded bool }

func (s *stagedHome) Commit() error { s.committed = true; return nil }
func (s *stagedHome) Discard()      { s.discarded = true }

// TestCommandRefusals: the decisions each call makes before anything is
// written or copied, as typed errors of the kind the CLI turns into its
// exit code.
func TestCommandRefusals(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	e := w.env()
	defer e.Close()
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ferry.lock")
	ms := w.inputs(t, "p/app:1.0.0")
	if _, err := ferry.Lock(ctx, ferry.LockOptions{Env: e, Inputs: ms, LockPath: lockPath}); err != nil {
		t.Fatal(err)
	}
	other := w.inputs(t, "p/db:1.0.0")
	key, pub := signKey(t, t.TempDir())

	unsigned := filepath.Join(dir, "unsigned.tar")
	if _, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, ToArchive: unsigned}); err != nil {
		t.Fatal(err)
	}
	signedLock := filepath.Join(t.TempDir(), "ferry.lock")
	if _, err := ferry.Lock(ctx, ferry.LockOptions{Env: e, Inputs: ms, LockPath: signedLock, SignKey: key}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(signedLock + signature.SigSuffix); err != nil {
		t.Fatalf("Lock with SignKey wrote no signature: %v", err)
	}

	for _, tc := range []struct {
		name string
		run  func() error
		kind error
		as   any
	}{
		{"lock over another inputs' lock", func() error {
			_, err := ferry.Lock(ctx, ferry.LockOptions{Env: e, Inputs: other, Roots: []string{"db"}, LockPath: lockPath})
			return err
		}, errkind.BadInput, new(*ferry.OverwriteError)},
		{"mirror over another inputs' lock", func() error {
			_, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, Inputs: other, Roots: []string{"db"}, LockPath: lockPath, To: w.mirror.Host + "/m"})
			return err
		}, errkind.BadInput, new(*ferry.OverwriteError)},
		{"mirror with no destination", func() error {
			_, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath})
			return err
		}, errkind.BadInput, nil},
		{"mirror inputs with no destination", func() error {
			_, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, Inputs: ms, LockPath: lockPath})
			return err
		}, errkind.BadInput, nil},
		{"import an unsigned archive with a lock key", func() error {
			_, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: filepath.Join(t.TempDir(), "l"), FromArchive: unsigned, To: w.mirror.Host + "/air", LockKey: pub})
			return err
		}, errkind.Mismatch, new(*ferry.ArchiveLockError)},
		{"an unsigned archive never replaces a signed lock", func() error {
			_, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: signedLock, FromArchive: unsigned, To: w.mirror.Host + "/air"})
			return err
		}, errkind.Mismatch, nil},
		{"verify --resolve without inputs", func() error {
			_, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: lockPath, Resolve: true})
			return err
		}, errkind.BadInput, new(*ferry.InputsGoneError)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			if err == nil {
				t.Fatal("no error")
			}
			if errkind.Of(err) != tc.kind {
				t.Errorf("kind %v, want %v: %v", errkind.Of(err), tc.kind, err)
			}
			if tc.as != nil && !errors.As(err, tc.as) {
				t.Errorf("%T is not %T: %v", err, tc.as, err)
			}
		})
	}

	// A signed lock the run would change is refused before anything is
	// copied; unchanged, it is kept and its mirror locations go to its
	// sidecar.
	edited, err := lock.Read(signedLock)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: signedLock, To: w.mirror.Host + "/signed"})
	if err != nil {
		t.Fatalf("Mirror a signed lock: %v", err)
	}
	if !strings.Contains(res.Wrote, "unchanged, mirror locations in "+lock.MirrorsPath(signedLock)) {
		t.Errorf("Mirror a signed lock wrote %q", res.Wrote)
	}
	if _, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: signedLock, LockKey: pub}); err != nil {
		t.Errorf("Verify a signed lock: %v", err)
	}
	var changed *ferry.SignedLockChangedError
	_, err = ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, Inputs: other, LockNamed: true, LockPath: signedLock, To: w.mirror.Host + "/signed"})
	if !errors.As(err, &changed) || errkind.Of(err) != errkind.BadInput {
		t.Errorf("Mirror that changes a signed lock: %v, want a SignedLockChangedError", err)
	}
	edited.Packages = edited.Packages[:1]
	if err := edited.Write(signedLock); err != nil {
		t.Fatal(err)
	}
	rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: signedLock, LockKey: pub})
	if err != nil || rep.OK() {
		t.Errorf("Verify an edited signed lock: %v, ok %v; want a problem", err, rep != nil && rep.OK())
	}
	if _, err := ferry.Install(ctx, ferry.InstallOptions{Env: e, LockPath: signedLock, Dest: filepath.Join(t.TempDir(), "d"), LockKey: pub}); exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("Install an edited signed lock: %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
}

// TestGuardLock: a run given ROOTs replaces a lock only when it was made
// from the same inputs, or the lock file was named.
func TestGuardLock(t *testing.T) {
	a, err := mirrorset.FromRefs([]string{"example.com/a:1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := mirrorset.FromRefs([]string{"example.com/b:1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	prev := &lock.Lock{Inputs: a.Digest()}
	fromFile := &lock.Lock{Inputs: "other", Input: "ferry.yaml"}
	for _, tc := range []struct {
		name  string
		prev  *lock.Lock
		ms    *mirrorset.MirrorSet
		input string
		roots []string
		named bool
		want  string
	}{
		{"no lock yet", nil, b, "", []string{"b"}, false, ""},
		{"no roots", prev, b, "", nil, false, ""},
		{"same inputs", prev, a, "", []string{"a"}, false, ""},
		{"named", prev, b, "", []string{"b"}, true, ""},
		{"other references", prev, b, "", []string{"b"}, false, "was made from other command-line references, not from b"},
		{"same input file", fromFile, b, "ferry.yaml", []string{"ferry.yaml"}, false, ""},
		{"other input file", fromFile, b, "other.yaml", []string{"other.yaml"}, false, "was made from ferry.yaml, not from other.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ferry.GuardLock(tc.prev, tc.ms, tc.input, "ferry.lock", tc.roots, tc.named)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ow *ferry.OverwriteError
			if !errors.As(err, &ow) || !strings.Contains(err.Error(), tc.want) || exitcode.Of(err) != exitcode.Usage {
				t.Errorf("%v (exit %d), want an OverwriteError saying %q, exit 2", err, exitcode.Of(err), tc.want)
			}
		})
	}
}

// TestCheckArchiveLock: no key checks nothing; with one, a missing or a
// wrong signature is a mismatch.
func TestCheckArchiveLock(t *testing.T) {
	key, pub := signKey(t, t.TempDir())
	data := []byte("lock")
	sig, err := key.SignBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		key  *signature.PublicKey
		data []byte
		sig  []byte
		ok   bool
		text string
	}{
		{"no key", nil, data, nil, true, ""},
		{"signed", pub, data, sig, true, ""},
		{"no signature", pub, data, nil, false, "carries no " + relocate.ArchiveLockSigFile},
		{"another lock", pub, []byte("other"), sig, false, "does not sign its " + relocate.ArchiveLockFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ferry.CheckArchiveLock("a.tar", tc.key, tc.data, tc.sig)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !strings.Contains(fmt.Sprint(err), tc.text) || exitcode.Of(err) != exitcode.Mismatch {
				t.Errorf("%v (exit %d), want %q, exit 3", err, exitcode.Of(err), tc.text)
			}
		})
	}
}

// TestCommandCallsSigned: a lock signed when written into an archive
// crosses it as carried (its bytes and signature, the mirror locations in
// its sidecar), and the lock is locked and mirrored in one call when the
// inputs are given; a lock that no longer parses is first of all a bad
// signature.
func TestCommandCallsSigned(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	e := w.env()
	defer e.Close()
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ferry.lock")
	ms := w.inputs(t, "p/app:1.0.0")
	ms.Mirror.To = w.mirror.Host + "/m"
	key, pub := signKey(t, t.TempDir())
	rec := &recorder{}

	// Locked and mirrored in one call, to the inputs' mirror.to, and
	// signed.
	res, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, Inputs: ms, LockPath: lockPath, SignKey: key, Hooks: rec.hooks()})
	if err != nil {
		t.Fatalf("Mirror with inputs: %v", err)
	}
	if res.Report.To != ms.Mirror.To || !rec.has("signed "+lockPath) {
		t.Errorf("Mirror with inputs: to %q, lines %q", res.Report.To, rec.lines)
	}
	if rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: lockPath, LockKey: pub}); err != nil || !rep.OK() {
		t.Errorf("Verify the signed lock: %v %v", err, rep)
	}

	archive := filepath.Join(dir, "signed.tar")
	if _, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: lockPath, ToArchive: archive}); err != nil {
		t.Fatalf("Mirror a signed lock to an archive: %v", err)
	}
	air := registrytest.New(t)
	airLock := filepath.Join(t.TempDir(), "ferry.lock")
	in, err := ferry.Mirror(ctx, ferry.MirrorOptions{Env: e, LockPath: airLock, FromArchive: archive, To: air.Host + "/air", LockKey: pub})
	if err != nil {
		t.Fatalf("Mirror from a signed archive: %v", err)
	}
	if !strings.Contains(in.Wrote, "as carried, mirror locations in "+lock.MirrorsPath(airLock)) {
		t.Errorf("Mirror from a signed archive wrote %q", in.Wrote)
	}
	carried, err := os.ReadFile(airLock)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(carried) != string(signed) {
		t.Error("the imported lock is not the signed lock's bytes")
	}
	if rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: airLock, LockKey: pub}); err != nil || !rep.OK() {
		t.Errorf("Verify the imported signed lock: %v %v", err, rep)
	}
	if _, err := ferry.Install(ctx, ferry.InstallOptions{Env: e, LockPath: airLock, LockKey: pub, RequireSignedLock: true, Dest: filepath.Join(t.TempDir(), "d")}); err != nil {
		t.Errorf("Install the imported signed lock: %v", err)
	}

	// A lock that no longer parses, with its signature checked.
	if err := os.WriteFile(airLock, []byte("not: [a lock"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := ferry.Verify(ctx, ferry.VerifyOptions{Env: e, LockPath: airLock, LockKey: pub})
	if err != nil || rep.OK() || rep.Problems[0].Package != "(lock)" {
		t.Errorf("Verify an unparsable signed lock: %v %+v, want the lock's signature problem", err, rep)
	}
	if _, err := ferry.Install(ctx, ferry.InstallOptions{Env: e, LockPath: airLock, LockKey: pub, Dest: filepath.Join(t.TempDir(), "d")}); exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("Install an unparsable signed lock: %v, want exit 3", err)
	}
}

// TestCommandErrors: the typed errors' messages name what is wrong and
// no flag; their kinds decide the exit code.
func TestCommandErrors(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{&ferry.SignedLockChangedError{Lock: "f.lock"}, "f.lock is signed (f.lock.sig) and this run would change it", exitcode.Usage},
		{&ferry.UnrecordedSignaturesError{Lock: "f.lock"}, "f.lock is signed and does not record 0 signatures", exitcode.Mismatch},
		{&ferry.ArchiveLockError{Archive: "a.tar"}, "refusing to import a.tar: it carries no", exitcode.Mismatch},
		{&ferry.InputsGoneError{}, "it was made from command-line roots", exitcode.Usage},
		{&ferry.InputsGoneError{Path: "ferry.yaml"}, "ferry.yaml is gone", exitcode.Usage},
		{&ferry.OverwriteError{Lock: "f.lock", From: "ferry.yaml", Roots: []string{"x"}}, "f.lock was made from ferry.yaml, not from x", exitcode.Usage},
		{ferry.ErrNoDestination, "mirror needs a destination", exitcode.Usage},
		{ferry.ErrNoMirror, "the lock records no mirror", exitcode.Usage},
	} {
		if !strings.Contains(tc.err.Error(), tc.want) || exitcode.Of(tc.err) != tc.code {
			t.Errorf("%T: %q (exit %d), want %q, exit %d", tc.err, tc.err, exitcode.Of(tc.err), tc.want, tc.code)
		}
		if strings.Contains(tc.err.Error(), "--") {
			t.Errorf("%T names a flag: %q", tc.err, tc.err)
		}
	}
}
