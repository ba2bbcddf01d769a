// Package trust is ferry's signature policy: ferry.yaml's `trust:` rules
// and the --verify-key and --trusted-root flags. `ferry lock` and `ferry
// mirror` check every package of the closure against it before anything is
// written or copied, and the lock records, per package, the signatures,
// attestations and SBOMs found at the source with the rule that verified
// each (Check); `ferry verify` and `ferry install` check the mirror against
// exactly that record (CheckMirror).
//
// The ferry.yaml section takes two shapes. The full one:
//
//	trust:
//	  trustedRoot: trusted_root.json   # for keyless, offline
//	  default: warn                    # packages no rule matches: warn | require | allow
//	  rules:
//	    - match: ghcr.io/acme/         # source prefix; longest match wins
//	      keys: [keys/acme.pub]        # any of these
//	      keyless:                     # and/or Sigstore identities
//	        - issuer: https://token.actions.githubusercontent.com
//	          subjectRegexp: ^https://github.com/acme/.*
//	      required: true               # unsigned is an error
//
// and, when there is no trustedRoot nor default, a plain list of rules
// (`trust: [{match: ..., keys: [...]}]`). Key and trustedRoot paths are
// relative to the directory of ferry.yaml. `default` says what happens to
// the packages no rule matches (CheckDefault): warn (the default once any
// rule exists: they are listed in the output and in -o json), require
// (exit code 3 naming them) or allow (carried without a word).
package trust

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/forked/sigstore-go/pkg/root"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/signature"
)

// FlagRule is the name recorded in the lock for the rule --verify-key
// makes.
const FlagRule = "--verify-key"

// CatchAllRule is the name recorded in the lock for a ferry.yaml rule
// whose match is empty (it covers every source).
const CatchAllRule = "*"

// Identity is a Sigstore keyless identity: the OIDC issuer and the
// certificate's subject, exactly or by a regular expression.
type Identity struct {
	Issuer        string `yaml:"issuer" json:"issuer"`
	Subject       string `yaml:"subject,omitempty" json:"subject,omitempty"`
	SubjectRegexp string `yaml:"subjectRegexp,omitempty" json:"subjectRegexp,omitempty"`
}

// RuleConfig is one rule as ferry.yaml writes it.
type RuleConfig struct {
	// Match is a source prefix ("ghcr.io/acme/"); empty matches every
	// source.
	Match string `yaml:"match" json:"match"`
	// Keys are cosign public key files; a signature verifying with any of
	// them passes.
	Keys []string `yaml:"keys,omitempty" json:"keys,omitempty"`
	// Keyless are Sigstore identities; a signature by any of them passes.
	Keyless []Identity `yaml:"keyless,omitempty" json:"keyless,omitempty"`
	// Required makes an unsigned package an error.
	Required bool `yaml:"required,omitempty" json:"required,omitempty"`
	// Attestations are the attestations the package must carry, by
	// predicate type (see AttestationConfig).
	Attestations []AttestationConfig `yaml:"attestations,omitempty" json:"attestations,omitempty"`
	// Provenance asks for the package format's own provenance file (a
	// Helm chart's .prov) signed by a key of a keyring.
	Provenance *ProvenanceConfig `yaml:"provenance,omitempty" json:"provenance,omitempty"`
}

// Config is ferry.yaml's `trust:` section.
type Config struct {
	// TrustedRoot is a Sigstore trusted_root.json, for keyless
	// verification offline.
	TrustedRoot string `yaml:"trustedRoot,omitempty" json:"trustedRoot,omitempty"`
	// Default is what happens to the packages no rule matches:
	// DefaultWarn (when empty and there are rules), DefaultRequire or
	// DefaultAllow.
	Default string `yaml:"default,omitempty" json:"default,omitempty"`
	// Rules are the rules, in any order: the longest match applies.
	Rules []RuleConfig `yaml:"rules,omitempty" json:"rules,omitempty"`
}

