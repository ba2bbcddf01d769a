package kudo

import (
	"slices"
	"testing"
)

func TestImages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		params   []Parameter
		template string
		want     []string
		warnings int
	}{
		{name: "params and metadata", params: []Parameter{{Name: "REPO", Default: "ghcr.io/acme/app"}}, template: "image: {{ .Params.REPO }}:{{ .AppVersion }}\n", want: []string{"ghcr.io/acme/app:1.0.0"}},
		{name: "sprig", params: []Parameter{{Name: "TAG"}}, template: "spec:\n  containers:\n    - image: {{ .Params.TAG | default \"2.0\" | printf \"nginx:%s\" | quote }}\n", want: []string{"nginx:2.0"}},
		{name: "several documents", template: "image: a:1\n---\nlist:\n  - image: b:2\n  - name: c\n", want: []string{"a:1", "b:2"}},
		{name: "not a string", template: "image:\n  repository: x\n", want: nil},
		{name: "missing parameter", template: "image: busybox:1.36\nx: {{ .Params.NOPE }}\n", want: []string{"busybox:1.36"}, warnings: 1},
		{name: "invalid YAML once rendered", template: "image: redis:7\n  bad: [\n", want: []string{"redis:7"}, warnings: 1},
		{name: "templated image not rendered", template: "image: {{ .Pipes.x }}\n", want: nil, warnings: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Package{Operator: OperatorFile{Name: "app", AppVersion: "1.0.0", OperatorVersion: "0.1.0"}, Params: ParamsFile{Parameters: tc.params}, Templates: map[string]string{"t.yaml": tc.template}}
			uses, warnings := Images(p, "")
			var got []string
			for _, u := range uses {
				got = append(got, u.Ref)
			}
			if !slices.Equal(got, tc.want) || len(warnings) != tc.warnings {
				t.Fatalf("images = %q, warnings %q; want %q and %d warnings", got, warnings, tc.want, tc.warnings)
			}
		})
	}
}
