package mixin

import (
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestLockedYAML(t *testing.T) {
	l := Locked{
		Name:       "exec",
		Feed:       "https://cdn.porter.sh/mixins/atom.xml",
		Constraint: "1.x",
		Version:    "v1.2.3",
		Mirror:     "registry.internal/mirror/porter-mixins/exec@sha256:9a1b",
		Binaries: map[string]Binary{
			"exec-linux-amd64":  {Digest: "sha256:77aa", Size: 48211, URL: "https://cdn.porter.sh/mixins/v1.2.3/exec-linux-amd64"},
			"exec-darwin-arm64": {Digest: "sha256:03fe", Size: 47720, URL: "https://cdn.porter.sh/mixins/v1.2.3/exec-darwin-arm64"},
		},
	}
	out, err := yaml.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	want := `name: exec
feed: https://cdn.porter.sh/mixins/atom.xml
constraint: 1.x
version: v1.2.3
mirror: registry.internal/mirror/porter-mixins/exec@sha256:9a1b
binaries:
    exec-darwin-arm64:
        digest: sha256:03fe
        size: 47720
        url: https://cdn.porter.sh/mixins/v1.2.3/exec-darwin-arm64
    exec-linux-amd64:
        digest: sha256:77aa
        size: 48211
        url: https://cdn.porter.sh/mixins/v1.2.3/exec-linux-amd64
`
	if string(out) != want {
		t.Errorf("yaml:\n%s\nwant:\n%s", out, want)
	}
	var back Locked
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if back.Binaries["exec-linux-amd64"].Size != 48211 || back.Mirror != l.Mirror {
		t.Errorf("round trip = %+v", back)
	}
	l.Constraint, l.Mirror = "", ""
	out, _ = yaml.Marshal(l)
	if strings.Contains(string(out), "constraint") || strings.Contains(string(out), "mirror") {
		t.Errorf("empty constraint and mirror not omitted:\n%s", out)
	}
}

func TestParseBinaryName(t *testing.T) {
	tests := []struct {
		mixin, file  string
		goos, goarch string
		ok           bool
	}{
		{"exec", "exec-linux-amd64", "linux", "amd64", true},
		{"exec", "exec-windows-amd64.exe", "windows", "amd64", true},
		{"az-cli", "az-cli-darwin-arm64", "darwin", "arm64", true},
		{"exec", "exec-windows-amd64", "", "", false},
		{"exec", "exec-linux-amd64.exe", "", "", false},
		{"exec", "helm-linux-amd64", "", "", false},
		{"exec", "exec-linux", "", "", false},
		{"exec", "exec-linux-amd64-extra", "", "", false},
		{"exec", "exec-Linux-amd64", "", "", false},
		{"exec", "exec-linux-amd64/../x", "", "", false},
	}
	for _, tt := range tests {
		goos, goarch, err := ParseBinaryName(tt.mixin, tt.file)
		if (err == nil) != tt.ok || goos != tt.goos || goarch != tt.goarch {
			t.Errorf("ParseBinaryName(%q, %q) = %q, %q, %v", tt.mixin, tt.file, goos, goarch, err)
		}
	}
}

func TestSafeJoin(t *testing.T) {
	root := filepath.Join(t.TempDir(), "porter-home")
	tests := []struct {
		elems   []string
		want    string
		wantErr string
	}{
		{[]string{"mixins", "exec", "exec"}, filepath.Join(root, "mixins", "exec", "exec"), ""},
		{[]string{"mixins", "exec", "exec.exe"}, filepath.Join(root, "mixins", "exec", "exec.exe"), ""},
		{[]string{"mixins", "..", "x"}, "", "would escape"},
		{[]string{"mixins", "../../etc", "passwd"}, "", "path separator"},
		{[]string{"mixins", "/etc", "passwd"}, "", "path separator"},
		{[]string{"mixins", `..\..\x`, "y"}, "", "path separator"},
		{[]string{"mixins", "C:x", "y"}, "", "colon"},
		{[]string{"mixins", "", "y"}, "", "empty name"},
		{[]string{"mixins", ".", "y"}, "", "would escape"},
		{[]string{"mixins", "a\x00b", "y"}, "", "control character"},
	}
	for _, tt := range tests {
		got, err := SafeJoin(root, tt.elems...)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("SafeJoin(%q) = %q, %v; want error %q", tt.elems, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SafeJoin(%q) = %q, %v; want %q", tt.elems, got, err, tt.want)
		}
	}
}

func FuzzSafeJoin(f *testing.F) {
	for _, s := range []string{"exec", "..", "../x", "/abs", `a\b`, "a/../..", ".", "", "x.exe", "C:", "\x00"} {
		f.Add(s, "file")
	}
	root := filepath.Join(f.TempDir(), "home")
	f.Fuzz(func(t *testing.T, name, file string) {
		p, err := SafeJoin(root, "mixins", name, file)
		if err != nil {
			return
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			t.Fatalf("SafeJoin(%q, %q) = %q escapes %q", name, file, p, root)
		}
		if filepath.Dir(filepath.Dir(p)) != filepath.Join(root, "mixins") {
			t.Fatalf("SafeJoin(%q, %q) = %q is not two levels below mixins", name, file, p)
		}
	})
}
