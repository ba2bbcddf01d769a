// Package depcheck pins the weight of ferry: the third-party packages the
// binary and each of ferry's packages may reach, so that an upstream
// release that adds hundreds of packages (or a new import that drags in a
// client library ferry never calls) fails a test instead of going
// unnoticed. It follows go-containerregistry's internal/depcheck
// (AssertNoDependency, AssertOnlyDependencies; used by cmd/crane and
// pkg/registry), on `go list -deps` rather than golang.org/x/tools. It
// has no non-test code.
//
// What is counted is what the compiler links: `go list -deps` of a
// package's non-test files. Tests may import anything (helm's tests
// compare ferry's copies of Helm's rules with Helm's own packages).
//
// When a test here fails after an upgrade, read the chain it prints: if
// the new packages are needed, raise the number with the reason in the
// comment; if not, import less.
package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/ferryhq/ferry"

// binary is the package of the ferry command.
const binary = module + "/cmd/ferry"

// binaryMax is the most third-party packages (outside the standard
// library and this module) the ferry binary may link: 923 when this was
// written (1,124 before issue 29; crane links 28), plus room for upstream
// patch releases; 965 after issue 30 point 5 (verifying a Helm chart's
// .prov with Helm's own helm.sh/helm/v4/pkg/provenance, which links
// ProtonMail/go-crypto's OpenPGP and cloudflare/circl's curves: 36
// packages, the same whether ferry called go-crypto itself or Helm's
// package, which adds itself alone); 779 after issue 29's copy of
// distribution (internal/forked/distribution, without go-redis, the
// OpenTelemetry SDK and exporters, and Prometheus: 186 fewer); then 309
// fewer with Helm's chart packages from internal/forked/helm (no
// client-go); 272 (from 467) after sigstore-go's verifier and what it
// imports are linked as pruned copies (internal/forked/sigstore-go and the
// folders internal/forked/sigstore.sh lists: no gRPC, no go-openapi
// client, spec or validate, no OpenTelemetry, no klog, no go-tuf); 267
// once the jsonschema copy prints its messages without x/text's message
// packages (internal/forked/jsonschema/internal/message: no message,
// catalog, catmsg, plural); 261 after distribution/reference,
// go-openapi/strfmt and the two DSSE packages are linked as copies
// without start-up work (internal/forked/reference, strfmt,
// go-securesystemslib, sigstore: no golang.org/x/crypto/ssh).
const binaryMax = 288

