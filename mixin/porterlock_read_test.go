package mixin

import (
	"strings"
	"testing"
)

// TestPorterLocked pins when a porter.lock.yaml entry decides a mixin's
// version, following the Mixin Versioning proposal (getporter/proposals
// pep/002-mixin-versioning.md, "Porter Lockfile": each mixin's source,
// url, version and binary digests, which Porter installs as locked): for
// a porter.yaml's own request only, from the same source, while its
// version still satisfies the request (a stale entry is dropped, as a
// previous lock's is by keptVersion).
func TestPorterLocked(t *testing.T) {
	const feed = "https://cdn.porter.sh/mixins/atom.xml"
	pl := &PorterLockInput{Path: "app/porter.lock.yaml", Bundle: "app", Lock: PorterLock{Mixins: map[string]PorterLockMixin{
		"exec":  {Source: feed, Version: "v1.0.0"},
		"helm3": {Source: feed, Version: "v1.3.0-beta.1"},
	}}}
	tests := []struct {
		name string
		r    Request
		want string // "" for no entry
	}{
		{"porter.yaml entry, latest", Request{Name: "exec", Feed: feed, From: "ferry.yaml"}, "v1.0.0"},
		{"porter.yaml entry, range holds it", Request{Name: "exec", Constraint: "1.x", Feed: feed, From: "ferry.yaml"}, "v1.0.0"},
		{"range no longer holds it", Request{Name: "exec", Constraint: "2.x", Feed: feed, From: "ferry.yaml"}, ""},
		{"another source", Request{Name: "exec", Feed: "https://example.com/atom.xml", From: "ferry.yaml"}, ""},
		{"a bundle's request", Request{Name: "exec", Feed: feed, From: "r.io/app:v1"}, ""},
		{"not locked", Request{Name: "az", Feed: feed, From: "ferry.yaml"}, ""},
		{"a prerelease is not latest", Request{Name: "helm3", Feed: feed, From: "ferry.yaml"}, ""},
		{"a prerelease named exactly", Request{Name: "helm3", Constraint: "v1.3.0-beta.1", Feed: feed, From: "ferry.yaml"}, "v1.3.0-beta.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := porterLocked(pl, tt.r)
			if got := map[bool]string{true: e.Version, false: ""}[ok]; got != tt.want {
				t.Errorf("= %q, want %q", got, tt.want)
			}
		})
	}
	if _, ok := porterLocked(nil, tests[0].r); ok {
		t.Error("no porter.lock.yaml decided a version")
	}
}

// TestParsePorterLock: porter.lock.yaml as the proposal writes it reads;
// a mixin without a version or a binary without a sha256 digest is an
// error naming it.
func TestParsePorterLock(t *testing.T) {
	d := strings.Repeat("ab", 32)
	tests := []struct {
		name, in, wantErr string
	}{
		{"the proposal's shape", "mixins:\n  exec:\n    source: https://cdn.porter.sh/mixins/atom.xml\n    url: https://cdn.porter.sh/mixins/\n    version: v1.0.0\n    binaries:\n      exec-linux-amd64: {digest: sha256:" + d + "}\n", ""},
		{"bare hex, as the proposal's examples", "mixins:\n  exec:\n    version: v1.0.0\n    binaries:\n      exec-linux-amd64: {digest: " + d + "}\n", ""},
		{"no version", "mixins:\n  exec:\n    source: x\n", "mixin exec: no version"},
		{"bad digest", "mixins:\n  exec:\n    version: v1\n    binaries:\n      exec-linux-amd64: {digest: md5:00}\n", `binary exec-linux-amd64: digest "md5:00" is not sha256:HEX`},
		{"bad name", "mixins:\n  ../x:\n    version: v1\n", `mixin "../x"`},
		{"not YAML", "mixins: [", "porter.lock.yaml: yaml:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePorterLock([]byte(tt.in))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
