package main

import (
	"encoding/json"
	"encoding/pem"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/verify"
)

// e2eSigner returns a fresh cosign key pair with its public key written
// to env as name.
func e2eSigner(t *testing.T, env *clitest.Env, name string) *fixture.Cosign {
	t.Helper()
	s, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WritePublicKey(env.Path(name)); err != nil {
		t.Fatal(err)
	}
	return s
}

// e2eProblems runs ferry verify -o json with args, expecting exit 3, and
// returns the problems.
func e2eProblems(t *testing.T, env *clitest.Env, args ...string) []verify.Problem {
	t.Helper()
	r := env.Expect(3, append([]string{"verify", "-o", "json"}, args...))
	var rep verify.Report
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	return rep.Problems
}

// TestE2EVerifyPackageSignatures: ferry verify --key requires a cosign
// signature of every locked package in the mirror. Packages are signed in
// their source repositories and mirrored, so each signature's
// docker-reference names the source, not the mirror.
func TestE2EVerifyPackageSignatures(t *testing.T) {
	t.Parallel()
	src, mirror, c, l := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	signer := e2eSigner(t, env, "cosign.pub")
	e2eSigner(t, env, "other.pub")
	app, db := l.Package(src.Host+"/p/app"), l.Package(src.Host+"/p/db")
	sigRef := func(p string) string {
		pkg := l.Package(src.Host + p)
		return pkg.Mirror + ":sha256-" + digest.Digest(pkg.Digest).Encoded() + ".sig"
	}

	// Without --key, signatures are not looked at.
	env.Expect(0, []string{"verify"})

	// Nothing signed yet: both packages are listed, by source and by the
	// mirror reference that is missing.
	env.Expect(3, []string{"verify", "--key", "cosign.pub"},
		app.Source+": signature: "+sigRef("/p/app")+": no cosign signature of "+app.Digest,
		db.Source+": signature: "+sigRef("/p/db"), "2 problems")

	// app signed: db alone is listed.
	pipelinetest.SignAndMirror(t, c, l, mirror, signer, app.Source)
	ps := e2eProblems(t, env, "--key", "cosign.pub")
	if len(ps) != 1 || ps[0].Package != db.Source || ps[0].Kind != verify.ProblemSignature || ps[0].Ref != sigRef("/p/db") {
		t.Fatalf("problems = %+v", ps)
	}

	// Every package signed, the source registry gone: the mirror alone
	// proves it.
	pipelinetest.SignAndMirror(t, c, l, mirror, signer, db.Source)
	src.Stop()
	r := env.Expect(0, []string{"verify", "--key", "cosign.pub"}, "2 signatures")
	env.Expect(0, []string{"verify", "--key", "cosign.pub", "--mirror", mirror.Host + "/m"}, "2 signatures")
	// stdout holds the result alone: no problem listed.
	if lines := strings.Split(strings.TrimSpace(r.Stdout), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "verified ") {
		t.Errorf("stdout: %s", r.Stdout)
	}
	var rep verifyJSON
	if err := json.Unmarshal([]byte(env.MustRun("verify", "--key", "cosign.pub", "-o", "json").Stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Counts.Signatures != 2 {
		t.Errorf("report = %+v", rep)
	}

	// Another key: every signature is wrong.
	ps = e2eProblems(t, env, "--key", "other.pub")
	if len(ps) != 2 {
		t.Fatalf("problems = %+v", ps)
	}
	for _, p := range ps {
		if p.Kind != verify.ProblemSignature || !strings.Contains(p.Detail, "does not verify with the ECDSA P-256 key other.pub") {
			t.Errorf("problem = %+v", p)
		}
	}

	// A bad key file is bad input (2), before the mirror is read.
	env.WriteFile("garbage.pub", "not a key\n")
	env.WriteFile("cosign.key", string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED SIGSTORE PRIVATE KEY", Bytes: []byte("{}")})))
	for _, tc := range []struct {
		file, want string
	}{
		{"missing.pub", "missing.pub"},
		{"garbage.pub", "not a PEM public key"},
		{"cosign.key", "is a private key"},
	} {
		env.Expect(2, []string{"verify", "--key", tc.file}, tc.want)
		env.Expect(2, []string{"verify", "--lock-key", tc.file}, tc.want)
		env.Expect(2, []string{"install", "--dest", "out", "--lock-key", tc.file}, tc.want)
	}
	e2eAbsent(t, env.Path("out"))
}

// TestE2ELockSignature: --lock-key requires LOCK.sig, as cosign sign-blob
// writes it, over the lock's exact bytes; verify lists a bad one, install
// refuses it and leaves its destination as it was.
func TestE2ELockSignature(t *testing.T) {
	t.Parallel()
	_, _, _, l := pipelinetest.MirroredLock(t)
	env := clitest.New(t)
	if err := l.Write(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	good := env.ReadFile("ferry.lock")
	signer := e2eSigner(t, env, "cosign.pub")
	e2eSigner(t, env, "other.pub")

	// Unsigned.
	env.Expect(3, []string{"verify", "--lock-key", "cosign.pub"}, "(lock): signature: ferry.lock.sig: ferry.lock.sig is missing", "1 problems")
	env.Expect(3, []string{"install", "--dest", "out", "--lock-key", "cosign.pub"}, "refusing to install", "ferry.lock.sig is missing")
	e2eAbsent(t, env.Path("out"))

	// Signed: verify and install accept it.
	if err := signer.SignFile(env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	env.Expect(0, []string{"verify", "--lock-key", "cosign.pub"}, "1 signatures")
	env.MustRun("install", "--dest", "prev", "--lock-key", "cosign.pub")
	prev := e2eSnapshot(t, env.Path("prev"))

	// The signature of another key.
	ps := e2eProblems(t, env, "--lock-key", "other.pub")
	if len(ps) != 1 || ps[0].Package != "(lock)" || ps[0].Kind != verify.ProblemSignature || ps[0].Ref != "ferry.lock.sig" {
		t.Fatalf("problems = %+v", ps)
	}

	// --lock F reads F.sig.
	env.WriteFile("other.lock", good)
	env.Expect(3, []string{"verify", "--lock", "other.lock", "--lock-key", "cosign.pub"}, "other.lock.sig is missing")
	if err := signer.SignFile(env.Path("other.lock")); err != nil {
		t.Fatal(err)
	}
	env.Expect(0, []string{"verify", "--lock", "other.lock", "--lock-key", "cosign.pub"})

	for _, tc := range []struct {
		name, content string
	}{
		{"a comment added", good + "# edited\n"},
		{"a digest changed", strings.Replace(good, l.Packages[0].Digest, digest.FromString("other").String(), 1)},
		{"no longer a lock", "garbage: [\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.WriteFile("ferry.lock", tc.content)
			defer env.WriteFile("ferry.lock", good)
			env.Expect(3, []string{"verify", "--lock-key", "cosign.pub"}, "(lock): signature: ferry.lock.sig: ferry.lock.sig does not sign ferry.lock")
			env.Expect(3, []string{"install", "--dest", "prev", "--lock-key", "cosign.pub"}, "refusing to install: ferry.lock.sig does not sign ferry.lock")
			env.Expect(3, []string{"install", "--dest", "fresh", "--lock-key", "cosign.pub"}, "refusing to install")
			e2eAbsent(t, env.Path("fresh"))
			if got := e2eSnapshot(t, env.Path("prev")); !maps.Equal(got, prev) {
				t.Errorf("a refused install changed the earlier install")
			}
			entries, err := os.ReadDir(env.Dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("temporary directory left behind: %s", e.Name())
				}
			}
		})
	}
}