// binaryModules are the modules the binary may link packages of, by path
// prefix, each with the most packages it may link from them and who
// brings them. A module no prefix matches fails the test, as does a
// prefix over its number. Numbers are those measured, plus about 10%.
//
// The three heavy upstreams ferry cannot split, with their weight when
// this was written:
//   - Helm's chart packages (issue 29 point 1: no longer heavy): Helm's
//     pkg/chart/common imports its internal/version, which imports
//     k8s.io/client-go/kubernetes (the whole clientset), and every chart
//     package imports chart/common, so Helm's loader and engine cost about
//     380 packages, 282 of them Kubernetes'. ferry links
//     internal/forked/helm instead: the same packages with the client-go,
//     api, apiextensions and apimachinery imports patched out (its
//     UPSTREAM.md), which reach no k8s.io package. Of Helm's module only
//     pkg/provenance and pkg/strvals, which import no chart package, stay.
//   - distribution's registry (ferry serve) was the second: registry/handlers
//     imports go-redis and redisotel, the filesystem driver imports
//     distribution's tracing (the OpenTelemetry SDK and exporters, gRPC),
//     and both import docker/go-metrics (Prometheus): 198 packages. ferry
//     serve now runs a pruned copy, internal/forked/distribution, patched
//     without them (its UPSTREAM.md); serve reaches 22 third-party
//     packages, and the binary 186 fewer.
//   - sigstore-go (signature) was the third: pkg/bundle and pkg/verify
//     import rekor's generated OpenAPI client (go-openapi/runtime's client
//     and middleware, spec, loads, analysis, validate; the OpenTelemetry
//     API), rekor-tiles' generated gRPC and grpc-gateway code (gRPC: 66
//     packages), certificate-transparency-go's log client and log list
//     (klog), govalidator and in-toto's layout tooling: signature reached
//     333 packages. ferry verifies with internal/forked/sigstore-go and the
//     pruned copies of rekor, rekor-tiles, go-openapi (runtime, validate,
//     swag: a few files each), certificate-transparency-go (ctutil.go),
//     govalidator (IsEmail) and in-toto-golang (statement types) it
//     imports, held to the real modules by parity tests (each folder's
//     UPSTREAM.md; pkg/root without its TUF fetchers, so no go-tuf):
//     signature reaches 136. What stays is what verification runs:
//     protobuf and protobuf-specs, sigstore's signature packages, rekor's
//     models (go-openapi errors; strfmt is internal/forked/strfmt),
//     ct-go's x509.
var binaryModules = []struct {
	prefix string
	max    int
	why    string
}{
	{"sigs.k8s.io/yaml", 3, "helm (Helm's YAML, in internal/forked/helm and pkg/strvals)"},
	{"helm.sh/helm/v4", 3, "helm: pkg/provenance (a chart's .prov) and pkg/strvals (--set values); the chart loader and engine are internal/forked/helm"},
	{"google.golang.org/", 39, "sigstore: protobuf (protobuf-specs, rekor-tiles' log-entry messages) and genproto's field annotations"},
	{"golang.org/x/", 46, "the Go project's extended library (no x/crypto/ssh: DSSE key IDs are computed by internal/forked/go-securesystemslib; no x/text message packages: internal/forked/jsonschema/internal/message)"},
	{"github.com/ProtonMail/go-crypto", 26, "helm: pkg/provenance (OpenPGP: a chart's .prov, trust rules' provenance keyring)"},
	{"github.com/cloudflare/circl", 14, "helm: pkg/provenance through ProtonMail/go-crypto (X25519, X448, Ed448 keys)"},
	{"github.com/sigstore/", 23, "signature: sigstore-go's fulcio/certificate, sigstore, protobuf-specs, rekor-tiles (note, verify, verifier), rekor (pki, util), timestamp-authority; the rest is internal/forked"},
	{"github.com/go-openapi/", 9, "sigstore: rekor's models (errors, swag's conv, jsonutils, typeutils); runtime, validate, strfmt and the swag umbrella are internal/forked copies"},
	{"oras.land/oras-go/v2", 36, "client: the registry client"},
	{"github.com/google/", 10, "sigstore (certificate-transparency-go's x509 and SCT types, go-containerregistry/pkg/name), helm (sprig: uuid)"},
	{"github.com/klauspost/compress", 9, "zstd and gzip"},
	{"github.com/gobwas/glob", 9, "helm: engine"},
	{"github.com/in-toto/", 4, "sigstore (attestation's statement, in-toto-golang's SLSA v0.2 types)"},
	{"github.com/transparency-dev/", 6, "sigstore"},
	{"github.com/vbauerster/mpb", 5, "progress bars"},
	{"github.com/spf13/", 5, "command line (cobra, pflag); helm (cast)"},
	{"github.com/secure-systems-lab/", 1, "sigstore (encrypted keys, through sigstore's cryptoutils; DSSE is internal/forked/go-securesystemslib)"},
	{"github.com/go-jose/", 5, "sigstore; serve (token authentication)"},
	{"github.com/docker/", 2, "serve: distribution's copy (go-events)"},
	{"github.com/opencontainers/", 4, "OCI image spec and digests"},
	{"github.com/hashicorp/golang-lru", 4, "serve: distribution; sigstore"},
	{"github.com/Masterminds/", 4, "semver; helm (sprig)"},
	{"go.yaml.in/yaml/", 3, "YAML"},
	{"github.com/santhosh-tekuri/jsonschema", 3, "helm: values.schema.json"},
	{"github.com/mitchellh/", 3, "helm (sprig)"},
	{"github.com/gorilla/", 3, "serve: distribution"},
	{"github.com/go-viper/mapstructure", 3, "sigstore"},
	{"github.com/digitorus/", 3, "sigstore (timestamps)"},
	{"github.com/cyphar/filepath-securejoin", 3, "helm: chart loader"},
	{"github.com/BurntSushi/toml", 3, "helm: engine (toToml)"},
	{"github.com/youmark/pkcs8", 1, "sigstore"},
	{"github.com/sirupsen/logrus", 1, "serve: distribution's logger"},
	{"github.com/shopspring/decimal", 1, "helm (sprig)"},
	{"github.com/rivo/uniseg", 1, "progress bars"},
	{"github.com/pkg/errors", 1, "sigstore"},
	{"github.com/oklog/ulid", 1, "sigstore (go-openapi strfmt, internal/forked/strfmt)"},
	{"github.com/munnerz/goautoneg", 1, "Kubernetes"},
	{"github.com/mattn/go-runewidth", 1, "progress bars"},
	{"github.com/huandu/xstrings", 1, "helm (sprig)"},
	{"github.com/felixge/httpsnoop", 1, "serve: distribution (gorilla/handlers)"},
	{"github.com/cyberphone/json-canonicalization", 1, "sigstore"},
	{"github.com/blang/semver", 1, "sigstore (rekor's entry types)"},
	{"github.com/acarl005/stripansi", 1, "progress bars"},
	{"github.com/VividCortex/ewma", 1, "progress bars"},
	{"dario.cat/mergo", 1, "helm (sprig)"},
}

