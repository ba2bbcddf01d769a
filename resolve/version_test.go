package resolve

import (
	"errors"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
)

func TestParseTag(t *testing.T) {
	tests := []struct {
		tag  string
		want string // "" when not a full semantic version
	}{
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"1.2.1_build.5", "1.2.1+build.5"},
		{"v1.2.1_build.5", "1.2.1+build.5"},
		{"v1.3.0-rc.1", "1.3.0-rc.1"},
		{"v1.3.0-rc.1_b2", "1.3.0-rc.1+b2"},
		{"latest", ""},
		{"v1", ""},
		{"1.2", ""},
		{"v1.2.x", ""},
		{"main", ""},
		{"sha256-abc.sig", ""},
		{"vv1.2.3", ""},
		{"01.2.3", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			v := ParseTag(tt.tag)
			switch {
			case tt.want == "" && v != nil:
				t.Fatalf("ParseTag(%q) = %s, want nil", tt.tag, v)
			case tt.want != "" && v == nil:
				t.Fatalf("ParseTag(%q) = nil, want %s", tt.tag, tt.want)
			case v != nil && v.String() != tt.want:
				t.Fatalf("ParseTag(%q) = %s, want %s", tt.tag, v, tt.want)
			}
		})
	}
}

func TestPickTag(t *testing.T) {
	tags := []string{"v1.0.0", "v1.1.0", "v1.2.0", "1.2.1_build.5", "v1.3.0-rc.1", "v2.0.0", "latest", "main"}
	c := func(constraint string) requirement { return requirement{from: "p", constraint: constraint} }
	tests := []struct {
		name  string
		reqs  []requirement
		want  string
		unsat bool
	}{
		{"highest release", []requirement{c("*")}, "v2.0.0", false},
		{"no constraint at all takes the highest release", []requirement{{from: "p"}}, "v2.0.0", false},
		{"v prefix in constraint", []requirement{c("v1.x")}, "1.2.1_build.5", false},
		{"build metadata wins the diamond", []requirement{c(">=1.1 <2"), c("^1.2")}, "1.2.1_build.5", false},
		{"OR ranges", []requirement{c("~0.9 || ^1.0")}, "1.2.1_build.5", false},
		{"prerelease excluded by default", []requirement{c(">=1.2 <2")}, "1.2.1_build.5", false},
		{"prerelease when allowed", []requirement{{from: "p", constraint: ">=1.2 <2", prereleases: true}}, "v1.3.0-rc.1", false},
		{"prerelease named in the constraint", []requirement{c(">=1.3.0-rc.0 <2")}, "v1.3.0-rc.1", false},
		{"exact tag", []requirement{{from: "p", tag: "v1.1.0"}}, "v1.1.0", false},
		{"non-semver tag", []requirement{{from: "p", tag: "latest"}}, "latest", false},
		{"latest constraint", []requirement{c("latest")}, "v2.0.0", false},
		{"tag must meet constraint", []requirement{{from: "p", tag: "v1.1.0"}, c("^1.0")}, "v1.1.0", false},
		{"tag outside constraint", []requirement{{from: "p", tag: "v1.0.0"}, c("^2.0")}, "", true},
		{"two different tags", []requirement{{from: "p", tag: "v1.0.0"}, {from: "q", tag: "main"}}, "", true},
		{"missing tag", []requirement{{from: "p", tag: "v9.9.9-nope"}}, "", true},
		{"disjoint", []requirement{c("^1.0"), c(">=2.0 <3")}, "v2.0.0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pickTag("h/db", tt.reqs, tags)
			if tt.unsat {
				var ue *UnsatisfiableError
				if !errors.As(err, &ue) {
					t.Fatalf("pickTag = %q, %v; want an UnsatisfiableError", got, err)
				}
				if !strings.Contains(err.Error(), "(tags: v1.0.0 v1.1.0 v1.2.0 1.2.1_build.5 v1.3.0-rc.1 v2.0.0 latest main)") {
					t.Errorf("error does not list the tags in version order: %v", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("pickTag = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPickTagInvalidConstraint(t *testing.T) {
	_, err := pickTag("h/db", []requirement{{from: "h/app:v1", constraint: ">>1"}}, []string{"v1.0.0"})
	if err == nil || !strings.Contains(err.Error(), "h/app:v1") || !strings.Contains(err.Error(), ">>1") {
		t.Fatalf("err = %v, want it to name the parent and the constraint", err)
	}
}

func TestPinOf(t *testing.T) {
	a := digest.FromString("a")
	b := digest.FromString("b")
	tests := []struct {
		name    string
		reqs    []requirement
		want    digest.Digest
		wantErr bool
	}{
		{"none", []requirement{{from: "p", constraint: "^1"}}, "", false},
		{"one", []requirement{{from: "p", digest: a}, {from: "q", constraint: "^1"}}, a, false},
		{"agree", []requirement{{from: "p", digest: a}, {from: "q", digest: a}}, a, false},
		{"conflict", []requirement{{from: "p", digest: a}, {from: "q", digest: b}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pinOf("h/db", tt.reqs)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("pinOf = %s, %v", got, err)
			}
			if err != nil && (!strings.Contains(err.Error(), "p pins") || !strings.Contains(err.Error(), "q pins")) {
				t.Errorf("conflict does not name both parents: %v", err)
			}
		})
	}
}

func TestSatisfies(t *testing.T) {
	tests := []struct {
		tag  string
		reqs []requirement
		want bool
	}{
		{"v1.1.0", []requirement{{constraint: "^1.0"}}, true},
		{"v1.1.0", []requirement{{constraint: "^1.0"}, {constraint: ">=1.2"}}, false},
		{"v1.1.0", []requirement{{tag: "v1.1.0"}}, true},
		{"v1.1.0", []requirement{{tag: "v1.0.0"}}, false},
		{"v1.1.0", []requirement{{any: true}}, true},
		{"latest", []requirement{{constraint: "^1.0"}}, false},
	}
	for _, tt := range tests {
		if got := satisfies(tt.tag, tt.reqs); got != tt.want {
			t.Errorf("satisfies(%s, %+v) = %v, want %v", tt.tag, tt.reqs, got, tt.want)
		}
	}
}
