package porter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
)

var _ install.Writer = Reader{}

// WriteInstall fills in the Wiring of every Porter bundle step of plan
// (plan.json): for each v2 dependency, the parameters and credentials the
// bundle passes it and the outputs it promotes from it, each with its
// template and the references in it (wiringSource). The bundle.json is
// read from the install's layout, where every blob was checked against
// its digest as it was fetched. It writes no file of its own.
func (Reader) WriteInstall(dir string, l *lock.Lock, plan *install.Plan) error {
	var store *oci.ReadOnlyStore
	ctx := context.Background()
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
		b, _, err := readBundle(ctx, content.Fetcher(store), desc, manifest)
		if err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
		if st.Wiring, err = b.Wiring(); err != nil {
			return fmt.Errorf("bundle %s@%s: %w", st.Source, st.Digest, err)
		}
	}
	return nil
}

// Wiring returns the wiring of b's v2 dependencies
// (`org.getporter.dependencies@v2`), sorted by dependency name, leaving
// out those that wire nothing. Porter's v2 Dependency (getporter/porter
// pkg/cnab/extensions/dependencies/v2/types.go) holds it as maps of a
// name to a template, which pkg/cnab/config-adapter/adapter.go copies
// from porter.yaml's `parameters`, `credentials` and `outputs`.
func (b *Bundle) Wiring() ([]install.Wiring, error) {
	raw := b.custom(CustomDependenciesV2)
	if raw == nil {
		return nil, nil
	}
	var d depsV2
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("bundle.json: custom.%s: %w", CustomDependenciesV2, err)
	}
	names := make([]string, 0, len(d.Requires))
	for n := range d.Requires {
		names = append(names, n)
	}
	sort.Strings(names)
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
var wiringRef = regexp.MustCompile(`(\s*\$\{\s*)?bundle(\.dependencies\.([^.]+))?\.([^.]+)\.([^\s\}]+)(\s*\}\s*)?`)

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
