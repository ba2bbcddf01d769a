package porter

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/ociref"
)

func TestQualify(t *testing.T) {
	// The mysql dependency of explain-dependencies.bundle.json, as written.
	b := readRealworld(t, "explain-dependencies.bundle.json")
	deps, err := b.Dependencies()
	if err != nil {
		t.Fatal(err)
	}
	var mysql string
	for _, d := range deps {
		if d.Name == "mysql" {
			mysql = d.Ref
		}
	}
	parent := ociref.Reference{Registry: "ghcr.io", Repository: "acme/root", Tag: "v1.0.0"}
	tests := []struct {
		name    string
		ref     string
		want    string
		wantErr string
	}{
		{name: "explain-dependencies mysql", ref: mysql, want: "docker.io/getporter/mysql:v0.1.3"},
		{name: "registry kept", ref: "localhost:5000/nginx:1.19", want: "localhost:5000/nginx:1.19"},
		{name: "official image", ref: "alpine", want: "docker.io/library/alpine"},
		{name: "not relative to the parent", ref: "mysql:v1", want: "docker.io/library/mysql:v1"},
		{name: "index.docker.io", ref: "index.docker.io/getporter/mysql:v0.1.3", want: "docker.io/getporter/mysql:v0.1.3"},
		{name: "digest", ref: "ghcr.io/acme/db@sha256:" + strings.Repeat("a", 64), want: "ghcr.io/acme/db@sha256:" + strings.Repeat("a", 64)},
		{name: "empty", ref: " ", wantErr: "porter:"},
		{name: "credentials", ref: "user:pw@ghcr.io/acme/db:v1", wantErr: "credentials"},
		{name: "upper case", ref: "Acme/db:v1", wantErr: "porter: reference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Reader{}.Qualify(tt.ref, parent)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("= %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != tt.want {
				t.Errorf("= %s, want %s", got, tt.want)
			}
		})
	}
}