// budgets are the most third-party packages each of ferry's packages may
// reach (measured, plus room). A package not listed here, internal/
// helpers aside, may reach defaultBudget: a new package heavier than that
// is added here with its reason. A package that only reads metadata
// stays far below the formats that render or serve.
var budgets = map[string]int{
	"cmd/ferry": binaryMax,
	"formats":   273, // every format
	"helm":      263, // trust's sigstore-go, Helm's chart loader and engine (internal/forked/helm), pkg/provenance (OpenPGP)
	// Formats, the pipeline and the root package reach sigstore-go
	// through trust (mirrorset's trust section) or install (signature).
	"":           182,
	"crossplane": 190,
	"images":     184, // images: sections, read through mirrorset
	"kudo":       196,
	"mixin":      183,
	"porter":     183,
	"install":    182,
	"mirrorset":  182,
	"relocate":   182,
	"trust":      182,
	"verify":     182,
	"serve":      23,  // ferry's copy of distribution's registry (internal/forked/distribution)
	"signature":  139, // sigstore-go's verifier (internal/forked/sigstore-go and the copies it imports)
}

// defaultBudget bounds a package budgets does not name.
const defaultBudget = 45

// banned are import path prefixes no package of ferry may reach (the
// binary included), with the reason. They are the parts of upstreams
// ferry reimplements or does not need.
var banned = []struct{ prefix, why string }{
	{"helm.sh/helm/v4/pkg/repo", "Helm's repository-index rules are copied in helm/index.go; pkg/repo/v1 links Helm's getters, plugins and a WebAssembly runtime"},
	{"helm.sh/helm/v4/pkg/getter", "Helm's downloaders: ferry downloads with its own client"},
	{"helm.sh/helm/v4/pkg/registry", "Helm's registry client: the media types are copied in helm/mediatype.go"},
	{"helm.sh/helm/v4/pkg/cli", "Helm's CLI settings and kubeconfig"},
	{"helm.sh/helm/v4/pkg/action", "Helm's actions (install, upgrade) and their Kubernetes clients"},
	{"helm.sh/helm/v4/pkg/downloader", "Helm's dependency downloader"},
	{"helm.sh/helm/v4/internal/plugin", "Helm's plugin system"},
	{"github.com/tetratelabs/", "a WebAssembly runtime (Helm's plugins)"},
	{"sigs.k8s.io/kustomize/", "kustomize (Helm's post-renderers)"},
	{"k8s.io/cli-runtime/", "kubectl's client machinery"},
	{"github.com/distribution/distribution/", "the real distribution module is a test dependency (serve/parity_test.go): ferry serve links its pruned copy, internal/forked/distribution"},
	{"github.com/redis/", "a Redis client: ferry serve's copy of distribution has no redis cache"},
	{"github.com/docker/go-metrics", "Prometheus metrics ferry serve never exposes (internal/forked/distribution/internal/nometrics)"},
	{"github.com/prometheus/", "Prometheus metrics ferry serve never exposes"},
	{"go.opentelemetry.io/otel/sdk", "the OpenTelemetry SDK: distribution's tracing, removed from ferry's copy"},
	{"go.opentelemetry.io/otel/exporters/", "OpenTelemetry exporters: distribution's tracing, removed from ferry's copy"},
	{"go.opentelemetry.io/contrib/", "OpenTelemetry's autoexport: distribution's tracing, removed from ferry's copy"},
	{"helm.sh/helm/v4/pkg/chart", "Helm's chart packages link client-go (chart/common → internal/version): use internal/forked/helm"},
	{"helm.sh/helm/v4/pkg/engine", "Helm's engine links client-go for `lookup`: use internal/forked/helm"},
	{"helm.sh/helm/v4/pkg/release", "Helm's release packages link apimachinery: use internal/forked/helm"},
	{"k8s.io/client-go/", "Kubernetes' client libraries: ferry renders charts without a cluster (internal/forked/helm)"},
	{"k8s.io/apimachinery/", "Kubernetes' API machinery (internal/forked/helm copies the two helpers Helm's loader and capabilities call)"},
	{"k8s.io/api/", "Kubernetes' API types (Helm's DefaultVersionSet is generated into internal/forked/helm)"},
	{"google.golang.org/grpc", "gRPC: rekor-tiles' generated service code; internal/forked/rekor-tiles keeps the log-entry messages only"},
	{"github.com/grpc-ecosystem/", "grpc-gateway: rekor-tiles' generated gateway, removed from internal/forked/rekor-tiles"},
	{"go.opentelemetry.io/", "OpenTelemetry: reached through rekor's OpenAPI client and distribution's tracing, both left out of ferry's copies"},
	{"k8s.io/", "Kubernetes' libraries (klog came through certificate-transparency-go's log list, left out of internal/forked/certificate-transparency-go)"},
	{"github.com/sigstore/sigstore-go/pkg/bundle", "the real module is a test dependency (parity tests, cosigntest): ferry verifies with internal/forked/sigstore-go"},
	{"github.com/sigstore/sigstore-go/pkg/verify", "the real module is a test dependency: ferry verifies with internal/forked/sigstore-go"},
	{"github.com/sigstore/sigstore-go/pkg/tlog", "the real module is a test dependency: ferry verifies with internal/forked/sigstore-go"},
	{"github.com/sigstore/sigstore-go/pkg/root", "the real module is a test dependency: ferry loads trusted roots with internal/forked/sigstore-go (without the TUF fetchers)"},
	{"github.com/theupdateframework/", "go-tuf: sigstore-go's TUF fetchers, left out of internal/forked/sigstore-go/pkg/root"},
	{"github.com/sigstore/rekor/pkg/generated/", "rekor's generated OpenAPI client and models (go-openapi runtime, validate, spec): internal/forked/rekor"},
	{"github.com/sigstore/rekor/pkg/types", "rekor's entry types import its models: internal/forked/rekor"},
	{"github.com/sigstore/rekor-tiles/v2/pkg/generated/", "rekor-tiles' generated gRPC service: internal/forked/rekor-tiles"},
	{"github.com/go-openapi/runtime", "go-openapi's client and server runtime: internal/forked/go-openapi-runtime has the two interfaces the rekor models use"},
	{"github.com/go-openapi/validate", "go-openapi's spec validator (spec, loads, analysis): internal/forked/go-openapi-validate has the value checks"},
	{"github.com/go-openapi/spec", "OpenAPI specs, through go-openapi/validate"},
	{"github.com/asaskevich/govalidator", "about 50 regular expressions compiled at init: internal/forked/govalidator has IsEmail"},
	{"github.com/google/certificate-transparency-go/client", "ct-go's log client (ctutil's loginfo.go): internal/forked/certificate-transparency-go has ctutil.go"},
	{"github.com/google/certificate-transparency-go/loglist3", "ct-go's log list (klog): internal/forked/certificate-transparency-go has ctutil.go"},
	{"github.com/secure-systems-lab/go-securesystemslib/signerverifier", "in-toto's layout tooling (in_toto's keylib): internal/forked/in-toto-golang has the statement types rekor uses"},
	{"github.com/distribution/reference", "its initialiser compiles ten regular expressions at every start (414 KB): ferry links internal/forked/reference, which compiles them on first use; the real module is a test dependency"},
	{"github.com/go-openapi/strfmt", "its initialisers fill the format registry and country tables at every start (258 KB): ferry links internal/forked/strfmt, which does it on first use; the real module is a test dependency"},
	{"golang.org/x/crypto/ssh", "x/crypto/ssh's initialisers run at every start; DSSE key IDs (its only use) are computed by internal/forked/go-securesystemslib/dsse"},
	{"github.com/secure-systems-lab/go-securesystemslib/dsse", "imports golang.org/x/crypto/ssh: internal/forked/go-securesystemslib/dsse"},
	{"github.com/sigstore/sigstore/pkg/signature/dsse", "imports go-securesystemslib/dsse: internal/forked/sigstore/pkg/signature/dsse"},
	{"github.com/shibumi/go-pathspec", "in-toto's layout tooling (in_toto's rulelib): internal/forked/in-toto-golang has the statement types rekor uses"},
}

