package porter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"strings"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/lock"
)

var _ install.Writer = Reader{}

// HandOffDir is the install directory's folder of bundle.json copies that
// name the mirror: porter/NAME-VERSION/bundle.json, for `porter install
// --cnab-file`.
const HandOffDir = "porter"

// WriteInstall fills in the Wiring of every Porter bundle step of plan
// (plan.json): for each v2 dependency, the parameters and credentials the
// bundle passes it and the outputs it promotes from it, each with its
// template and the references in it (wiringSource). It also writes
// porter/NAME-VERSION/bundle.json for every bundle (mirrorBundle). The
// bundle.json is read from the install's layout, where every blob was
// checked against its digest as it was fetched.
func (Reader) WriteInstall(dir string, l *lock.Lock, plan *install.Plan) error {
	var store *oci.ReadOnlyStore
	ctx := context.Background()
	mirrorOf := map[string]string{} // SOURCE@DIGEST -> MIRROR_REPO
	for _, st := range plan.Steps {
		repo, _, _ := strings.Cut(st.Mirror, "@")
		mirrorOf[st.Source+"@"+st.Digest] = repo
	}
	for i := range plan.Steps {
		st := &plan.Steps[i]
		if st.Kind != format.KindPorterBundle {
			continue
		}
		if store == nil {
			s, err := oci.NewFromFS(ctx, os.DirFS(dir))
			if err != nil {
				return fmt.Errorf("reading the install's layout: %w", err)
			}
			store = s
		}
		p := l.PackageAt(st.Source, st.Digest)
		if p == nil {
			return fmt.Errorf("bundle %s@%s is not in the lock", st.Source, st.Digest)
		}
		desc := p.Descriptor()
		manifest, err := fetchCapped(ctx, store, desc, MaxManifestSize)
		if err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
		b, _, raw, err := readBundle(ctx, content.Fetcher(store), desc, manifest)
		if err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
		if st.Wiring, err = b.Wiring(); err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
		out, err := mirrorBundle(raw, l, p, mirrorOf)
		if err != nil {
			return fmt.Errorf("bundle %s@%s: %s/: %w", st.Source, st.Digest, HandOffDir, err)
		}
		name := HandOffDir + "/" + path.Base(b.Name) + "-" + path.Base(b.Version) + "/bundle.json"
		if err := install.WriteFile(dir, name, out, 0o644); err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
	}
	return nil
}

// mirrorBundle returns bundle.json raw with every reference pointed at
// the mirror, for `porter install --cnab-file` (getporter/porter
// pkg/porter/dependencies.go identifyDependencies: the parent bundle is
// read from that file, and its dependencies are resolved from the
// references it writes):
//
//   - each dependency the lock resolved (v1 `io.cnab.dependencies` and v2
//     `org.getporter.dependencies@v2` requires[NAME].bundle) becomes
//     MIRROR_REPO:TAG@DIGEST (MIRROR_REPO@DIGEST without a tag), and its
//     version range is removed, so that every strategy takes it as
//     written (pkg/cnab/extended_bundle.go ResolveVersion: no range and a
//     tag; ResolveVersionv2: no version and a tag or digest); Porter then
//     pulls it from the mirror (prepareDependency pulls dep.Reference);
//   - each invocation and component image the lock records becomes
//     MIRROR_REPO@DIGEST, the bundle's own mirror repository, where the
//     image was mirrored (relocation-mapping.json says the same).
//
// A dependency the lock did not resolve (interface-only, chosen by `use:`
// under another name) is left as written.
func mirrorBundle(raw []byte, l *lock.Lock, p *lock.Package, mirrorOf map[string]string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("bundle.json: %w", err)
	}
	ownRepo := mirrorOf[p.Source+"@"+p.Digest]
	imageOf := map[string]string{}
	for _, im := range p.Images {
		if ownRepo != "" && im.Digest != "" {
			imageOf[im.Ref] = ownRepo + "@" + im.Digest
		}
	}
	rewriteImage := func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ref, ok := m["image"].(string); ok && imageOf[ref] != "" {
			m["image"] = imageOf[ref]
		}
	}
	if list, ok := doc["invocationImages"].([]any); ok {
		for _, v := range list {
			rewriteImage(v)
		}
	}
	if images, ok := doc["images"].(map[string]any); ok {
		for _, v := range images {
			rewriteImage(v)
		}
	}
	depRef := map[string]string{}
	for _, d := range p.Dependencies {
		if d.Role != "" {
			continue
		}
		src, dg, _ := strings.Cut(d.Resolved, "@")
		repo := mirrorOf[d.Resolved]
		if repo == "" {
			continue
		}
		ref := repo + "@" + dg
		if t := l.PackageAt(src, dg); t != nil && t.Version != "" {
			ref = repo + ":" + t.Version + "@" + dg
		}
		depRef[d.Name] = ref
	}
	custom, _ := doc["custom"].(map[string]any)
	for _, key := range []string{CustomDependenciesV1, CustomDependenciesV2} {
		deps, _ := custom[key].(map[string]any)
		requires, _ := deps["requires"].(map[string]any)
		for name, v := range requires {
			d, ok := v.(map[string]any)
			if !ok || depRef[name] == "" {
				continue
			}
			d["bundle"] = depRef[name]
			delete(d, "version")
		}
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bundle.json: %w", err)
	}
	return append(out, '\n'), nil
}

