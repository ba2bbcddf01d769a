package helm

import (
	"reflect"
	"strings"
	"testing"
)

func TestValues(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		set     map[string]string
		want    map[string]any
		wantErr []string
	}{
		{
			name: "nothing",
			want: map[string]any{},
		},
		{
			name: "later file wins, maps merge",
			files: []string{
				"image: {repository: nginx, tag: '1.25'}\nreplicas: 1\n",
				"image: {tag: '1.26'}\nextra: [a]\n",
			},
			want: map[string]any{
				"image":    map[string]any{"repository": "nginx", "tag": "1.26"},
				"replicas": float64(1),
				"extra":    []any{"a"},
			},
		},
		{
			name:  "multi-document values file merges its documents",
			files: []string{"a: 1\nb: {c: x}\n---\nb: {d: w}\n"},
			want:  map[string]any{"a": float64(1), "b": map[string]any{"c": "x", "d": "w"}},
		},
		{
			name:  "set over files with Helm's --set syntax",
			files: []string{"image: {repository: nginx, tag: '1.25'}\n"},
			set: map[string]string{
				"image.tag":          "1.25.3",
				"replicas":           "3",
				"debug":              "true",
				"hosts":              "{a.example,b.example}",
				"containers[0].name": "app",
			},
			want: map[string]any{
				"image":      map[string]any{"repository": "nginx", "tag": "1.25.3"},
				"replicas":   int64(3),
				"debug":      true,
				"hosts":      []any{"a.example", "b.example"},
				"containers": []any{map[string]any{"name": "app"}},
			},
		},
		{
			name: "set applied in key order",
			// "a={x}" then "a[1]=y"; the other order would give [x].
			set:  map[string]string{"a[1]": "y", "a": "{x}"},
			want: map[string]any{"a": []any{"x", "y"}},
		},
		{
			name:    "bad values file",
			files:   []string{"a: 1\n", "a: [unclosed\n"},
			wantErr: []string{"values file 2"},
		},
		{
			name:    "bad set",
			set:     map[string]string{"a[x]": "1"},
			wantErr: []string{"set a[x]"},
		},
		{
			name:    "empty set key",
			set:     map[string]string{"": "1"},
			wantErr: []string{"empty key"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw [][]byte
			for _, f := range tt.files {
				raw = append(raw, []byte(f))
			}
			got, err := Values(raw, tt.set)
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Values: no error, got %v", got)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Values: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Values:\n got %#v\nwant %#v", got, tt.want)
			}
		})
	}
}