// serverOnly are import path prefixes only `ferry serve` needs: the
// registry server. Only serveUsers may reach them.
var serverOnly = []string{
	module + "/internal/forked/distribution/registry/handlers",
	module + "/internal/forked/distribution/registry/storage",
}

// serveUsers are the packages that run the registry server.
var serveUsers = map[string]bool{"serve": true, "cmd/ferry": true}

// noHelm are the packages that must not reach Helm or Kubernetes'
// libraries: every format but helm, and the pipeline.
var noHelm = []string{"porter", "mixin", "crossplane", "kudo", "resolve", "lock", "relocate", "verify", "install", "mirrorset", "signature", "trust", "serve", "serve/formatrepo", "client", ""}

type goPackage struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
	Deps       []string
}

var (
	listOnce sync.Once
	listed   map[string]*goPackage
	listErr  error
)

// list runs `go list -deps` once over every package of the module: each
// package with its imports and transitive dependencies, non-test files
// only.
func list(t *testing.T) map[string]*goPackage {
	t.Helper()
	listOnce.Do(func() {
		cmd := exec.Command("go", "list", "-deps", "-test=false", "-json=ImportPath,Standard,Module,Imports,Deps", module+"/...")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			listErr = fmt.Errorf("go list: %v\n%s", err, stderr.Bytes())
			return
		}
		listed = map[string]*goPackage{}
		dec := json.NewDecoder(bytes.NewReader(out))
		for {
			var p goPackage
			if err := dec.Decode(&p); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				listErr = fmt.Errorf("decoding go list output: %v", err)
				return
			}
			listed[p.ImportPath] = &p
		}
	})
	if listErr != nil {
		t.Fatal(listErr)
	}
	return listed
}