// Wiring returns the wiring of b's v2 dependencies
// (`org.getporter.dependencies@v2`), sorted by dependency name, leaving
// out those that wire nothing. Porter's v2 Dependency (getporter/porter
// pkg/cnab/extensions/dependencies/v2/types.go) holds it as maps of a
// name to a template, which pkg/cnab/config-adapter/adapter.go copies
// from porter.yaml's `parameters`, `credentials` and `outputs`.
func (b *Bundle) Wiring() ([]install.Wiring, error) {
	d, names, err := b.requiresV2()
	if d == nil || err != nil {
		return nil, err
	}
	var out []install.Wiring
	for _, n := range names {
		r := d.Requires[n]
		w := install.Wiring{Dependency: n, Parameters: wiringSources(r.Parameters), Credentials: wiringSources(r.Credentials), Outputs: wiringSources(r.Outputs)}
		if w.Parameters != nil || w.Credentials != nil || w.Outputs != nil {
			out = append(out, w)
		}
	}
	return out, nil
}

// wiringSources reads one wiring section; nil when it is empty.
func wiringSources(m map[string]any) map[string]install.WiringSource {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]install.WiringSource, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			data, _ := json.Marshal(v)
			s = string(data)
		}
		out[k] = wiringSource(s)
	}
	return out
}

// wiringRef is Porter's dependencySourceWiringRegex (getporter/porter
// pkg/cnab/extensions/dependencies/v2/types.go): `bundle.parameters.P`,
// `bundle.credentials.C` or `bundle.dependencies.D.outputs.O`, with or
// without `${ }` around it.
var wiringRef = lazyregexp.New(`(\s*\$\{\s*)?bundle(\.dependencies\.([^.]+))?\.([^.]+)\.([^\s\}]+)(\s*\}\s*)?`)

// wiringSource reads a template as Porter's ParseAllDependencySources
// does (pkg/cnab/extensions/dependencies/v2/types.go): every reference in
// it, in order. A reference Porter refuses (the bundle's own output) and
// one of another kind are left out; a template without references is a
// literal value.
func wiringSource(template string) install.WiringSource {
	ws := install.WiringSource{Template: template}
	for _, m := range wiringRef.FindAllStringSubmatch(template, -1) {
		ref := install.WiringRef{Dependency: m[3]}
		switch m[4] {
		case "parameters":
			ref.Parameter = m[5]
		case "credentials":
			ref.Credential = m[5]
		case "outputs":
			if m[3] == "" {
				continue // "cannot pass the root bundle output to a dependency"
			}
			ref.Output = m[5]
		default:
			continue
		}
		ws.Sources = append(ws.Sources, ref)
	}
	return ws
}
