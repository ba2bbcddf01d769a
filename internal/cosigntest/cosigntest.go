// Package cosigntest runs the real cosign CLIs in tests: cosign v2 and
// cosign v3, built from their Go modules by scripts/tools.sh into bin/tools
// (cosign-v2, cosign-v3) the first time a test needs them. A build that
// fails fails the test with the build's output; nothing is skipped.
package cosigntest

import (
	"bytes"
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
// them so a stale tool in bin/tools is not used by mistake.
const (
	V2Version = "v2.6.5"
	V3Version = "v3.1.3"
)

// Password is the password GenerateKeyPair encrypts private keys with and
// Sign passes in COSIGN_PASSWORD.
const Password = "ferry-test"

var (
	mu     sync.Mutex
	built  = map[string]string{}
	failed = map[string]error{}
)

// V2 returns the path of cosign v2, building it if needed.
func V2(t testing.TB) *Cosign { t.Helper(); return tool(t, "cosign-v2", V2Version) }

// V3 returns the path of cosign v3, building it if needed.
func V3(t testing.TB) *Cosign { t.Helper(); return tool(t, "cosign-v3", V3Version) }

// Cosign is one cosign binary.
type Cosign struct {
	// Path is the binary.
	Path string
	// Version is its release, V2Version or V3Version.
	Version string
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
	c.Run(t, dir, "generate-key-pair")
	return filepath.Join(dir, "cosign.key"), filepath.Join(dir, "cosign.pub")
}

// SignImage signs ref (HOST/REPO@sha256:...) on a loopback registry with
// key, offline: no transparency-log upload, plain HTTP allowed. extra flags
// are appended (cosign v3: --new-bundle-format=false for the classic
// layout).
func (c *Cosign) SignImage(t testing.TB, key, ref string, extra ...string) {
	t.Helper()
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
	dir := t.TempDir()
	root := filepath.Join(dir, "trusted_root.json")
	if err := os.WriteFile(root, []byte(emptyTrustedRoot), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify-attestation", "--key", pub, "--type", typ, "--insecure-ignore-tlog=true", "--allow-insecure-registry", "--allow-http-registry", "--trusted-root", root, ref}
	_, err := c.TryRun(t, dir, args...)
	return err
}
