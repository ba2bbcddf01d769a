// Package cosigntest gives tests cosign v2 and cosign v3: what their
// `generate-key-pair`, `sign`, `attest`, `verify`, `verify-attestation`,
// `sign-blob` and `verify-blob` write and accept, with a key, offline.
//
// Two backends stand behind the same API. By default (`make test`) an
// in-process cosign built from cosign v3's own Go packages (inproc.go),
// which writes what the CLIs write and verifies as they verify, calling
// the functions they call; nothing is built. With FERRY_INTEROP=1 in the
// environment (`make interop`), the real CLIs: cosign v2 and cosign v3,
// built from their Go modules by scripts/tools.sh into bin/tools
// (cosign-v2, cosign-v3) the first time a test needs them; a build that
// fails fails the test, nothing is skipped. bin/tools is never used
// without FERRY_INTEROP=1, so results do not depend on what a machine
// happens to hold there.
package cosigntest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ferryhq/ferry/internal/tooltest"
)

// Versions scripts/tools.sh builds; Cosign checks `cosign version` against
// them so a stale tool in bin/tools is not used by mistake. The in-process
// backend is built from cosign V3Version's packages.
const (
	V2Version = "v2.6.5"
	V3Version = "v3.1.3"
)

// Password is the password GenerateKeyPair encrypts private keys with and
// Sign passes in COSIGN_PASSWORD.
const Password = "ferry-test"

// InteropEnv is the environment variable that selects the real CLIs
// (FERRY_INTEROP=1, as `make interop` sets it).
const InteropEnv = tooltest.InteropEnv

// Interop reports whether the real CLIs are used (FERRY_INTEROP=1).
func Interop() bool { return tooltest.Interop() }

var (
	mu     sync.Mutex
	built  = map[string]string{}
	failed = map[string]error{}
)

// V2 returns cosign v2: with FERRY_INTEROP=1 the real CLI, built if
// needed; else the in-process cosign with cosign v2's defaults (the
// classic layouts; --new-bundle-format for bundles).
func V2(t testing.TB) *Cosign {
	t.Helper()
	if !Interop() {
		return &Cosign{Version: V2Version}
	}
	return tool(t, "cosign-v2", V2Version)
}

// V3 returns cosign v3: with FERRY_INTEROP=1 the real CLI, built if
// needed; else the in-process cosign with cosign v3's defaults (Sigstore
// bundles as referrers; --new-bundle-format=false for the classic layouts).
func V3(t testing.TB) *Cosign {
	t.Helper()
	if !Interop() {
		return &Cosign{Version: V3Version}
	}
	return tool(t, "cosign-v3", V3Version)
}

// Cosign is one cosign: a binary, or the in-process cosign (Path empty).
type Cosign struct {
	// Path is the binary; empty for the in-process cosign.
	Path string
	// Version is its release, V2Version or V3Version.
	Version string
}

// InProcess reports whether c is the in-process cosign.
func (c *Cosign) InProcess() bool { return c.Path == "" }

// newBundle is whether sign and attest write a Sigstore bundle: cosign
// v3's default, cosign v2's with --new-bundle-format; extra are the flags a
// test passes, of which only these are known to the in-process cosign.
func (c *Cosign) newBundle(t testing.TB, extra []string) bool {
	t.Helper()
	bundle := strings.HasPrefix(c.Version, "v3")
	for _, f := range extra {
		switch f {
		case "--new-bundle-format", "--new-bundle-format=true":
			bundle = true
		case "--new-bundle-format=false":
			bundle = false
		case "--use-signing-config=false":
		default:
			t.Fatalf("cosigntest: the in-process cosign does not know the flag %s (run with %s=1 for the real CLI)", f, InteropEnv)
		}
	}
	return bundle
}

func tool(t testing.TB, name, version string) *Cosign {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[name]; ok {
		return &Cosign{Path: p, Version: version}
	}
	if err, ok := failed[name]; ok {
		t.Fatalf("cosigntest: %v", err)
	}
	p, err := tooltest.Build(name, version, "version")
	if err != nil {
		failed[name] = err
		t.Fatalf("cosigntest: %v", err)
	}
	built[name] = p
	return &Cosign{Path: p, Version: version}
}

