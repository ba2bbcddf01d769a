package trust_test

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/trust"
)

// TestDefault pins trust.default: what happens to the packages no rule
// matches (PRODUCT.md, Trust): warn once any rule exists, require (exit
// code 3 naming them), allow (silent); a policy with no rule and no
// default allows everything.
func TestDefault(t *testing.T) {
	dir := t.TempDir()
	writeKey(t, dir, "a.pub")
	rule := trust.RuleConfig{Match: "r.example/acme/", Keys: []string{"a.pub"}}
	catchAll := trust.RuleConfig{Match: "", Keys: []string{"a.pub"}}
	pkgs := []*lock.Package{
		{Source: "r.example/acme/app", Digest: "sha256:aa"},
		{Source: "r.example/beta/db", Digest: "sha256:bb"},
		{Source: "r.example/gamma/cache", Digest: "sha256:cc"},
		{Source: "r.example/beta/db", Digest: "sha256:bb"}, // listed once
	}
	both := []string{"r.example/beta/db@sha256:bb", "r.example/gamma/cache@sha256:cc"}
	tests := []struct {
		name        string
		cfg         *trust.Config
		verifyKey   bool
		wantDefault string
		unmatched   []string
		code        int // of CheckDefault's error; 0: none
		badInput    string
	}{
		{name: "no trust section", cfg: nil, wantDefault: trust.DefaultAllow},
		{name: "rules, no default: warn", cfg: &trust.Config{Rules: []trust.RuleConfig{rule}}, wantDefault: trust.DefaultWarn, unmatched: both},
		{name: "warn", cfg: &trust.Config{Default: "warn", Rules: []trust.RuleConfig{rule}}, wantDefault: trust.DefaultWarn, unmatched: both},
		{name: "require", cfg: &trust.Config{Default: "require", Rules: []trust.RuleConfig{rule}}, wantDefault: trust.DefaultRequire, unmatched: both, code: exitcode.Mismatch},
		{name: "allow", cfg: &trust.Config{Default: "allow", Rules: []trust.RuleConfig{rule}}, wantDefault: trust.DefaultAllow},
		{name: "require, catch-all rule", cfg: &trust.Config{Default: "require", Rules: []trust.RuleConfig{rule, catchAll}}, wantDefault: trust.DefaultRequire},
		{name: "require, --verify-key covers the rest", cfg: &trust.Config{Default: "require", Rules: []trust.RuleConfig{rule}}, verifyKey: true, wantDefault: trust.DefaultRequire},
		{name: "require, no rule: every package", cfg: &trust.Config{Default: "require"}, wantDefault: trust.DefaultRequire,
			unmatched: []string{"r.example/acme/app@sha256:aa", "r.example/beta/db@sha256:bb", "r.example/gamma/cache@sha256:cc"}, code: exitcode.Mismatch},
		{name: "unknown default", cfg: &trust.Config{Default: "deny", Rules: []trust.RuleConfig{rule}}, badInput: `trust.default: "deny" is not one of require, warn, allow`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := trust.Options{Dir: dir}
			if tc.verifyKey {
				opts.VerifyKeys = []string{dir + "/a.pub"}
			}
			p, err := trust.New(tc.cfg, opts)
			if tc.badInput != "" {
				if err == nil || exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), tc.badInput) {
					t.Fatalf("err = %v (code %d), want exit 2 %q", err, exitcode.Of(err), tc.badInput)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Default != tc.wantDefault {
				t.Errorf("Default = %q, want %q", p.Default, tc.wantDefault)
			}
			un, err := p.CheckDefault(pkgs)
			var got []string
			for _, u := range un {
				got = append(got, u.String())
			}
			if strings.Join(got, " ") != strings.Join(tc.unmatched, " ") {
				t.Errorf("unmatched = %v, want %v", got, tc.unmatched)
			}
			if tc.code == 0 {
				if err != nil {
					t.Fatalf("CheckDefault: %v", err)
				}
				return
			}
			if err == nil || exitcode.Of(err) != tc.code {
				t.Fatalf("CheckDefault: err = %v (code %d), want exit %d", err, exitcode.Of(err), tc.code)
			}
			for _, u := range tc.unmatched {
				if !strings.Contains(err.Error(), u) {
					t.Errorf("error does not name %s:\n%v", u, err)
				}
			}
		})
	}
}