// fileLines turns the line numbers of a type error from decoding the
// section on its own (line 1: its first line) into the file's, the
// section starting on line first.
func fileLines(err error, first int) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || first <= 1 {
		return err
	}
	out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
	for i, e := range te.Errors {
		if rest, ok := strings.CutPrefix(e, "line "); ok {
			if num, msg, ok := strings.Cut(rest, ": "); ok {
				if line, serr := strconv.Atoi(num); serr == nil {
					e = fmt.Sprintf("line %d: %s", line+first-1, msg)
				}
			}
		}
		out.Errors[i] = e
	}
	return out
}

// UnmarshalYAML reads either shape of the section, a mapping
// {trustedRoot, default, rules} or a plain list of rules, rejecting unknown fields.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	raw, err := yaml.Marshal(n)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	switch n.Kind {
	case yaml.SequenceNode:
		var rules []RuleConfig
		if err := dec.Decode(&rules); err != nil {
			return fmt.Errorf("trust: %w", fileLines(err, n.Line))
		}
		*c = Config{Rules: rules}
		return nil
	case yaml.MappingNode:
		type plain Config
		var p plain
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("trust: %w", fileLines(err, n.Line))
		}
		*c = Config(p)
		return nil
	}
	return fmt.Errorf("trust: line %d: want a list of rules or a mapping {trustedRoot, default, rules}", n.Line)
}

// Rule is a rule ready to check: its keys loaded, its identities compiled.
type Rule struct {
	// Name is what the lock records as the rule that verified a
	// signature: the match prefix, CatchAllRule for an empty one, or
	// FlagRule.
	Name string
	// Match is the source prefix the rule covers.
	Match    string
	Keys     []*signature.PublicKey
	Keyless  []KeylessIdentity
	Required bool
	// Attestations are the attestations the rule requires.
	Attestations []*AttestationRule
	// Keyring is the OpenPGP keyring file a package's provenance file
	// must verify with; empty when the rule asks for none.
	Keyring string
	// root is the policy's Sigstore trusted root, loaded once for the
	// rules that have keyless identities.
	root *root.TrustedRoot
}

// KeylessIdentity is a parsed keyless identity.
type KeylessIdentity struct {
	Identity
	// SubjectRE is SubjectRegexp compiled; nil when Subject is exact.
	SubjectRE *regexp.Regexp
}

// Policy is the trust policy of a run.
type Policy struct {
	// Rules are ferry.yaml's rules, then the --verify-key rule if any.
	Rules []*Rule
	// TrustedRoot is the Sigstore trusted root file for keyless rules.
	TrustedRoot string
	// Default is trust.default, resolved: DefaultWarn, DefaultRequire or
	// DefaultAllow (see CheckDefault).
	Default string
	root    *root.TrustedRoot
}

// Options are the command-line parts of a policy.
type Options struct {
	// Dir is the directory key and trustedRoot paths of the Config are
	// relative to (ferry.yaml's).
	Dir string
	// VerifyKeys are --verify-key files: one required rule covering every
	// source no ferry.yaml rule matches.
	VerifyKeys []string
	// TrustedRoot is --trusted-root; it wins over the Config's.
	TrustedRoot string
}

