package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/lock"
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
	// registry starts a source or mirror registry and returns its host
	// and, for distribution, the registry (whose storage a row corrupts).
	registry func(t testing.TB) (string, *registrytest.Registry)
	// sign signs ref (HOST/REPO@DIGEST, manifest desc) at the source;
	// nil: the package stays unsigned.
	sign func(t *testing.T, w *matrixWorld, ref string, desc ocispec.Descriptor)
	// keyless: the rule names the virtual Sigstore's identity (and its
	// trusted root) instead of the test key.
	keyless bool
}

// matrixLayouts (cosign by internal/cosigntest: in process, the real CLIs
// in make interop): cosign's classic `sha256-HEX.sig` tag (cosign v2);
// a Sigstore bundle listed by the referrers API (cosign v3); a
// bundle listed by the referrers tag-schema fallback index on a registry
// without the API (cosign v2 --new-bundle-format, which lists it as
// application/vnd.oci.empty.v1+json: issue 28 observation 2; cosign v3's
// own fallback listing is a layout of TestE2ESignatureLayouts); a keyless
// Sigstore bundle (Fulcio certificate, Rekor entry, timestamp from an
// offline virtual Sigstore) attached as cosign v3 attaches it; and none.
var matrixLayouts = []matrixLayout{
	{name: "classic", registry: matrixDistribution, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V2(t).SignImage(t, w.key, ref)
	}},
	{name: "bundle-referrers-api", registry: matrixReferrersAPI, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V3(t).SignImage(t, w.key, ref)
	}},
	{name: "bundle-tag-schema-fallback", registry: matrixDistribution, sign: func(t *testing.T, w *matrixWorld, ref string, _ ocispec.Descriptor) {
		cosigntest.V2(t).SignImage(t, w.key, ref, "--new-bundle-format")
	}},
	{name: "keyless", registry: matrixDistribution, keyless: true, sign: func(t *testing.T, w *matrixWorld, ref string, desc ocispec.Descriptor) {
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
	{name: "none", registry: matrixDistribution},
}

func matrixDistribution(t testing.TB) (string, *registrytest.Registry) {
	r := registrytest.New(t)
	return r.Host, r
}

func matrixReferrersAPI(t testing.TB) (string, *registrytest.Registry) {
	return registrytest.NewReferrersAPI(t), nil
}

// matrixKind is one package kind: push builds its fixture in a source
// registry (host) and returns the ferry.yaml section that selects it, the
// repository its root manifest is in and that manifest's descriptor. A
// kind outside any registry (KUDO repository, mixin feed) returns an
// empty repository: it cannot carry a cosign signature.
//
// rollback (issue 30) pushes, in a repository of its own, a release
// tagged with its own version and with a higher one, and returns the
// ferry.yaml section that selects the higher tag (or a range reaching it)
// and the key words of the refusal naming both.
type matrixKind struct {
	name     string
	push     func(t *testing.T, host string) (section, repo string, root ocispec.Descriptor)
	rollback func(t *testing.T, host string) (section string, words []string)
}

var matrixKinds = []matrixKind{
	{name: "porter-bundle", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/app"
		desc, err := fixture.PushBundle(context.Background(), matrixRepo(t, repo), repo, fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"}})
		if err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.0.0\n", repo, desc
	}, rollback: func(t *testing.T, host string) (string, []string) {
		repo := host + "/rollback/app"
		if _, err := fixture.PushBundle(context.Background(), matrixRepo(t, repo), repo, fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0", "v1.1.0"}}); err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.1.0\n", []string{repo + ":v1.1.0", "names version 1.1.0", "declares version 1.0.0"}
	}},
	{name: "crossplane-package", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/acme/provider-x"
		desc, err := fixture.PushXpkg(context.Background(), matrixRepo(t, repo), fixture.Xpkg{Kind: "Provider", Name: "provider-x", Tags: []string{"v1.0.0"}})
		if err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.0.0\n", repo, desc
	}, rollback: func(t *testing.T, host string) (string, []string) {
		repo := host + "/rollback/provider-x"
		if _, err := fixture.PushXpkg(context.Background(), matrixRepo(t, repo), fixture.Xpkg{Kind: "Provider", Name: "provider-x", Tags: []string{"v1.0.0", "v1.1.0"}}); err != nil {
			t.Fatal(err)
		}
		return "packages:\n  - ref: " + repo + ":v1.1.0\n", []string{repo + ":v1.1.0", "older release than v1.0.0", "it is the digest tagged v1.0.0"}
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
	}, rollback: func(t *testing.T, host string) (string, []string) {
		tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0"}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := charttest.PushChart(tgz, host+"/rollback", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		repo := host + "/rollback/web"
		if err := matrixRepo(t, repo).Tag(context.Background(), matrixResolve(t, repo, "1.0.0"), "1.1.0"); err != nil {
			t.Fatal(err)
		}
		return "charts:\n  - ref: oci://" + repo + "\n    version: 1.1.0\n", []string{"names version 1.1.0", "declares version 1.0.0"}
	}},
	{name: "kudo-operator-repository", push: func(t *testing.T, _ string) (string, string, ocispec.Descriptor) {
		r := newKudoE2ERepo(t, []kudoE2EOperator{{name: "zk", opv: "0.1.0", templates: map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: zk}\n"}}})
		return fmt.Sprintf("operators:\n  - package: zk\n    repo: test\nkudo:\n  repositories: {test: %q}\n", r.URL), "", ocispec.Descriptor{}
	}, rollback: func(t *testing.T, _ string) (string, []string) {
		// The index lists version 0.2.0 for 0.1.0's tarball.
		r := newKudoE2ERepo(t, []kudoE2EOperator{{name: "zk", app: "3.6.2", opv: "0.1.0"}})
		r.publish(t, func(idx *kudo.IndexFile) {
			old := *idx.Entries["zk"][0]
			old.OperatorVersion = "0.2.0"
			idx.Entries["zk"] = append(idx.Entries["zk"], &old)
		})
		return fmt.Sprintf("operators:\n  - package: zk\n    repo: test\n    operatorVersion: 0.2.0\nkudo:\n  repositories: {test: %q}\n", r.URL),
			[]string{"holds operator zk version 3.6.2_0.1.0", "lists it as zk version 3.6.2_0.2.0"}
	}},
	{name: "kudo-operator-oci", push: func(t *testing.T, host string) (string, string, ocispec.Descriptor) {
		repo := host + "/kudo/zk"
		desc := matrixPushKudo(t, repo, "3.6.2_0.1.0")
		return "packages:\n  - ref: " + repo + ":3.6.2_0.1.0\n", repo, desc
	}, rollback: func(t *testing.T, host string) (string, []string) {
		repo := host + "/rollback/zk"
		matrixPushKudo(t, repo, "3.6.2_0.1.0", "3.6.2_0.2.0")
		return "packages:\n  - ref: " + repo + ":3.6.2_0.2.0\n", []string{"names version 3.6.2+0.2.0", "declares version 3.6.2_0.1.0"}
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
	}, rollback: func(t *testing.T, host string) (string, []string) {
		repo := host + "/rollback/img"
		r := matrixRepo(t, repo)
		desc, err := fixture.PushImage(context.Background(), r, "matrix-image-rollback", 512)
		if err != nil {
			t.Fatal(err)
		}
		matrixTag(t, r, desc, "1.0.0", "1.1.0")
		return "images:\n  - ref: " + repo + "\n    tags: ['^1.0']\n", []string{"tag 1.1.0", "older release than 1.0.0", "it is the digest tagged 1.0.0"}
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
	}, rollback: func(t *testing.T, host string) (string, []string) {
		repo := host + "/rollback/multi"
		r := matrixRepo(t, repo)
		desc, _, err := fixture.PushImageIndex(context.Background(), r, "matrix-index-rollback", "linux/amd64", "linux/arm64")
		if err != nil {
			t.Fatal(err)
		}
		matrixTag(t, r, desc, "1.0.0", "1.1.0")
		return "images:\n  - ref: " + repo + "\n    tags: ['^1.0']\n", []string{"tag 1.1.0", "older release than 1.0.0", "it is the digest tagged 1.0.0"}
	}},
}

// matrixRepo is the source repository name, for pushing fixtures.
func matrixRepo(t *testing.T, name string) *remote.Repository {
	t.Helper()
	return registrytest.Repository(t, registrytest.Client(t), name)
}

// matrixTag tags desc in r with tags.
func matrixTag(t *testing.T, r *remote.Repository, desc ocispec.Descriptor, tags ...string) {
	t.Helper()
	for _, tag := range tags {
		if err := r.Tag(context.Background(), desc, tag); err != nil {
			t.Fatal(err)
		}
	}
}

// matrixPushKudo pushes KUDO operator zk 3.6.2_0.1.0 as an OCI artifact
// (kudo.Artifact) to repo, tagged with tags.
func matrixPushKudo(t *testing.T, repo string, tags ...string) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
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
	matrixTag(t, r, desc, tags...)
	return desc
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

// matrixRun is one kind × layout row: its fixture, registries and
// working directory, shared by its stages.
type matrixRun struct {
	t           *testing.T
	w           *matrixWorld
	env         *clitest.Env
	kind        matrixKind
	layout      matrixLayout
	section     string // ferry.yaml's selection of the package
	src, mirror string // the source and mirror registries' hosts
	mirrorReg   *registrytest.Registry
	repo        string // the package's source repository
	root        ocispec.Descriptor
}

// matrixStage is one stage of a row, run in order on what the stages
// before it left: prep, when set, prepares it (a file, the mirror's
// storage) and reports whether the stage applies to the row.
type matrixStage struct {
	name string
	prep func(r *matrixRun) bool
	args func(r *matrixRun) []string
	// names, when set, are words of a failure's message that name the
	// row's own package (added to the verdict's).
	names func(r *matrixRun) []string
}

// Stage names the verdict table refers to.
const (
	stageLock        = "lock"
	stageVerify      = "verify"
	stageAttestation = "lock, attestation required"
	stageKindEdited  = "verify --deep, kind edited in the lock"
	stageCorrupt     = "verify, manifest corrupted in the mirror"
)

// matrixStages: lock, mirror to a registry, verify, verify --deep,
// install, archive out, archive in (and verify --deep of the imported
// lock), mirror to mirror (and verify --deep there); then, on what they
// left, a rule that also requires an SLSA provenance attestation, which
// no fixture carries (issue 30); the package's kind edited in a copy of
// the lock (issue 28 observation 6); the mirror's copy of the root
// manifest corrupted in registry storage, same size (issue 30; only on
// distribution, whose storage the test reaches).
var matrixStages = []matrixStage{
	{name: stageLock, args: func(*matrixRun) []string { return []string{"lock"} }},
	{name: "mirror", args: func(r *matrixRun) []string { return []string{"mirror", "--to", r.mirror + "/m"} }},
	{name: stageVerify, args: func(*matrixRun) []string { return []string{"verify"} }},
	{name: "verify --deep", args: func(*matrixRun) []string { return []string{"verify", "--deep"} }},
	{name: "install", args: func(*matrixRun) []string { return []string{"install", "--dest", "out"} }},
	{name: "archive out", args: func(*matrixRun) []string { return []string{"mirror", "--to-archive", "c.tar"} }},
	{name: "archive in", args: func(r *matrixRun) []string {
		return []string{"mirror", "--from-archive", "c.tar", "--lock", "a.lock", "--to", r.mirror + "/a"}
	}},
	{name: "verify archive import", args: func(*matrixRun) []string { return []string{"verify", "--deep", "--lock", "a.lock"} }},
	{name: "mirror to mirror", args: func(r *matrixRun) []string {
		return []string{"mirror", "--lock", "ferry.lock", "--from", r.mirror + "/m", "--to", r.mirror + "/mm"}
	}},
	{name: "verify mirror to mirror", args: func(r *matrixRun) []string {
		return []string{"verify", "--deep", "--mirror", r.mirror + "/mm"}
	}},
	{name: stageAttestation, prep: func(r *matrixRun) bool {
		r.env.WriteFile("att.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+r.section+matrixTrust(r.layout, "      attestations:\n        - type: slsaprovenance1\n"))
		return true
	}, args: func(*matrixRun) []string { return []string{"lock", "--config", "att.yaml", "--lock", "att.lock"} }},
	{name: stageKindEdited, prep: func(r *matrixRun) bool {
		l := e2eReadLock(r.t, r.env, "ferry.lock")
		var p *lock.Package
		for _, q := range l.Resolved() {
			if q.Digest == r.root.Digest.String() {
				p = q
			}
		}
		if p == nil {
			r.t.Fatalf("the lock has no package %s", r.root.Digest)
		}
		if p.Kind == "image" {
			p.Kind = "helm.chart"
		} else {
			p.Kind = "image"
		}
		if err := l.Write(r.env.Path("edited.lock")); err != nil {
			r.t.Fatal(err)
		}
		return true
	}, args: func(r *matrixRun) []string {
		return []string{"verify", "--deep", "--lock", "edited.lock", "--mirror", r.mirror + "/m"}
	}},
	{name: stageCorrupt, prep: func(r *matrixRun) bool {
		if r.mirrorReg == nil {
			return false
		}
		e2eTamperJSON(r.t, r.mirrorReg, r.root.Digest)
		return true
	}, args: func(r *matrixRun) []string { return []string{"verify", "--mirror", r.mirror + "/m"} },
		names: func(r *matrixRun) []string {
			return []string{r.mirror + "/m" + strings.TrimPrefix(r.repo, r.src) + "@" + r.root.Digest.String()}
		}},
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
// no cosign signature in any layout, so only its "none" row exists; an
// unsigned package is refused at lock, so no later stage runs.
func verdict(kind matrixKind, l matrixLayout, stage string) (v matrixVerdict, ok bool) {
	switch {
	case kind.name == "kudo-operator-repository" && l.sign != nil:
		return v, false
	case l.sign == nil && stage == stageLock:
		return matrixVerdict{3, []string{"trust", "no signature of", "(required)"}}, true
	case l.sign == nil:
		return v, false
	}
	switch stage {
	case stageVerify:
		// The signature the rule verified at the source is recorded in
		// the lock and verified again in the mirror.
		return matrixVerdict{0, []string{"1 signatures"}}, true
	case stageAttestation:
		return matrixVerdict{3, []string{"trust", "https://slsa.dev/provenance/v1", "missing"}}, true
	case stageKindEdited:
		return matrixVerdict{3, []string{"kind", "the lock has kind"}}, true
	case stageCorrupt:
		return matrixVerdict{3, []string{"digest", "manifest hashes to", "the lock has"}}, true
	}
	return matrixVerdict{code: 0}, true
}

// TestE2EClosureMatrix is issue 28 point 2's table: every package kind
// (Porter bundle, Crossplane package, Helm chart in OCI, KUDO operator as
// an OCI artifact and from a repository, image, image index, and mixins
// from a feed) × every signature layout (classic .sig, Sigstore bundle via
// the referrers API, bundle via the referrers tag-schema fallback,
// keyless, none) × every stage (lock, mirror to a registry, verify,
// verify --deep, install, archive out and in, mirror to mirror), each
// (kind, layout, stage) one verdict: the exit code and, for failures, the
// key words of the message. The full cross product runs: each fixture is
// built once per kind × layout, in its own registries, and its stages run
// in sequence; rows run in parallel.
//
// The rule is `match: ""`, `required: true`, with the test key (keyless:
// the virtual Sigstore's identity and trusted root), so every signed
// layout passes every stage (issue 28 observation 1: a bundle-only
// signature passes verify and install at the mirror; observation 2: the
// tag-schema fallback listing the empty artifactType passes lock) and
// "none" is refused at lock (exit 3), leaving no lock for later stages. A
// KUDO operator from a repository can carry no cosign signature: its one
// row is "none". Each signed row then answers issue 30's cases on what
// its stages left: a required attestation missing (exit 3 at lock), the
// root manifest's kind edited in the lock (observation 6: exit 3 at
// verify --deep), and the mirror's manifest bytes no longer hashing to
// the lock's digest (exit 3 at verify; on the distribution registries).
//
// Mixins are feed binaries without cosign signatures: their row (layout
// "none", no rule applies to a feed binary) locks with --sign-key, mirrors,
// verifies, installs, goes out and into an archive and mirrors to a second
// mirror with the signed lock (observation 7).
//
// The "rollback" row of each kind (issue 30) tags a release with a higher
// version too and selects that tag: lock exits 3 naming both. The
// "freshness" row installs a signed lock older than the one installed in
// that directory: exit 3 without --allow-downgrade. The "provenance" row
// locks a classic repository's chart under a rule asking for its .prov:
// signed by the publisher, exit 0; forged (signed by another key), exit 3.
//
// The other cases have named tests; the table names them rather than
// duplicate them:
//   - obs. 3, a lock written before signing: TestE2ESignatureLayouts
//     ("lock written before signing", every layout).
//   - obs. 4, an unsigned import never replaces a signed lock:
//     TestSignedLockAirGap, TestInstallRequireSignedLockSetting.
//   - obs. 5, every registry write retried, mixins included: TestFaultsAllFormats.
//   - obs. 6, an images[] entry deleted: TestE2ELockCheckedBothWays,
//     TestE2ELockIncomplete, TestE2ELockEditedImage.
//   - obs. 8, policy on every signed manifest of the graph: TestE2ENestedPolicy.
//   - a package signed by another key, every layout: TestE2ESignatureLayouts.
//   - issue 30, a mixin version linking an older release, and the other
//     forms of rollback per format: TestE2ERollbackEveryFormat.
//   - issue 30, freshness of archive imports: TestE2ELockFreshness.
//   - issue 30, attestations that exist but fail (key, subject, builder):
//     TestE2EAttestations.
//   - issue 30, Helm provenance checked at the mirror: TestE2EHelmProvenance.
//   - issue 30, a corrupt manifest at lock, install and mirror --from:
//     TestE2EManifestCorrupt, TestE2EManifestJudgedByBytes.
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
	row := func(name string, run func(t *testing.T) int) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			n := run(t)
			mu.Lock()
			rows += n
			mu.Unlock()
		})
	}
	for _, kind := range matrixKinds {
		for _, l := range matrixLayouts {
			if _, ok := verdict(kind, l, stageLock); ok {
				row(kind.name+"/"+l.name, func(t *testing.T) int { return testMatrixRow(t, w, kind, l) })
			}
		}
		row(kind.name+"/rollback", func(t *testing.T) int { return testMatrixRollback(t, kind) })
	}
	row("mixin/none", func(t *testing.T) int { return testMatrixMixin(t, w) })
	row("freshness", func(t *testing.T) int { return testMatrixFreshness(t, w) })
	row("helm-chart-repository/provenance", testMatrixProvenance)
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

// matrixTrust is the ferry.yaml trust section of layout l; extra is
// appended to its rule.
func matrixTrust(l matrixLayout, extra string) string {
	if l.keyless {
		return fmt.Sprintf("trust:\n  trustedRoot: trusted_root.json\n  rules:\n    - match: \"\"\n      keyless:\n        - issuer: %s\n          subject: %s\n      required: true\n%s", matrixIssuer, matrixSubject, extra)
	}
	return "trust:\n  rules:\n    - match: \"\"\n      keys: [test.pub]\n      required: true\n" + extra
}

// testMatrixRow builds kind's fixture signed in layout l and runs every
// stage, asserting its verdict; it returns the number of rows asserted.
func testMatrixRow(t *testing.T, w *matrixWorld, kind matrixKind, l matrixLayout) int {
	r := &matrixRun{t: t, w: w, kind: kind, layout: l}
	r.src, _ = l.registry(t)
	r.mirror, r.mirrorReg = l.registry(t)
	r.section, r.repo, r.root = kind.push(t, r.src)
	if l.sign != nil && r.repo != "" {
		l.sign(t, w, r.repo+"@"+r.root.Digest.String(), r.root)
	}
	r.env = e2eEnv(t)
	r.env.Vars = append(r.env.Vars, signature.PasswordEnv+"="+cosigntest.Password)
	r.env.WriteFile("test.pub", matrixRead(t, w.pub))
	r.env.WriteFile("trusted_root.json", string(w.root))
	r.env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+r.section+matrixTrust(l, ""))
	n := 0
	for _, st := range matrixStages {
		v, ok := verdict(kind, l, st.name)
		if !ok || (st.prep != nil && !st.prep(r)) {
			continue
		}
		words := v.words
		if st.names != nil && v.code != 0 {
			words = append(slices.Clone(words), st.names(r)...)
		}
		t.Logf("stage %s: want exit %d %q", st.name, v.code, words)
		r.env.Expect(v.code, st.args(r), words...)
		n++
	}
	return n
}

// testMatrixRollback is kind's rollback row: one verdict, at lock.
func testMatrixRollback(t *testing.T, kind matrixKind) int {
	src, _ := matrixDistribution(t)
	section, words := kind.rollback(t, src)
	env := clitest.New(t)
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n"+section)
	env.Expect(3, []string{"lock"}, words...)
	e2eAbsent(t, env.Path("ferry.lock"))
	return 1
}

// testMatrixFreshness is the freshness row: two signed locks of one
// bundle (serial 0 at v1.0.0, serial 1 at v1.1.0), carried through
// archives into a mirror; installing the older where the newer is
// installed is refused. The rule is the same in every format (the
// lock's serial, not the package), so one kind stands for all.
func testMatrixFreshness(t *testing.T, w *matrixWorld) int {
	ctx := context.Background()
	src, _ := matrixDistribution(t)
	mirror, _ := matrixDistribution(t)
	repo := src + "/fresh/app"
	for _, v := range []string{"1.0.0", "1.1.0"} {
		if _, err := fixture.PushBundle(ctx, matrixRepo(t, repo), repo, fixture.Bundle{Name: "app", Version: v, Tags: []string{"v" + v}}); err != nil {
			t.Fatal(err)
		}
	}
	env := clitest.New(t)
	env.Vars = append(env.Vars, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("test.pub", matrixRead(t, w.pub))
	for _, v := range []string{"1.0.0", "1.1.0"} {
		env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+repo+":v"+v+"\n")
		env.MustRun("lock", "--sign-key", w.key)
		env.MustRun("mirror", "--to-archive", v+".tar")
		env.MustRun("mirror", "--from-archive", v+".tar", "--lock", v+".lock", "--lock-key", "test.pub", "--to", mirror+"/f")
	}
	env.MustRun("install", "--lock", "1.1.0.lock", "--lock-key", "test.pub", "--dest", "out")
	env.Expect(3, []string{"install", "--lock", "1.0.0.lock", "--lock-key", "test.pub", "--dest", "out"},
		"the lock to install has serial 0, older than serial 1", "--allow-downgrade")
	return 1
}

// testMatrixProvenance is the Helm provenance row (issue 30): a chart of
// a classic repository under a rule that asks for its .prov signed by the
// publisher's key (Helm's own provenance.Signatory signs it): an honest
// .prov passes lock; a forged one, signed by another key, is refused at
// lock. Two verdicts.
func testMatrixProvenance(t *testing.T) int {
	env := clitest.New(t)
	s := indexrepotest.New(t)
	entity := func(name string) *openpgp.Entity {
		e, err := openpgp.NewEntity(name, "", name+"@acme.example", nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	acme, evil := entity("acme"), entity("evil")
	var ring bytes.Buffer
	if err := acme.Serialize(&ring); err != nil {
		t.Fatal(err)
	}
	env.WriteFile("acme.gpg", ring.String())
	ch := charttest.Chart(charttest.ChartSpec{Name: "web", Version: "1.0.0"})
	tgz, err := charttest.ChartArchive(ch)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(e *openpgp.Entity) []byte {
		out, err := charttest.Provenance(e, tgz, "web-1.0.0.tgz")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	idx, err := charttest.ChartIndex(map[string][]byte{"web-1.0.0.tgz": tgz}, "", time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s.Put("/index.yaml", idx)
	s.Put("/web-1.0.0.tgz", tgz)
	s.Put("/web-1.0.0.tgz.prov", sign(acme))
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - repo: "+s.URL+"\n    name: web\n    version: 1.0.0\n"+
		"trust:\n  rules:\n    - match: "+s.URL+"/\n      provenance: {keyring: acme.gpg}\n")
	env.Expect(0, []string{"lock"})
	s.Put("/web-1.0.0.tgz.prov", sign(evil))
	env.Expect(3, []string{"lock", "--lock", "forged.lock"}, s.URL+"/web@", "provenance does not verify", "signature made by unknown entity")
	e2eAbsent(t, env.Path("forged.lock"))
	return 2
}

// testMatrixMixin is the mixin row: a feed binary, no signature (layout
// "none"), locked into a signed lock and carried through every stage.
func testMatrixMixin(t *testing.T, w *matrixWorld) int {
	fs := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	mirror, _ := matrixDistribution(t)
	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+fs.URL, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("test.pub", matrixRead(t, w.pub))
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nmixins:\n  - name: exec\n    version: 1.x\n    feed: "+fs.URL+"\n"+matrixTrust(matrixLayout{}, ""))
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