// own reports whether p is one of this module's packages.
func own(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

// rel is p's path inside the module ("" for the root package).
func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

// thirdParty returns the third-party packages from reaches, sorted.
func thirdParty(pkgs map[string]*goPackage, from string) []string {
	var out []string
	for _, d := range pkgs[from].Deps {
		if p := pkgs[d]; p != nil && !p.Standard && !own(d) {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out
}

// chain returns the shortest chain of imports from from to to, as
// go-containerregistry's depcheck prints it.
func chain(pkgs map[string]*goPackage, from, to string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n == to {
			break
		}
		for _, m := range pkgs[n].Imports {
			if _, seen := prev[m]; !seen && pkgs[m] != nil {
				prev[m] = n
				queue = append(queue, m)
			}
		}
	}
	var path []string
	for n := to; n != ""; n = prev[n] {
		path = append([]string{n}, path...)
	}
	return strings.Join(path, "\n\t→ ")
}

// TestBinaryModules: the binary links only modules binaryModules allows,
// no more packages of each than it says, and at most binaryMax in all.
func TestBinaryModules(t *testing.T) {
	pkgs := list(t)
	deps := thirdParty(pkgs, binary)
	if len(deps) > binaryMax {
		t.Errorf("the ferry binary links %d third-party packages, more than %d", len(deps), binaryMax)
	}
	counts := make([]int, len(binaryModules))
	first := make([]string, len(binaryModules))
	unknown := map[string][]string{} // module → its packages
	for _, d := range deps {
		mod := ""
		if m := pkgs[d].Module; m != nil {
			mod = m.Path
		}
		best := -1
		for i, m := range binaryModules {
			if strings.HasPrefix(mod, m.prefix) && (best < 0 || len(m.prefix) > len(binaryModules[best].prefix)) {
				best = i
			}
		}
		if best < 0 {
			unknown[mod] = append(unknown[mod], d)
			continue
		}
		counts[best]++
		if first[best] == "" {
			first[best] = d
		}
	}
	mods := make([]string, 0, len(unknown))
	for mod := range unknown {
		mods = append(mods, mod)
	}
	sort.Strings(mods)
	for _, mod := range mods {
		ds := unknown[mod]
		t.Errorf("the ferry binary links %d packages of module %s, which binaryModules does not allow, first:\n\t%s", len(ds), mod, chain(pkgs, binary, ds[0]))
	}
	for i, m := range binaryModules {
		t.Logf("%-45s %4d (max %d)", m.prefix, counts[i], m.max)
		if counts[i] > m.max {
			t.Errorf("the ferry binary links %d packages of %s (%s), more than %d; for example:\n\t%s", counts[i], m.prefix, m.why, m.max, chain(pkgs, binary, first[i]))
		}
	}
	t.Logf("the ferry binary links %d third-party packages (max %d)", len(deps), binaryMax)
}

// TestPackageBudgets: each of ferry's packages reaches at most its
// budget of third-party packages.
func TestPackageBudgets(t *testing.T) {
	pkgs := list(t)
	var names []string
	for p := range pkgs {
		if own(p) && !strings.HasPrefix(rel(p), "internal/") && !strings.HasSuffix(p, "test") {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for name := range budgets {
		if pkgs[importPath(name)] == nil {
			t.Errorf("budgets names package %q, which does not exist: update this test", name)
		}
	}
	for _, p := range names {
		n := len(thirdParty(pkgs, p))
		max, ok := budgets[rel(p)]
		if !ok {
			max = defaultBudget
		}
		t.Logf("%-20s %4d (max %d)", rel(p), n, max)
		if n > max {
			deps := thirdParty(pkgs, p)
			t.Errorf("%s reaches %d third-party packages, more than %d; for example:\n\t%s", p, n, max, chain(pkgs, p, deps[len(deps)-1]))
		}
	}
}

func importPath(rel string) string {
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

// TestBanned: no package of ferry reaches what banned lists, only serve
// and the binary reach the registry server, and no format but helm
// reaches Helm or Kubernetes.
func TestBanned(t *testing.T) {
	pkgs := list(t)
	for p := range pkgs {
		if !own(p) || strings.HasPrefix(rel(p), "internal/") {
			continue
		}
		for _, d := range pkgs[p].Deps {
			for _, b := range banned {
				if strings.HasPrefix(d, b.prefix) {
					t.Errorf("%s reaches %s (%s):\n\t%s", p, d, b.why, chain(pkgs, p, d))
				}
			}
			if !serveUsers[rel(p)] {
				for _, s := range serverOnly {
					if strings.HasPrefix(d, s) {
						t.Errorf("%s reaches the registry server's %s (only ferry serve needs it; use serve/formatrepo):\n\t%s", p, d, chain(pkgs, p, d))
					}
				}
			}
		}
	}
	for _, name := range noHelm {
		p := importPath(name)
		if pkgs[p] == nil {
			t.Errorf("noHelm names package %q, which does not exist: update this test", name)
			continue
		}
		for _, d := range pkgs[p].Deps {
			if strings.HasPrefix(d, "helm.sh/") || strings.HasPrefix(d, module+"/internal/forked/helm") || strings.HasPrefix(d, "k8s.io/client-go/kubernetes") {
				t.Errorf("%s reaches %s:\n\t%s", p, d, chain(pkgs, p, d))
				break
			}
		}
	}
}
