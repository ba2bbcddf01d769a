package main

import (
	"archive/tar"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
)

// e2eSignKey writes a cosign key pair into env: cosign.pub, and cosign.key
// encrypted in cosign's format (scrypt + nacl/secretbox, as cosign
// generate-key-pair writes it) with the password in $COSIGN_PASSWORD.
func e2eSignKey(t *testing.T, env *clitest.Env) *signature.PrivateKey {
	t.Helper()
	s := e2eSigner(t, env, "cosign.pub")
	enc, err := signature.EncryptPrivateKey(s.Key, []byte("s3cret"), signature.ScryptLegacy)
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("cosign.key", string(enc))
	env.Vars = append(env.Vars, signature.PasswordEnv+"=s3cret")
	k, err := signature.ParsePrivateKey(enc, []byte("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// tarEntries returns every regular file of a tar, in order.
func tarEntries(t *testing.T, path string) ([]string, map[string][]byte) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		files[h.Name] = b
	}
}

// rewriteTar writes a copy of the tar at src to dst with edit applied to
// its files (a nil result drops the file).
func rewriteTar(t *testing.T, src, dst string, edit func(name string, b []byte) []byte) {
	t.Helper()
	names, files := tarEntries(t, src)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		b := edit(n, files[n])
		if b == nil {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manifestPuts counts the manifests pushed to r since its last Reset.
func manifestPuts(r *registrytest.Registry) int {
	n := 0
	for _, q := range r.Requests() {
		if q.Method == http.MethodPut && strings.Contains(q.Path, "/manifests/") {
			n++
		}
	}
	return n
}

// TestSignedLockAirGap: a lock signed by ferry lock --sign-key crosses an
// air gap with its signature. The import checks it before pushing
// anything, refuses an archive whose lock was edited after signing or that
// carries no signature, and leaves the signed lock as it was: the mirror
// locations go to ferry.lock.mirror.yaml, and verify --lock-key and
// install --lock-key pass on the original lock and signature with no
// other flag.
func TestSignedLockAirGap(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	env := clitest.New(t)
	e2eSignKey(t, env)
	pub, err := signature.ParsePublicKey([]byte(env.ReadFile("cosign.pub")))
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+w.porter.Diamond+`
`)
	// A wrong password is bad input, and no lock is written.
	bad := *env
	bad.Vars = append(append([]string(nil), env.Vars...), signature.PasswordEnv+"=wrong")
	bad.Expect(2, []string{"lock", "--sign-key", "cosign.key"}, "wrong password")
	e2eAbsent(t, env.Path("ferry.lock"))

	env.MustRun("lock", "--sign-key", "cosign.key")
	if _, err := signature.VerifyFile(pub, env.Path("ferry.lock")); err != nil {
		t.Fatalf("ferry.lock.sig written by ferry lock --sign-key: %v", err)
	}
	signedLock, signedSig := env.ReadFile("ferry.lock"), env.ReadFile("ferry.lock.sig")

	// The archive carries the lock and its signature; the signed lock on
	// this side is not rewritten.
	env.MustRun("mirror", "--to-archive", "closure.tar")
	_, files := tarEntries(t, env.Path("closure.tar"))
	if string(files[relocate.ArchiveLockFile]) != signedLock {
		t.Fatalf("the archive's ferry.lock is not the signed lock:\n%s", files[relocate.ArchiveLockFile])
	}
	if string(files[relocate.ArchiveLockSigFile]) != signedSig {
		t.Fatalf("the archive's ferry.lock.sig = %q, want %q", files[relocate.ArchiveLockSigFile], signedSig)
	}
	if env.ReadFile("ferry.lock") != signedLock || env.ReadFile("ferry.lock.sig") != signedSig {
		t.Fatal("mirror --to-archive rewrote the signed lock or its signature")
	}

	// Mirroring the signed lock to a registry keeps it as it is too: the
	// locations go to the sidecar, which verify reads.
	direct := w.mirror.Host + "/direct"
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", direct)
	if env.ReadFile("ferry.lock") != signedLock || env.ReadFile("ferry.lock.sig") != signedSig {
		t.Fatal("mirror --lock rewrote the signed lock")
	}
	if !strings.Contains(env.ReadFile("ferry.lock.mirror.yaml"), "to: "+direct+"\n") {
		t.Fatalf("sidecar after mirror --lock:\n%s", env.ReadFile("ferry.lock.mirror.yaml"))
	}
	env.MustRun("verify", "--lock-key", "cosign.pub")

	// The other side: no source registry, no ferry.yaml.
	w.src.Stop()
	air := clitest.New(t)
	if err := os.Rename(env.Path("closure.tar"), air.Path("closure.tar")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(air.Path("cosign.pub"), []byte(env.ReadFile("cosign.pub")), 0o644); err != nil {
		t.Fatal(err)
	}
	rewriteTar(t, air.Path("closure.tar"), air.Path("edited.tar"), func(name string, b []byte) []byte {
		if name == relocate.ArchiveLockFile {
			return append(append([]byte(nil), b...), "# edited after signing\n"...)
		}
		return b
	})
	rewriteTar(t, air.Path("closure.tar"), air.Path("unsigned.tar"), func(name string, b []byte) []byte {
		if name == relocate.ArchiveLockSigFile {
			return nil
		}
		return b
	})
	// verify --archive checks the signature offline, before any import.
	air.MustRun("verify", "--archive", "closure.tar", "--lock-key", "cosign.pub")
	air.Expect(3, []string{"verify", "--archive", "edited.tar", "--lock-key", "cosign.pub"}, "does not sign the archive's lock")
	air.Expect(3, []string{"verify", "--archive", "unsigned.tar", "--lock-key", "cosign.pub"}, "carries no ferry.lock.sig")
	private := registrytest.New(t)
	to := private.Host + "/m"
	for _, tc := range []struct {
		archive, want string
	}{
		{"edited.tar", "does not sign its ferry.lock"},
		{"unsigned.tar", "carries no ferry.lock.sig"},
	} {
		t.Run(tc.archive, func(t *testing.T) {
			private.Reset()
			air.Expect(3, []string{"mirror", "--from-archive", tc.archive, "--to", to, "--lock-key", "cosign.pub"}, tc.want)
			if n := manifestPuts(private); n != 0 {
				t.Errorf("%d manifests pushed before the refusal", n)
			}
			if len(private.Requests()) != 0 {
				t.Errorf("the mirror was contacted: %+v", private.Requests())
			}
			e2eAbsent(t, air.Path("ferry.lock"))
		})
	}

	private.Reset()
	air.MustRun("mirror", "--from-archive", "closure.tar", "--to", to, "--lock-key", "cosign.pub")
	if n := manifestPuts(private); n == 0 {
		t.Fatal("the import pushed no manifest")
	}
	if air.ReadFile("ferry.lock") != signedLock || air.ReadFile("ferry.lock.sig") != signedSig {
		t.Fatal("the imported lock or its signature is not the signed one as carried")
	}
	if strings.Contains(air.ReadFile("ferry.lock"), "mirror:") {
		t.Fatal("the signed lock records mirror locations")
	}
	l, m, stale, err := lock.ReadWithMirrors(air.Path("ferry.lock"))
	if err != nil || stale != nil || m == nil {
		t.Fatalf("sidecar: %+v, stale %v, err %v", m, stale, err)
	}
	if m.To != to || len(m.Packages) != len(l.Resolved()) {
		t.Fatalf("sidecar = %+v, want every one of %d packages in %s", m, len(l.Resolved()), to)
	}
	for _, p := range m.Packages {
		if !strings.HasPrefix(p.Mirror, to+"/") {
			t.Errorf("sidecar: %s mirrored at %s", p.Source, p.Mirror)
		}
	}
	air.MustRun("verify", "--lock-key", "cosign.pub", "--deep")
	air.MustRun("install", "--lock-key", "cosign.pub", "--dest", "out")
	if _, err := os.Stat(air.Path("out/relocation-mapping.json")); err != nil {
		t.Fatal(err)
	}
	// A second import leaves the signed lock alone too.
	air.MustRun("mirror", "--from-archive", "closure.tar", "--to", to, "--lock-key", "cosign.pub")
	if air.ReadFile("ferry.lock") != signedLock {
		t.Fatal("a second import rewrote the signed lock")
	}

	// An unsigned archive imported without --lock-key never replaces the
	// signed lock (a rolled-back closure would pass for it), nor writes a
	// lock where ferry.yaml requires signed ones; nothing is pushed.
	private.Reset()
	air.Expect(3, []string{"mirror", "--from-archive", "unsigned.tar", "--to", to}, "ferry.lock is signed", "may not replace a signed one")
	if air.ReadFile("ferry.lock") != signedLock || air.ReadFile("ferry.lock.sig") != signedSig {
		t.Fatal("an unsigned import replaced the signed lock")
	}
	if n := manifestPuts(private); n != 0 {
		t.Errorf("%d manifests pushed before the refusal", n)
	}
	other := clitest.New(t)
	if err := os.WriteFile(other.Path("unsigned.tar"), []byte(air.ReadFile("unsigned.tar")), 0o644); err != nil {
		t.Fatal(err)
	}
	other.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nlock: {requireSigned: true}\n")
	other.Expect(3, []string{"mirror", "--from-archive", "unsigned.tar", "--to", to}, "requireSigned")
	e2eAbsent(t, other.Path("ferry.lock"))

	// An edited lock now makes the sidecar stale, and fails its signature.
	air.WriteFile("ferry.lock", signedLock+"# edited\n")
	air.Expect(3, []string{"verify", "--lock-key", "cosign.pub"}, "does not verify")
}

// TestInstallRequireSignedLock: install --require-signed-lock (or
// ferry.yaml lock.requireSigned) refuses a lock without a valid signature
// before writing anything.
func TestInstallRequireSignedLock(t *testing.T) {
	t.Parallel()
	_, _, _, l := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	key := e2eSignKey(t, env)
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	data, err := l.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		signed bool
		args   []string
		code   int
		want   string
	}{
		{"unsigned", false, []string{"--require-signed-lock"}, 3, "ferry.lock.sig is missing"},
		{"unsigned with key", false, []string{"--require-signed-lock", "--lock-key", "cosign.pub"}, 3, "ferry.lock.sig is missing"},
		{"signed, no key to check", true, []string{"--require-signed-lock"}, 2, "--lock-key"},
		{"signed", true, []string{"--require-signed-lock", "--lock-key", "cosign.pub"}, 0, "installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.RemoveAll(env.Path("out"))
			os.Remove(env.Path("ferry.lock.sig"))
			if tc.signed {
				if err := signature.SignFile(key, env.Path("ferry.lock"), data); err != nil {
					t.Fatal(err)
				}
			}
			env.Expect(tc.code, append([]string{"install", "--dest", "out"}, tc.args...), tc.want)
			if tc.code != 0 {
				e2eAbsent(t, env.Path("out"))
				matches, _ := filepath.Glob(env.Path(".out.ferry-stage-*"))
				if len(matches) != 0 {
					t.Errorf("staging written: %v", matches)
				}
			}
		})
	}
}

// TestInstallRequireSignedLockSetting: ferry.yaml's lock.requireSigned
// makes install refuse an unsigned lock made from it, with no flag.
func TestInstallRequireSignedLockSetting(t *testing.T) {
	t.Parallel()
	src, _, _, l := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	l.Input = "ferry.yaml"
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	yaml := `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: ` + src.Host + `/p/app:v1.0.0
`
	env.WriteFile("ferry.yaml", yaml)
	env.MustRun("install", "--dest", "out")
	os.RemoveAll(env.Path("out"))
	env.WriteFile("ferry.yaml", yaml+"lock:\n  requireSigned: true\n")
	env.Expect(3, []string{"install", "--dest", "out"}, "a signed lock is required")
	e2eAbsent(t, env.Path("out"))
}

// TestLockSignKeyCosign: ferry lock --sign-key with a key made by cosign
// generate-key-pair (in process; the real CLI in make interop) writes a ferry.lock.sig that cosign verify-blob
// accepts.
func TestLockSignKeyCosign(t *testing.T) {
	t.Parallel()
	c := cosigntest.V2(t)
	keyPath, pubPath := c.GenerateKeyPair(t)
	src, _, _, _ := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("ferry.yaml", `apiVersion: ferry.dev/v1alpha1
kind: MirrorSet
packages:
  - ref: `+src.Host+`/p/app:v1.0.0
`)
	env.MustRun("lock", "--sign-key", keyPath)
	if err := c.VerifyBlob(t, pubPath, env.Path("ferry.lock.sig"), env.Path("ferry.lock")); err != nil {
		t.Fatalf("cosign verify-blob refused the lock's signature: %v", err)
	}
	pub, err := signature.ParsePublicKey(mustRead(t, pubPath))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signature.VerifyFile(pub, env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
