package trust

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
)

// What trust.default in ferry.yaml says happens to the packages no rule
// matches.
const (
	// DefaultWarn carries them unchecked and lists them in the output and
	// in -o json. It is the default once any rule exists.
	DefaultWarn = "warn"
	// DefaultRequire refuses them: exit code 3 naming each, before
	// anything is written or copied.
	DefaultRequire = "require"
	// DefaultAllow carries them unchecked without a word. It is the
	// default of a policy with no rule.
	DefaultAllow = "allow"
)

// parseDefault checks trust.default; given a policy with rules and no
// default, it is DefaultWarn, with none DefaultAllow.
func parseDefault(d string, rules int) (string, error) {
	switch d {
	case "":
		if rules > 0 {
			return DefaultWarn, nil
		}
		return DefaultAllow, nil
	case DefaultWarn, DefaultRequire, DefaultAllow:
		return d, nil
	}
	return "", errkind.Markf(errkind.BadInput, "trust.default: %q is not one of %s, %s, %s", d, DefaultRequire, DefaultWarn, DefaultAllow)
}

// Unmatched is a package no trust rule matches, as -o json lists it.
type Unmatched struct {
	Source string `json:"source"`
	Digest string `json:"digest"`
}

func (u Unmatched) String() string { return u.Source + "@" + u.Digest }

// Unmatched returns the packages of pkgs that no rule matches, sorted and
// without repeats, when the policy's default is warn or require; nil
// under allow (a policy with no rule and no default allows everything).
func (p *Policy) Unmatched(pkgs []*lock.Package) []Unmatched {
	if p == nil || p.Default == DefaultAllow || p.Default == "" {
		return nil
	}
	seen := map[string]bool{}
	var out []Unmatched
	for _, pkg := range pkgs {
		u := Unmatched{Source: pkg.Source, Digest: pkg.Digest}
		if p.Rule(pkg.Source) != nil || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// CheckDefault applies trust.default to pkgs: it returns the packages no
// rule matches (Unmatched) and, under require, an error naming each that
// exits with code 3.
func (p *Policy) CheckDefault(pkgs []*lock.Package) ([]Unmatched, error) {
	un := p.Unmatched(pkgs)
	if len(un) == 0 || p.Default != DefaultRequire {
		return un, nil
	}
	return un, errkind.Markf(errkind.Mismatch, "%d of %d packages match no trust rule (trust.default: require):\n%s", len(un), len(pkgs), UnmatchedList(un))
}

// UnmatchedList is un, one package a line.
func UnmatchedList(un []Unmatched) string {
	lines := make([]string, len(un))
	for i, u := range un {
		lines[i] = u.String()
	}
	return strings.Join(lines, "\n")
}

// UnmatchedWarning is the warning printed under trust.default: warn for
// the packages un; empty when there are none.
func UnmatchedWarning(un []Unmatched) string {
	if len(un) == 0 {
		return ""
	}
	return fmt.Sprintf("%d packages match no trust rule and are carried unchecked (trust.default: warn; set require to refuse them, allow to silence this): %s", len(un), strings.Join(strings.Split(UnmatchedList(un), "\n"), ", "))
}
