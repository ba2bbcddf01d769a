package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/signature"
)

// The closure matrix of issue 28 (point 2): every package kind × every
// signature layout × every stage, one verdict per (kind, layout, stage).

// Keyless identity the virtual Sigstore certifies in the matrix.
const (
	matrixIssuer  = "https://token.actions.githubusercontent.com"
	matrixSubject = "release@acme.example"
)

// matrixLayout is one way a package carries (or does not carry) its
// signature at the source.
type matrixLayout struct {
	name string
	// registry starts a source or mirror registry and returns its host.
	registry func(t testing.TB) string
	// sign signs ref (HOST/REPO@DIGEST, manifest desc) at the source;
	// nil: the package stays unsigned.
	sign func(t *testing.T, w *matrixWorld, ref string, desc ocispec.Descriptor)
	// keyless: the rule names the virtual Sigstore's identity (and its
	// trusted root) instead of the test key.
	keyless bool
}

// matrixLayouts: cosign's classic `sha256-HEX.sig` tag (real cosign v2);
// a Sigstore bundle listed by the referrers API (real cosign v3); a
// bundle listed by the referrers tag-schema fallback index on a registry
// without the API (real cosign v2 --new-bundle-format, which lists it as
// application/vnd.oci.empty.v1+json: issue 28 observation 2; cosign v3's
// own fallback listing is a layout of TestE2ESignatureLayouts); a keyless
// Sigstore bundle (Fulcio certificate, Rekor entry, timestamp from an
// offline virtual Sigstore) attached as cosign v3 attaches it; and none.
var matrixLayouts = []matrixLayout{
	{name: "classic", registry: distributionHost, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V2(t).SignImage(t, w.key, ref)
	}},
	{name: "bundle-referrers-api", registry: registrytest.NewReferrersAPI, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V3(t).SignImage(t, w.key, ref)
	}},
	{name: "bundle-tag-schema-fallback", registry: distributionHost, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V2(t).SignImage(t, w.key, ref, "--new-bundle-format")
	}},
	{name: "keyless", registry: distributionHost, keyless: true, sign: func(t *testing.T, w *matrixWorld, ref string, desc ocispec.Descriptor) {
		w.mu.Lock()
		b, err := w.keyless.SignImage(matrixSubject, matrixIssuer, desc.Digest, cosigntest.SignPredicateType)
		w.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
		repo := registrytest.Repository(t, registrytest.Client(t), ref[:strings.Index(ref, "@")])
		if _, err := cosigntest.PushBundleReferrer(context.Background(), repo, desc, b, cosigntest.SignPredicateType); err != nil {
			t.Fatal(err)
		}
	}},
	{name: "none", registry: distributionHost},
}

// matrixKind is one package kind: push builds its fixture in a source
// registry (host) and returns the ferry.yaml section that selects it, the
// repository its root manifest is in and that manifest's descriptor. A
// kind outside any registry (KUDO repository, mixin feed) returns an
// empty repository: it cannot carry a cosign signature.
type matrixKind struct {
	name string
	push func(t *testing.T, host string) (section, repo string, root ocispec.Descriptor)
}