// New builds the policy of cfg (which may be nil) and opts. A key file
// that does not parse, a bad regular expression, a rule with nothing to
// verify with, or two rules with one match are bad input (exit code 2).
func New(cfg *Config, opts Options) (*Policy, error) {
	p := &Policy{}
	if cfg == nil {
		cfg = &Config{}
	}
	rel := func(path string) string {
		if path == "" || filepath.IsAbs(path) || opts.Dir == "" {
			return path
		}
		return filepath.Join(opts.Dir, path)
	}
	if cfg.TrustedRoot != "" {
		p.TrustedRoot = rel(cfg.TrustedRoot)
	}
	if opts.TrustedRoot != "" {
		p.TrustedRoot = opts.TrustedRoot
	}
	var err error
	if p.Default, err = parseDefault(cfg.Default, len(cfg.Rules)); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, rc := range cfg.Rules {
		what := fmt.Sprintf("trust rule %d (match %q)", i+1, rc.Match)
		if seen[rc.Match] {
			return nil, errkind.Markf(errkind.BadInput, "%s: another rule has the same match", what)
		}
		seen[rc.Match] = true
		if len(rc.Keys) == 0 && len(rc.Keyless) == 0 && ((rc.Provenance == nil && len(rc.Attestations) == 0) || rc.Required) {
			return nil, errkind.Markf(errkind.BadInput, "%s: give keys or keyless identities", what)
		}
		r := &Rule{Name: rc.Match, Match: rc.Match, Required: rc.Required}
		if r.Name == "" {
			r.Name = CatchAllRule
		}
		for _, k := range rc.Keys {
			key, err := signature.LoadPublicKey(rel(k))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			r.Keys = append(r.Keys, key)
		}
		for j, id := range rc.Keyless {
			ki, err := parseIdentity(id)
			if err != nil {
				return nil, errkind.Markf(errkind.BadInput, "%s: keyless[%d]: %w", what, j, err)
			}
			r.Keyless = append(r.Keyless, ki)
		}
		if r.Keyring, err = newProvenance(rc.Provenance, rel); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if r.Attestations, err = newAttestationRules(rc, r, func(k string) (*signature.PublicKey, error) { return signature.LoadPublicKey(rel(k)) }); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		p.Rules = append(p.Rules, r)
	}
	for _, r := range p.Rules {
		if !r.hasKeyless() {
			continue
		}
		if p.TrustedRoot == "" {
			return nil, errkind.Markf(errkind.BadInput, "trust rule %q: %w: trust.trustedRoot in ferry.yaml", r.Match, signature.ErrNoTrustedRoot)
		}
		if p.root == nil {
			tr, err := signature.LoadTrustedRoot(p.TrustedRoot)
			if err != nil {
				return nil, fmt.Errorf("trust: %w", err)
			}
			p.root = tr
		}
		r.root = p.root
	}
	if len(opts.VerifyKeys) > 0 {
		r := &Rule{Name: FlagRule, Match: "", Required: true}
		for _, k := range opts.VerifyKeys {
			key, err := signature.LoadPublicKey(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", FlagRule, err)
			}
			r.Keys = append(r.Keys, key)
		}
		p.Rules = append(p.Rules, r)
	}
	return p, nil
}

func parseIdentity(id Identity) (KeylessIdentity, error) {
	ki := KeylessIdentity{Identity: id}
	switch {
	case id.Issuer == "":
		return ki, errors.New("issuer is required")
	case id.Subject == "" && id.SubjectRegexp == "":
		return ki, errors.New("give subject or subjectRegexp")
	case id.Subject != "" && id.SubjectRegexp != "":
		return ki, errors.New("give subject or subjectRegexp, not both")
	case id.SubjectRegexp != "":
		re, err := regexp.Compile(id.SubjectRegexp)
		if err != nil {
			return ki, fmt.Errorf("subjectRegexp: %w", err)
		}
		ki.SubjectRE = re
	}
	return ki, nil
}

// Empty reports whether the policy has no rule: every package is carried
// unchecked.
func (p *Policy) Empty() bool { return p == nil || len(p.Rules) == 0 }

// Rule returns the rule that applies to source: the one whose match is the
// longest prefix of source; a ferry.yaml rule wins over the --verify-key
// rule on a tie. Nil when none matches: the package is carried unchecked.
func (p *Policy) Rule(source string) *Rule {
	if p == nil {
		return nil
	}
	var best *Rule
	for _, r := range p.Rules {
		if !strings.HasPrefix(source, r.Match) {
			continue
		}
		if best == nil || len(r.Match) > len(best.Match) {
			best = r
		}
	}
	return best
}