// Run runs cosign with args in dir, with a HOME, TUF root and docker config
// of the test's own (so no credential or cache of the machine is used and
// nothing outside the test's temporary directories is written), and
// COSIGN_PASSWORD set to Password. A failure fails the test with cosign's
// output; Run returns the standard output.
//
// Run needs the real CLI: the in-process cosign fails the test.
func (c *Cosign) Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := c.TryRun(t, dir, args...)
	if err != nil {
		t.Fatalf("cosign %s %s: %v", c.Version, strings.Join(args, " "), err)
	}
	return out
}

// TryRun is Run returning the failure instead of failing the test.
func (c *Cosign) TryRun(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	if c.InProcess() {
		t.Fatalf("cosigntest: cosign %s needs the real CLI (%s=1, make interop)", strings.Join(args, " "), InteropEnv)
	}
	home := t.TempDir()
	cmd := exec.Command(c.Path, args...)
	cmd.Dir = dir
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"TUF_ROOT=" + filepath.Join(home, ".sigstore"),
		"DOCKER_CONFIG=" + filepath.Join(home, ".docker"),
		"COSIGN_PASSWORD=" + Password,
		"COSIGN_YES=true",
		"COSIGN_EXPERIMENTAL=0",
		"SIGSTORE_NO_CACHE=true",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// GenerateKeyPair runs `cosign generate-key-pair` in a new directory and
// returns the paths of cosign.key and cosign.pub.
func (c *Cosign) GenerateKeyPair(t testing.TB) (key, pub string) {
	t.Helper()
	dir := t.TempDir()
	if c.InProcess() {
		key, pub, err := generateKeyPair(dir)
		if err != nil {
			t.Fatalf("cosign %s (in process): %v", c.Version, err)
		}
		return key, pub
	}
	c.Run(t, dir, "generate-key-pair")
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
}

// SignImage signs ref (HOST/REPO@sha256:...) on a loopback registry with
// key, offline: no transparency-log upload, plain HTTP allowed. extra flags
// are appended (cosign v3: --new-bundle-format=false for the classic
// layout).
func (c *Cosign) SignImage(t testing.TB, key, ref string, extra ...string) {
	t.Helper()
	if c.InProcess() {
		bundle := c.newBundle(t, extra)
		ctx := context.Background()
		if err := c.inProcessSign(ctx, key, ref, bundle); err != nil {
			t.Fatalf("cosign %s sign %s (in process): %v", c.Version, ref, err)
		}
		return
	}
	args := []string{"sign", "--key", key, "--tlog-upload=false", "--allow-insecure-registry", "--allow-http-registry", "--yes"}
	if strings.HasPrefix(c.Version, "v3") {
		args = append(args, "--use-signing-config=false")
	}
	args = append(args, extra...)
	args = append(args, ref)
	c.Run(t, t.TempDir(), args...)
}

// VerifyImage runs `cosign verify --key pub` on ref (HOST/REPO@sha256:...)
// on a loopback registry, offline (no transparency-log lookup), and returns
// its failure: the oracle of every signature layout cosign writes, which it
// finds itself (the classic .sig tag, Sigstore bundles in referrers).
//
// A Sigstore bundle is verified against a trusted root, which cosign would
// otherwise fetch from the Sigstore TUF repository: an empty one is given
// (no CA, log or TSA), enough for a key and an ignored transparency log.
func (c *Cosign) VerifyImage(t testing.TB, pub, ref string) error {
	t.Helper()
	if c.InProcess() {
		return verifyImage(context.Background(), pub, ref)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(root, []byte(emptyTrustedRoot), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--key", pub, "--insecure-ignore-tlog=true", "--allow-insecure-registry", "--allow-http-registry", "--trusted-root", root, ref}
	_, err := c.TryRun(t, dir, args...)
	return err
}

// emptyTrustedRoot is a Sigstore trusted root that trusts nothing
// (protobuf-specs TrustedRoot, media type version 0.1).
const emptyTrustedRoot = `{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}`

// AttestImage runs `cosign attest` on ref (HOST/REPO@sha256:...) on a
// loopback registry with key, offline (no transparency-log upload, plain
// HTTP allowed): predicate is the predicate file, typ cosign's --type (a
// name such as slsaprovenance1 or a URI). extra flags are appended
// (cosign v3: --new-bundle-format=false for the classic .att layout).
func (c *Cosign) AttestImage(t testing.TB, key, ref, predicate, typ string, extra ...string) {
	t.Helper()
	if c.InProcess() {
		ctx := context.Background()
		bundle := c.newBundle(t, extra)
		attest := func() error { return attestImage(ctx, key, ref, predicate, typ, bundle) }
		var err error
		if bundle {
			err = c.listLikeCLI(ctx, ref, attest)
		} else {
			err = attest()
		}
		if err != nil {
			t.Fatalf("cosign %s attest %s (in process): %v", c.Version, ref, err)
		}
		return
	}
	args := []string{"attest", "--key", key, "--predicate", predicate, "--type", typ, "--tlog-upload=false", "--allow-insecure-registry", "--allow-http-registry", "--yes"}
	if strings.HasPrefix(c.Version, "v3") {
		args = append(args, "--use-signing-config=false")
	}
	args = append(args, extra...)
	args = append(args, ref)
	c.Run(t, t.TempDir(), args...)
}

// VerifyAttestation runs `cosign verify-attestation --key pub --type typ`
// on ref, offline, and returns its failure: the oracle of what ferry's
// attestation check accepts.
func (c *Cosign) VerifyAttestation(t testing.TB, pub, ref, typ string) error {
	t.Helper()
	if c.InProcess() {
		return verifyAttestation(context.Background(), pub, ref, typ)
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(root, []byte(emptyTrustedRoot), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify-attestation", "--key", pub, "--type", typ, "--insecure-ignore-tlog=true", "--allow-insecure-registry", "--allow-http-registry", "--trusted-root", root, ref}
	_, err := c.TryRun(t, dir, args...)
	return err
}

// SignBlob runs `cosign sign-blob --key key --tlog-upload=false
// --output-signature sig blob` (cosign v3: with --new-bundle-format=false
// --use-signing-config=false, for the same base64 signature file).
func (c *Cosign) SignBlob(t testing.TB, key, blob, sig string) {
	t.Helper()
	if c.InProcess() {
		if err := signBlob(context.Background(), key, blob, sig); err != nil {
			t.Fatalf("cosign %s sign-blob %s (in process): %v", c.Version, blob, err)
		}
		return
	}
	args := []string{"sign-blob", "--key", key, "--tlog-upload=false", "--yes", "--output-signature", sig}
	if strings.HasPrefix(c.Version, "v3") {
		args = append(args, "--new-bundle-format=false", "--use-signing-config=false")
	}
	c.Run(t, filepath.Dir(blob), append(args, blob)...)
}

// VerifyBlob runs `cosign verify-blob --insecure-ignore-tlog=true --key pub
// --signature sig blob` and returns its failure.
func (c *Cosign) VerifyBlob(t testing.TB, pub, sig, blob string) error {
	t.Helper()
	if c.InProcess() {
		return verifyBlob(context.Background(), pub, sig, blob)
	}
	_, err := c.TryRun(t, filepath.Dir(blob), "verify-blob", "--insecure-ignore-tlog=true", "--key", pub, "--signature", sig, blob)
	return err
}

// inProcessSign is signImage; a bundle is then listed in the referrers
// tag-schema fallback index as the CLI lists it (listLikeCLI).
func (c *Cosign) inProcessSign(ctx context.Context, key, ref string, bundle bool) error {
	if !bundle {
		return signImage(ctx, key, ref, false)
	}
	return c.listLikeCLI(ctx, ref, func() error { return signImage(ctx, key, ref, true) })
}

// listLikeCLI runs write, which attaches a bundle to ref, then lists it in
// the referrers tag-schema fallback index as this version's CLI does.
func (c *Cosign) listLikeCLI(ctx context.Context, ref string, write func() error) error {
	d, err := parseDigest(ref)
	if err != nil {
		return err
	}
	before := fallbackDigests(ctx, d)
	if err := write(); err != nil {
		return err
	}
	return listLikeCLI(ctx, d, before, strings.HasPrefix(c.Version, "v2"))
}