var matrixKinds = []matrixKind{
	{name: "porter-bundle", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/app"
		desc, err := fixture.PushBundle(context.Background(), matrixRepo(t, repo), repo, fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"}})
		if err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.0.0\n", repo, desc
	}},
	{name: "crossplane-package", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/provider-x"
		desc, err := fixture.PushXpkg(context.Background(), matrixRepo(t, repo), fixture.Xpkg{Kind: "Provider", Name: "provider-x", Tags: []string{"v1.0.0"}})
		if err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.0.0\n", repo, desc
	}},
	{name: "helm-chart-oci", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0", Templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web}\n"}}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, host+"/charts", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		repo := host + "/charts/web"
		return "charts:\n  - ref: oci://" + repo + "\n    version: 1.0.0\n", repo, matrixResolve(t, repo, "1.0.0")
	}},
	{name: "kudo-operator-repository", push: func(t *testing.T, _ string) (string, string, ocispec.Descriptor) {
		r := newKudoE2ERepo(t, []kudoE2EOperator{{name: "zk", opv: "0.1.0", templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: zk}\n"}}})
		return fmt.Sprintf("operators:\n  - package: zk\n    repo: test\nkudo:\n  repositories: {test: %q}\n", r.URL), "", ocispec.Descriptor{}
	}},
	{name: "kudo-operator-oci", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		ctx := context.Background()
		repo := host + "/kudo/zk"
		zk := kudoE2EOperator{name: "zk", app: "3.6.2", opv: "0.1.0"}
		blobs, desc, err := kudo.Artifact(kudoE2ETarball(t, zk), kudo.Config{Name: "zk", AppVersion: "3.6.2", OperatorVersion: "0.1.0"})
		if err != nil {
			t.Fatal(err)
		}
		r := matrixRepo(t, repo)
		for d, b := range blobs { // the manifest last
			if d != desc.Digest {
				if err := r.Push(ctx, ocispec.Descriptor{MediaType: "application/octet-stream", Digest: d, Size: int64(len(b))}, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := r.Push(ctx, desc, bytes.NewReader(blobs[desc.Digest])); err != nil {
			t.Fatal(err)
		}
		if err := r.Tag(ctx, desc, zk.tag()); err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":" + zk.tag() + "\n", repo, desc
	}},
	{name: "image", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/img"
		r := matrixRepo(t, repo)
		desc, err := fixture.PushImage(context.Background(), r, "matrix-image", 512)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Tag(context.Background(), desc, "1.0.0"); err != nil {
			t.Fatal(err)
		}
		return "images:\n  - ref: " + repo + ":1.0.0\n", repo, desc
	}},
	{name: "image-index", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/multi"
		r := matrixRepo(t, repo)
		desc, _, err := fixture.PushImageIndex(context.Background(), r, "matrix-index", "linux/amd64", "linux/arm64")
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Tag(context.Background(), desc, "1.0.0"); err != nil {
			t.Fatal(err)
		}
		return "images:\n  - ref: " + repo + ":1.0.0\n", repo, desc
	}},
}

// matrixRepo is the source repository name, for pushing fixtures.
func matrixRepo(t *testing.T, name string) *remote.Repository {
	t.Helper()
	return registrytest.Repository(t, registrytest.Client(t), name)
}

// matrixResolve returns the descriptor ref's tag points at.
func matrixResolve(t *testing.T, repo, tag string) ocispec.Descriptor {
	t.Helper()
	desc, err := registrytest.Repository(t, registrytest.Client(t), repo).Resolve(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

// matrixWorld is what every row shares: the test key (cosign v2's
// generate-key-pair) and the virtual Sigstore.
type matrixWorld struct {
	key, pub string
	keyless  *cosigntest.Keyless
	root     []byte
	mu       sync.Mutex
}

// matrixStage is one stage of a row, run in order on what the stages
// before it left.
type matrixStage struct {
	name string
	args func(mirror string) []string
}

// matrixStages: lock, mirror to a registry, verify, verify --deep,
// install, archive out, archive in (and verify of the imported lock),
// mirror to mirror (and verify --deep there).
var matrixStages = []matrixStage{
	{"lock", func(string) []string { return []string{"lock"} }},
	{"mirror", func(m string) []string { return []string{"mirror", "--to", m + "/m"} }},
	{"verify", func(string) []string { return []string{"verify"} }},
	{"verify --deep", func(string) []string { return []string{"verify", "--deep"} }},
	{"install", func(string) []string { return []string{"install", "--dest", "out"} }},
	{"archive out", func(string) []string { return []string{"mirror", "--to-archive", "c.tar"} }},
	{"archive in", func(m string) []string {
		return []string{"mirror", "--from-archive", "c.tar", "--lock", "a.lock", "--to", m + "/a"}
	}},
	{"verify archive import", func(string) []string { return []string{"verify", "--deep", "--lock", "a.lock"} }},
	{"mirror to mirror", func(m string) []string {
		return []string{"mirror", "--lock", "ferry.lock", "--from", m + "/m", "--to", m + "/mm"}
	}},
	{"verify mirror to mirror", func(m string) []string { return []string{"verify", "--deep", "--mirror", m + "/mm"} }},
}

// matrixVerdict is the one verdict of a (kind, layout, stage) row: the
// exit code and, for a failure, the key words of the message.
type matrixVerdict struct {
	code  int
	words []string
}

// verdict is the table: what each stage of kind × layout must answer,
// under a rule (match "") that requires a signature by the test key (or,
// keyless, the test identity). ok is false where the row does not exist:
// a KUDO operator from a repository is outside any registry and carries
// no cosign signature in any layout, so only its "none" row exists.
func verdict(kind matrixKind, l matrixLayout, stage string) (v matrixVerdict, ok bool) {
	switch {
	case kind.name == "kudo-operator-repository" && l.sign != nil:
		return v, false
	case l.sign == nil && stage == "lock":
		return matrixVerdict{3, []string{"trust", "no signature of", "(required)"}}, true
	case l.sign == nil:
		return v, false // no lock was written: the stages after lock do not run
	}
	if stage == "verify" {
		// The signature the rule verified at the source is recorded in
		// the lock and verified again in the mirror.
		return matrixVerdict{0, []string{"1 signatures"}}, true
	}
	return matrixVerdict{code: 0}, true
}

// TestE2EClosureMatrix is issue 28 point 2's table: every package kind
// (Porter bundle, Crossplane package, Helm chart in OCI, KUDO operator as
// an OCI artifact and from a repository, image, image index, and mixins
// from a feed) × every
// signature layout (classic .sig, Sigstore bundle via the referrers API,
// bundle via the referrers tag-schema fallback, keyless, none) × every
// stage (lock, mirror to a registry, verify, verify --deep, install,
// archive out and in, mirror to mirror), each (kind, layout, stage) one
// verdict: the exit code and, for failures, the key words of the message.
// The rule is `match: ""`, `required: true`, with the test key (keyless:
// the virtual Sigstore's identity and trusted root), so every signed
// layout passes every stage (observation 1 of issue 28: a bundle-only
// signature passes verify and install at the mirror; observation 2: the
// tag-schema fallback listing the empty artifactType passes lock) and
// "none" is refused at lock (exit 3), leaving no lock for later stages.
// A KUDO operator from a repository can carry no cosign signature: its
// one row is "none". Each fixture is built once per kind × layout, in its
// own registries, and its stages run in sequence; rows run in parallel.
//
// Mixins are feed binaries without cosign signatures: their row (layout
// "none", no rule applies to a feed binary) locks with --sign-key, mirrors,
// mirrors to a second mirror with the signed lock (observation 7), verifies
// and installs.
//
// The other observations of issue 28, and issue 30's cases, have named
// tests that drive every format; the table names them here rather than
// duplicate them:
//   - obs. 3, a lock written before signing: TestE2ESignatureLayouts
//     ("lock written before signing", every layout).
//   - obs. 4, an unsigned import never replaces a signed lock:
//     TestSignedLockAirGap, TestInstallRequireSignedLockSetting.
//   - obs. 5, every registry write retried, mixins included: TestFaultsAllFormats.
//   - obs. 6, the lock checked both ways: TestE2ELockCheckedBothWays,
//     TestE2ELockIncomplete, TestE2ELockEditedImage.
//   - obs. 7, mirror to mirror with a signed lock on mixins: the mixin row
//     here, and TestSignedLockMirrorToMirror.
//   - obs. 8, policy on every signed manifest: TestE2ENestedPolicy.
//   - issue 30, rollback per format (exit 3 at lock): TestE2ERollbackEveryFormat.
//   - issue 30, an older lock serial on install without --allow-downgrade
//     (exit 3): TestE2ELockFreshness.
//   - issue 30, a required attestation missing (exit 3): TestE2EAttestations.
//   - issue 30, a forged Helm .prov (exit 3): TestE2EHelmProvenance.
//   - issue 30, manifest bytes not hashing to the lock's digest (exit 3 at
//     verify): TestE2EManifestCorrupt, TestE2EManifestJudgedByBytes.
func TestE2EClosureMatrix(t *testing.T) {
	t.Parallel()
	w := &matrixWorld{}
	w.key, w.pub = cosigntest.V2(t).GenerateKeyPair(t)
	cosigntest.V3(t) // built (or found) once, before the rows
	var err error
	if w.keyless, err = cosigntest.NewKeyless(); err != nil {
		t.Fatal(err)
	}
	if w.root, err = w.keyless.TrustedRootJSON(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rows := 0
	for _, kind := range matrixKinds {
		for _, l := range matrixLayouts {
			if _, ok := verdict(kind, l, "lock"); !ok {
				continue
			}
			t.Run(kind.name+"/"+l.name, func(t *testing.T) {
				t.Parallel()
				n := testMatrixRow(t, w, kind, l)
				mu.Lock()
				rows += n
				mu.Unlock()
			})
		}
	}
	t.Run("mixin/none", func(t *testing.T) {
		t.Parallel()
		n := testMatrixMixin(t, w)
		mu.Lock()
		rows += n
		mu.Unlock()
	})
	t.Cleanup(func() { t.Logf("%d (kind, layout, stage) rows", rows) })
}

// matrixRead returns the text of the file at path.
func matrixRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// matrixTrust is the ferry.yaml trust section of layout l.
func matrixTrust(l matrixLayout) string {
	if l.keyless {
		return fmt.Sprintf("trust:\n  trustedRoot: trusted_root.json\n  rules:\n    - match: \"\"\n      keyless:\n        - issuer: %s\n          subject: %s\n      required: true\n", matrixIssuer, matrixSubject)
	}
	return "trust:\n  rules:\n    - match: \"\"\n      keys: [test.pub]\n      required: true\n"
}

// testMatrixRow builds kind's fixture signed in layout l and runs every
// stage, asserting its verdict; it returns the number of rows asserted.
func testMatrixRow(t *testing.T, w *matrixWorld, kind matrixKind, l matrixLayout) int {
	src, mirror := l.registry(t), l.registry(t)
	section, repo, root := kind.push(t, src)
	if l.sign != nil && repo != "" {
		l.sign(t, w, repo+"@"+root.Digest.String(), root)
	}
	env := e2eEnv(t)
	env.Vars = append(env.Vars, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("test.pub", matrixRead(t, w.pub))
	env.WriteFile("trusted_root.json", string(w.root))
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+section+matrixTrust(l))
	n := 0
	for _, st := range matrixStages {
		v, ok := verdict(kind, l, st.name)
		if !ok {
			continue
		}
		t.Logf("stage %s: want exit %d %q", st.name, v.code, v.words)
		env.Expect(v.code, st.args(mirror), v.words...)
		n++
	}
	return n
}

// testMatrixMixin is the mixin row: a feed binary, no signature (layout
// "none"), locked into a signed lock and carried through every stage.
func testMatrixMixin(t *testing.T, w *matrixWorld) int {
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	mirror := distributionHost(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+fs.URL, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("test.pub", matrixRead(t, w.pub))
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmixins:\n  - name: exec\n    version: 1.x\n    feed: "+fs.URL+"\n"+matrixTrust(matrixLayout{}))
	stages := []struct {
		name string
		args []string
	}{
		{"lock", []string{"lock", "--sign-key", w.key}},
		{"mirror", []string{"mirror", "--to", mirror + "/m"}},
		{"verify", []string{"verify", "--lock-key", "test.pub"}},
		{"verify --deep", []string{"verify", "--deep", "--lock-key", "test.pub"}},
		{"install", []string{"install", "--dest", "out", "--porter-home", "home", "--lock-key", "test.pub"}},
		{"archive out", []string{"mirror", "--to-archive", "c.tar"}},
		{"archive in", []string{"mirror", "--from-archive", "c.tar", "--lock", "a.lock", "--lock-key", "test.pub", "--to", mirror + "/a"}},
		{"verify archive import", []string{"verify", "--deep", "--lock", "a.lock", "--lock-key", "test.pub"}},
		{"mirror to mirror", []string{"mirror", "--lock", "ferry.lock", "--from", mirror + "/m", "--to", mirror + "/mm"}},
		{"verify mirror to mirror", []string{"verify", "--deep", "--lock-key", "test.pub", "--mirror", mirror + "/mm"}},
	}
	for _, st := range stages {
		t.Logf("stage %s: want exit 0", st.name)
		env.Expect(0, st.args)
	}
	return len(stages)
}
