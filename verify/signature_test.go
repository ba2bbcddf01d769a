package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/verify"
)

func cosignSigner(t *testing.T) (*fixture.Cosign, *signature.PublicKey) {
	t.Helper()
	s, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := s.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	k, err := signature.ParsePublicKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	return s, k
}

// TestVerifyPackageSignatures signs packages in their source repositories,
// mirrors them (the signatures travel, naming the source repository) and
// verifies the mirror with the key.
func TestVerifyPackageSignatures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// sign signs in the source registry before mirroring again.
		sign func(t *testing.T, s, other *fixture.Cosign, env *signEnv)
		// bad is the package expected to have a signature problem.
		bad    string
		detail string
	}{
		{
			name: "every package signed",
			sign: func(t *testing.T, s, _ *fixture.Cosign, e *signEnv) { e.signAll(t, s) },
		},
		{
			name:   "db unsigned",
			sign:   func(t *testing.T, s, _ *fixture.Cosign, e *signEnv) { e.signAll(t, s, "/p/app") },
			bad:    "/p/db",
			detail: "no cosign signature of sha256:",
		},
		{
			name: "db signed by another key",
			sign: func(t *testing.T, s, other *fixture.Cosign, e *signEnv) {
				e.signAll(t, s, "/p/app")
				e.signAll(t, other, "/p/db")
			},
			bad:    "/p/db",
			detail: "signature does not verify with the ECDSA P-256 key",
		},
		{
			name: "db's signature manifest carries app's signed payload",
			sign: func(t *testing.T, s, _ *fixture.Cosign, e *signEnv) {
				e.signAll(t, s, "/p/app")
				// A valid signature moved from one package to another:
				// the key verifies it, the digest it names is wrong.
				app, db := e.l.Package(e.src+"/p/app"), e.l.Package(e.src+"/p/db")
				payload, err := fixture.CosignPayload(app.Source, digest.Digest(app.Digest))
				if err != nil {
					t.Fatal(err)
				}
				repo, err := e.c.Repository(db.Mirror)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.SignImagePayload(ctx, repo, digest.Digest(db.Digest), payload); err != nil {
					t.Fatal(err)
				}
			},
			bad:    "/p/db",
			detail: "it signs " + "APP",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, mirror, c, l := pipelinetest.MirroredLock(t)
			e := &signEnv{src: src.Host, c: c, l: l, mirror: mirror}
			s, k := cosignSigner(t)
			other, _ := cosignSigner(t)
			tc.sign(t, s, other, e)
			// Verify reads the mirror only.
			src.Stop()
			rep, err := verify.Verify(ctx, l, verify.Options{Registry: c, Key: k})
			if err != nil {
				t.Fatal(err)
			}
			if tc.bad == "" {
				if !rep.OK() || rep.Signatures != 2 {
					t.Fatalf("report = %+v", rep)
				}
				return
			}
			bad := l.Package(src.Host + tc.bad)
			if len(rep.Problems) != 1 {
				t.Fatalf("problems = %+v", rep.Problems)
			}
			p := rep.Problems[0]
			wantRef := bad.Mirror + ":sha256-" + digest.Digest(bad.Digest).Encoded() + ".sig"
			detail := strings.ReplaceAll(tc.detail, "APP", l.Package(src.Host+"/p/app").Digest)
			if p.Package != bad.Source || p.Kind != verify.ProblemSignature || p.Ref != wantRef || !strings.Contains(p.Detail, detail) {
				t.Errorf("problem = %+v\nwant package %s, ref %s, detail containing %q", p, bad.Source, wantRef, detail)
			}
			if rep.Signatures != 1 {
				t.Errorf("signatures verified = %d, want 1", rep.Signatures)
			}
		})
	}
}

// signEnv is a mirrored lock whose packages a test case signs.
type signEnv struct {
	src    string
	c      *client.Client
	l      *lock.Lock
	mirror *registrytest.Registry
}

// signAll signs the packages at the source paths given (every package when
// none is) and mirrors again.
func (e *signEnv) signAll(t *testing.T, s *fixture.Cosign, paths ...string) {
	t.Helper()
	var sources []string
	for _, p := range paths {
		sources = append(sources, e.src+p)
	}
	pipelinetest.SignAndMirror(t, e.c, e.l, e.mirror, s, sources...)
}

func TestVerifyLockSignature(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	s, k := cosignSigner(t)
	_, otherKey := cosignSigner(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.lock")
	if err := l.Write(path); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		// prepare writes the lock file and its signature.
		prepare func(t *testing.T)
		key     *signature.PublicKey
		detail  string
	}{
		{name: "signed", prepare: func(t *testing.T) { sign(t, s, path, good) }, key: k},
		{name: "no LOCK.sig", prepare: func(t *testing.T) { write(t, path, good); os.Remove(path + ".sig") }, key: k, detail: "ferry.lock.sig is missing"},
		{name: "another key", prepare: func(t *testing.T) { sign(t, s, path, good) }, key: otherKey, detail: "does not sign"},
		{
			name: "edited after signing",
			prepare: func(t *testing.T) {
				sign(t, s, path, good)
				write(t, path, append(append([]byte{}, good...), "# edited\n"...))
			},
			key:    k,
			detail: "does not sign",
		},
		{
			name: "a signed lock that is not the one verified",
			prepare: func(t *testing.T) {
				other := *l
				other.Inputs = "sha256:other"
				b, err := other.Marshal()
				if err != nil {
					t.Fatal(err)
				}
				sign(t, s, path, b)
			},
			key:    k,
			detail: "changed while it was being verified",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare(t)
			rep, err := verify.Verify(ctx, l, verify.Options{Registry: c, LockKey: tc.key, LockFile: path})
			if err != nil {
				t.Fatal(err)
			}
			if tc.detail == "" {
				if !rep.OK() || rep.Signatures != 1 {
					t.Fatalf("report = %+v", rep)
				}
				return
			}
			if len(rep.Problems) != 1 {
				t.Fatalf("problems = %+v", rep.Problems)
			}
			p := rep.Problems[0]
			if p.Package != "(lock)" || p.Kind != verify.ProblemSignature || p.Ref != path+".sig" || !strings.Contains(p.Detail, tc.detail) {
				t.Errorf("problem = %+v, want detail %q", p, tc.detail)
			}
			b, _ := json.Marshal(rep)
			if !strings.Contains(string(b), `"problem":"signature"`) {
				t.Errorf("JSON lacks the signature problem: %s", b)
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sign writes b to path and path.sig as cosign sign-blob does.
func sign(t *testing.T, s *fixture.Cosign, path string, b []byte) {
	t.Helper()
	write(t, path, b)
	if err := s.SignFile(path); err != nil {
		t.Fatal(err)
	}
}
