package helm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	helmchart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/provenance"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"

	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
)

// The tests below pin ferry's copy of Helm's repository-index rules
// (index.go) to Helm's own package, which tests may import: only the
// binary must not link it (internal/depcheck).

// TestMediaTypesAreHelms: the copied media types are Helm's.
func TestMediaTypesAreHelms(t *testing.T) {
	for _, c := range []struct{ ours, helms string }{
		{ConfigMediaType, registry.ConfigMediaType},
		{ChartLayerMediaType, registry.ChartLayerMediaType},
		{ProvLayerMediaType, registry.ProvLayerMediaType},
		{LegacyChartLayerMediaType, registry.LegacyChartLayerMediaType},
	} {
		if c.ours != c.helms {
			t.Errorf("media type %q, Helm has %q", c.ours, c.helms)
		}
	}
}

// helmLoad loads data with Helm's repo.LoadIndexFile, unwrapping the
// error's file name as parseIndex's callers do.
func helmLoad(t *testing.T, data []byte) (*repo.IndexFile, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	idx, err := repo.LoadIndexFile(p)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
	}
	return idx, err
}

// TestLoadIndexMatchesHelm: every index is read as Helm reads it: the
// same error, or the same entries in the same order (compared as the
// marshalled index, so every field counts).
func TestLoadIndexMatchesHelm(t *testing.T) {
	const entry = `    - apiVersion: v2
      name: %s
      version: %s
      urls: [%s-%s.tgz]
      digest: abc
      created: "2024-01-02T03:04:05Z"
`
	tests := []struct {
		name, index string
		wantErr     bool
	}{
		{name: "empty", index: "", wantErr: true},
		{name: "no apiVersion", index: "entries: {}\n", wantErr: true},
		{name: "not yaml", index: "{{{", wantErr: true},
		{name: "unknown top-level field (strict)", index: "apiVersion: v1\nentries: {}\nsurprise: 1\n", wantErr: true},
		{name: "unknown entry field (strict)", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      version: 1.0.0\n      surprise: 1\n", wantErr: true},
		{name: "minimal", index: "apiVersion: v1\nentries: {}\n"},
		{name: "unsorted versions, non-SemVer last", index: "apiVersion: v1\ngenerated: \"2024-01-01T00:00:00Z\"\nentries:\n  nginx:\n" +
			fmt.Sprintf(entry, "nginx", "1.2.0", "nginx", "1.2.0") +
			fmt.Sprintf(entry, "nginx", "not-semver", "nginx", "x") +
			fmt.Sprintf(entry, "nginx", "1.10.0", "nginx", "1.10.0") +
			fmt.Sprintf(entry, "nginx", "1.10.0-rc.1", "nginx", "rc") +
			fmt.Sprintf(entry, "nginx", "v2.0.0", "nginx", "v2") +
			fmt.Sprintf(entry, "nginx", "1.2.0+build.5", "nginx", "b5")},
		{name: "null entry dropped", index: "apiVersion: v1\nentries:\n  a:\n    - null\n" + fmt.Sprintf(entry, "a", "1.0.0", "a", "1")},
		{name: "invalid entry dropped (no version)", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      urls: [a.tgz]\n" + fmt.Sprintf(entry, "a", "1.0.0", "a", "1")},
		{name: "invalid entry dropped (bad name)", index: "apiVersion: v1\nentries:\n  a:\n    - name: ../a\n      version: 1.0.0\n"},
		{name: "invalid entry dropped (bad type)", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      version: 1.0.0\n      type: weird\n"},
		{name: "duplicate dependency alias kept", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      version: 1.0.0\n      dependencies:\n        - name: b\n          version: 1.0.0\n        - name: b\n          version: 2.0.0\n"},
		{name: "apiVersion defaulted to v1", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      version: 1.0.0\n      urls: [https://example.com/a-1.0.0.tgz]\n"},
		{name: "deprecated fields accepted", index: "apiVersion: v1\nentries:\n  a:\n    - name: a\n      version: 1.0.0\n      checksum: x\n      engine: gotpl\n      tillerVersion: '>2'\n      url: a.tgz\n      removed: true\n"},
		{name: "chartmuseum serverInfo, annotations, publicKeys", index: "apiVersion: v1\nserverInfo:\n  contextPath: /v1/helm\nannotations:\n  k: v\npublicKeys: [abc]\nentries:\n  a:\n" + fmt.Sprintf(entry, "a", "1.0.0", "a", "1")},
		{name: "JSON", index: `{"apiVersion":"v1","entries":{"a":[{"name":"a","version":"0.1.0","urls":["a.tgz"]},{"name":"a","version":"0.2.0","urls":["b.tgz"],"unknown":1}]}}`},
		{name: "JSON without apiVersion", index: `{"entries":{}}`, wantErr: true},
		{name: "metadata missing", index: "apiVersion: v1\nentries:\n  a:\n    - urls: [a.tgz]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			helmIdx, helmErr := helmLoad(t, []byte(tt.index))
			ours, err := loadIndex([]byte(tt.index), "index.yaml")
			if (helmErr != nil) != tt.wantErr {
				t.Fatalf("Helm's error %v, test expects error %v", helmErr, tt.wantErr)
			}
			if (err != nil) != (helmErr != nil) || (err != nil && err.Error() != helmErr.Error()) {
				t.Fatalf("error %v, Helm's %v", err, helmErr)
			}
			if err != nil {
				return
			}
			want, err := yaml.Marshal(helmIdx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ours.marshal()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("index read as\n%s\nHelm reads\n%s", got, want)
			}
		})
	}
}

// TestServedIndexMatchesHelm: an index built and marshalled by ferry's
// type has the bytes of the same index built with Helm's repo.IndexFile.
func TestServedIndexMatchesHelm(t *testing.T) {
	created := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	metas := []*chart.Metadata{
		{APIVersion: "v2", Name: "a", Version: "1.0.0", Description: "first", Annotations: map[string]string{"x": "y"}},
		{APIVersion: "v2", Name: "a", Version: "1.10.0", AppVersion: "2", Maintainers: []*chart.Maintainer{{Name: "m", Email: "m@example.com"}}},
		{APIVersion: "v2", Name: "a", Version: "1.2.0+meta"},
		{APIVersion: "v1", Name: "b", Version: "0.1.0", Keywords: []string{"k"}, Dependencies: []*chart.Dependency{{Name: "c", Version: "1.x", Repository: "https://example.com"}}},
	}
	ours := newIndexFile()
	helms := repo.NewIndexFile()
	ours.Generated, helms.Generated = created, created
	for i, m := range metas {
		file := m.Name + "-" + m.Version + ".tgz"
		digest := string(rune('a'+i)) + "bc"
		ours.Entries[m.Name] = append(ours.Entries[m.Name], &chartVersion{Metadata: m, URLs: []string{file}, Created: created, Digest: digest})
		helms.Entries[m.Name] = append(helms.Entries[m.Name], &repo.ChartVersion{Metadata: asHelms[*helmchart.Metadata](t, m), URLs: []string{file}, Created: created, Digest: digest})
	}
	ours.sortEntries()
	helms.SortEntries()
	got, err := ours.marshal()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "index.yaml")
	if err := helms.WriteFile(p, 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("index\n%s\nHelm writes\n%s", got, want)
	}
}

// TestResolveReferenceURLMatchesHelm: chart URLs resolve as Helm
// resolves them.
func TestResolveReferenceURLMatchesHelm(t *testing.T) {
	tests := []struct{ base, ref string }{
		{"https://charts.example.com/stable", "nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable/", "nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable//", "nginx-1.0.0.tgz"},
		{"https://charts.example.com", "nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable", "/other/nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable", "../nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable", "https://cdn.example.com/nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable?token=abc", "nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable?token=abc", "nginx-1.0.0.tgz?other=1"},
		{"https://charts.example.com/a%2Fb", "nginx-1.0.0.tgz"},
		{"https://charts.example.com/stable", "sub/dir/nginx 1.0.0.tgz"},
		{"https://charts.example.com/stable", "index.yaml"},
		{"https://charts.example.com/stable", "%zz"},
		{"://bad", "nginx.tgz"},
		{"https://user:pass@charts.example.com/stable", "nginx.tgz"},
	}
	for _, tt := range tests {
		got, err := resolveReferenceURL(tt.base, tt.ref)
		want, helmErr := repo.ResolveReferenceURL(tt.base, tt.ref)
		if got != want || (err == nil) != (helmErr == nil) || (err != nil && err.Error() != helmErr.Error()) {
			t.Errorf("resolveReferenceURL(%q, %q) = %q, %v; Helm: %q, %v", tt.base, tt.ref, got, err, want, helmErr)
		}
	}
}

// TestHashReqIsHelms: the Chart.lock digest is Helm's: provenance.Digest
// of the JSON of the requested and locked dependencies
// (internal/resolver/resolver.go HashReq).
func TestHashReqIsHelms(t *testing.T) {
	tests := [][2][]*chart.Dependency{
		{nil, nil},
		{{{Name: "a", Version: "1.x", Repository: "https://example.com"}}, {{Name: "a", Version: "1.2.3", Repository: "https://example.com"}}},
		{{{Name: "b", Version: "~2", Repository: "oci://r.example.com/c", Alias: "bee", Condition: "b.enabled"}}, nil},
	}
	for _, tt := range tests {
		got, err := hashReq(tt[0], tt[1])
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(asHelms[[2][]*helmchart.Dependency](t, tt))
		if err != nil {
			t.Fatal(err)
		}
		want, err := provenance.Digest(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if got != "sha256:"+want {
			t.Errorf("hashReq = %s, Helm's digest sha256:%s", got, want)
		}
	}
}

// asHelms converts v, a value of ferry's fork of Helm's chart types
// (internal/forked/helm), to the same value of Helm's own type T, through
// JSON (the two have the same fields and tags: internal/forked/helm's
// tests hold the fork to Helm), for tests that hand it to Helm.
func asHelms[T any](t *testing.T, v any) T {
	t.Helper()
	var out T
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
