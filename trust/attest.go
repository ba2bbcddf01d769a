package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/signature"
)

// Predicate types by the names `cosign attest --type` and `cosign
// verify-attestation --type` take (sigstore/cosign v3.1.2
// cmd/cosign/cli/options/predicate.go PredicateTypeMap,
// d6d86c224e5899b54f56cbb063b79dc43abc11c2; the URIs are in-toto-golang's
// in_toto/attestations.go and slsa_provenance/*/provenance.go, and
// cosign's pkg/cosign/attestation). Any other type is given as its URI.
var predicateTypes = []struct{ name, uri string }{
	{"custom", "https://cosign.sigstore.dev/attestation/v1"},
	{"slsaprovenance", SLSAProvenanceV02},
	{"slsaprovenance02", SLSAProvenanceV02},
	{"slsaprovenance1", SLSAProvenanceV1},
	{"spdx", "https://spdx.dev/Document"},
	{"spdxjson", "https://spdx.dev/Document"},
	{"cyclonedx", "https://cyclonedx.org/bom"},
	{"link", "https://in-toto.io/Link/v1"},
	{"vuln", "https://cosign.sigstore.dev/attestation/vuln/v1"},
	{"openvex", "https://openvex.dev/ns"},
}

// SLSA provenance predicate types, the ones whose content (builderId,
// sourceRepository) a rule can check.
const (
	SLSAProvenanceV1  = "https://slsa.dev/provenance/v1"
	SLSAProvenanceV02 = "https://slsa.dev/provenance/v0.2"
)

// AttestationConfig is one attestation a rule requires, as ferry.yaml
// writes it (PRODUCT.md, Trust; the predicate type as cosign's --type or
// Kyverno's verifyImages[].attestations[].type may also name it):
//
//	attestations:
//	  - predicateType: https://slsa.dev/provenance/v1   # or type: slsaprovenance1
//	    keys: [keys/builder.pub]     # default: the rule's keys and keyless identities
//	    builderId: ^https://github.com/slsa-framework/slsa-github-generator/   # SLSA provenance only
//	    sourceRepository: github.com/acme/app                                 # SLSA provenance only
type AttestationConfig struct {
	// PredicateType is the predicate type URI.
	PredicateType string `yaml:"predicateType,omitempty" json:"predicateType,omitempty"`
	// Type is the predicate type as `cosign attest --type` names it
	// (slsaprovenance1, slsaprovenance02, spdx, cyclonedx, ...) or a URI;
	// give it or PredicateType.
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
	// Keys and Keyless sign the attestation; when both are empty, the
	// rule's own keys and identities do.
	Keys    []string   `yaml:"keys,omitempty" json:"keys,omitempty"`
	Keyless []Identity `yaml:"keyless,omitempty" json:"keyless,omitempty"`
	// BuilderID is a regular expression (Go syntax, unanchored: write ^
	// and $) the SLSA provenance's builder id must match
	// (runDetails.builder.id in v1, builder.id in v0.2, "@ref" included).
	BuilderID string `yaml:"builderId,omitempty" json:"builderId,omitempty"`
	// SourceRepository must be the repository the artifact was built
	// from (v1: buildDefinition.externalParameters.workflow.repository,
	// else the first resolvedDependencies uri; v0.2:
	// invocation.configSource.uri, else the first materials uri),
	// compared without "git+", the URL scheme, an "@ref" and ".git", as
	// slsa-verifier's --source-uri: github.com/acme/app matches
	// git+https://github.com/acme/app@refs/heads/main.
	SourceRepository string `yaml:"sourceRepository,omitempty" json:"sourceRepository,omitempty"`
}

// conditions are the checks on a SLSA provenance statement's content an
// attestation rule makes.
type conditions struct {
	builderID        *regexp.Regexp
	sourceRepository string
}

// AttestationRule is a required attestation, ready to check.
type AttestationRule struct {
	// PredicateType is the predicate type URI.
	PredicateType string
	// Keys and Keyless verify it (the rule's, when the config gave none).
	Keys       []*signature.PublicKey
	Keyless    []KeylessIdentity
	conditions conditions
}

// PredicateTypeURI returns the predicate type URI of a type as a rule
// writes it: a cosign --type name, or a URI as it is.
func PredicateTypeURI(typ string) (string, error) {
	for _, t := range predicateTypes {
		if t.name == typ {
			return t.uri, nil
		}
	}
	if !strings.Contains(typ, ":") {
		names := make([]string, 0, len(predicateTypes))
		for _, t := range predicateTypes {
			names = append(names, t.name)
		}
		sort.Strings(names)
		return "", fmt.Errorf("type %q is neither a predicate type URI nor one of %s", typ, strings.Join(names, ", "))
	}
	return typ, nil
}

// newAttestationRules builds the attestation rules of rc; load reads a key
// file relative to ferry.yaml's directory. Failures are bad input.
func newAttestationRules(rc RuleConfig, r *Rule, load func(string) (*signature.PublicKey, error)) ([]*AttestationRule, error) {
	var out []*AttestationRule
	for i, ac := range rc.Attestations {
		what := fmt.Sprintf("attestations[%d]", i)
		typ := ac.PredicateType
		switch {
		case ac.PredicateType != "" && ac.Type != "":
			return nil, errkind.Markf(errkind.BadInput, "%s: give predicateType or type, not both", what)
		case typ == "":
			typ = ac.Type
		}
		if typ == "" {
			return nil, errkind.Markf(errkind.BadInput, "%s: predicateType is required (a predicate type URI, or type: a cosign --type name)", what)
		}
		uri, err := PredicateTypeURI(typ)
		if err != nil {
			return nil, errkind.Markf(errkind.BadInput, "%s: %w", what, err)
		}
		a := &AttestationRule{PredicateType: uri}
		if ac.BuilderID != "" || ac.SourceRepository != "" {
			if uri != SLSAProvenanceV1 && uri != SLSAProvenanceV02 {
				return nil, errkind.Markf(errkind.BadInput, "%s: builderId and sourceRepository apply to SLSA provenance (%s, %s), not %s", what, SLSAProvenanceV1, SLSAProvenanceV02, uri)
			}
			if ac.BuilderID != "" {
				re, err := regexp.Compile(ac.BuilderID)
				if err != nil {
					return nil, errkind.Markf(errkind.BadInput, "%s: builderId: %w", what, err)
				}
				a.conditions.builderID = re
			}
			a.conditions.sourceRepository = ac.SourceRepository
		}
		for _, k := range ac.Keys {
			key, err := load(k)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			a.Keys = append(a.Keys, key)
		}
		for j, id := range ac.Keyless {
			ki, err := parseIdentity(id)
			if err != nil {
				return nil, errkind.Markf(errkind.BadInput, "%s: keyless[%d]: %w", what, j, err)
			}
			a.Keyless = append(a.Keyless, ki)
		}
		if len(a.Keys) == 0 && len(a.Keyless) == 0 {
			a.Keys, a.Keyless = r.Keys, r.Keyless
		}
		if len(a.Keys) == 0 && len(a.Keyless) == 0 {
			return nil, errkind.Markf(errkind.BadInput, "%s: give keys or keyless identities, here or on the rule", what)
		}
		out = append(out, a)
	}
	return out, nil
}

// signs reports whether the rule checks signatures: it has keys or
// keyless identities (a rule may ask for a provenance file alone).
func (r *Rule) signs() bool { return len(r.Keys) > 0 || len(r.Keyless) > 0 }

// hasKeyless reports whether any of the rule's attestations is checked
// against keyless identities (which need the trusted root).
func (r *Rule) hasKeyless() bool {
	if len(r.Keyless) > 0 {
		return true
	}
	for _, a := range r.Attestations {
		if len(a.Keyless) > 0 {
			return true
		}
	}
	return false
}

func (a *AttestationRule) verifier(r *Rule) *signature.Verifier {
	v := &signature.Verifier{Keys: a.Keys}
	if r.root != nil {
		v.TrustedRoot = r.root
	}
	for _, id := range a.Keyless {
		v.Identities = append(v.Identities, signature.Identity{Issuer: id.Issuer, Subject: id.Subject, SubjectRegexp: id.SubjectRegexp})
	}
	return v
}

// checkAttestations checks the attestations the rule requires of manifest
// d in repo. found is what Find discovered attached to d's graph when
// listed is set; otherwise d's referrers are listed. It returns why the
// rule's attestations fail, one reason per failing attestation (none when
// all pass), and the digests of the attestation manifests that verified.
//
// A required attestation passes as `cosign verify-attestation --type T
// --policy P` does (sigstore/cosign v3.1.2
// cmd/cosign/cli/verify/verify_attestation.go,
// d6d86c224e5899b54f56cbb063b79dc43abc11c2): at least one attestation of
// predicate type T verifies (signature.Verifier.VerifyAttestations: DSSE
// signature, in-toto payloadType, subject digest), and every verified one
// of that type meets the conditions; attestations of other predicate types
// play no part.
func (r *Rule) checkAttestations(ctx context.Context, repo signature.Repository, d digest.Digest, found []lock.Signature, listed bool) (whys []string, verified map[string]bool, err error) {
	verified = map[string]bool{}
	for _, a := range r.Attestations {
		atts, rejected, err := a.verifier(r).VerifyAttestations(ctx, repo, d, Referrers(found, d), listed)
		if err != nil {
			return nil, nil, fmt.Errorf("checking the attestations of %s: %w", d, err)
		}
		var matching []signature.Attestation
		var otherTypes []string
		for _, at := range atts {
			if at.Statement.PredicateType == a.PredicateType {
				matching = append(matching, at)
			} else {
				otherTypes = append(otherTypes, at.Statement.PredicateType)
			}
		}
		if len(matching) == 0 {
			whys = append(whys, fmt.Sprintf("attestation %s: %s", a.PredicateType, noneWhy(a.PredicateType, d, otherTypes, rejected)))
			continue
		}
		var bad []string
		for _, at := range matching {
			if why := a.conditions.check(at.Statement); why != "" {
				bad = append(bad, fmt.Sprintf("%s: %s", where(at), why))
			}
		}
		if len(bad) > 0 {
			whys = append(whys, fmt.Sprintf("attestation %s: %s", a.PredicateType, strings.Join(bad, "; ")))
			continue
		}
		for _, at := range matching {
			verified[at.Manifest.Digest.String()] = true
		}
	}
	return whys, verified, nil
}

// where names an attestation for messages.
func where(a signature.Attestation) string {
	if a.Kind == signature.KindAtt {
		return fmt.Sprintf("attestation manifest %s layer %s", a.Manifest.Digest, a.Layer)
	}
	return "referrer " + a.Manifest.Digest.String()
}

// noneWhy says why no attestation of predicate type pt verifies on d.
func noneWhy(pt string, d digest.Digest, otherTypes []string, rejected []signature.RejectedAttestation) string {
	var reasons []string
	for _, r := range rejected {
		// A layer or referrer that claims another predicate type is
		// not what the rule asks for; one that claims none may be.
		if r.PredicateType == "" || r.PredicateType == pt {
			reasons = append(reasons, r.String())
		}
	}
	if len(reasons) > 0 {
		return "none verifies: " + strings.Join(reasons, "; ")
	}
	if len(otherTypes) > 0 {
		sort.Strings(otherTypes)
		return fmt.Sprintf("missing: the attestations of %s that verify have predicate types %s", d, strings.Join(dedupe(otherTypes), ", "))
	}
	if len(rejected) > 0 {
		var others []string
		for _, r := range rejected {
			others = append(others, r.String())
		}
		return fmt.Sprintf("missing: none of the attestations of %s has this predicate type (%s)", d, strings.Join(others, "; "))
	}
	return fmt.Sprintf("missing: %s has no attestation (no %s tag and no Sigstore bundle referrer)", d, signature.AttestationTag(d))
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// check returns why st does not meet c; empty when it does or c is empty.
func (c conditions) check(st signature.Statement) string {
	if c.builderID == nil && c.sourceRepository == "" {
		return ""
	}
	var p slsaPredicate
	if err := json.Unmarshal(st.Predicate, &p); err != nil {
		return fmt.Sprintf("the predicate is not SLSA provenance: %v", err)
	}
	builder, source := p.builderID(st.PredicateType), p.sourceURI(st.PredicateType)
	var why []string
	if c.builderID != nil && (builder == "" || !c.builderID.MatchString(builder)) {
		if builder == "" {
			builder = "none"
		}
		why = append(why, fmt.Sprintf("builder id %s does not match %s", showRef(builder), showRef(c.builderID.String())))
	}
	if c.sourceRepository != "" && (source == "" || normalizeRepo(source) != normalizeRepo(c.sourceRepository)) {
		if source == "" {
			source = "none"
		}
		why = append(why, fmt.Sprintf("source repository %s is not %s", showRef(source), showRef(c.sourceRepository)))
	}
	return strings.Join(why, "; ")
}

// showRef writes a URL with an "@ref" suffix (a SLSA builder id
// "https://github.com/ORG/REPO/.github/workflows/W.yml@refs/tags/v1", a
// source "git+https://github.com/ORG/REPO@refs/heads/main") as "URL at
// ref": the CLI removes what looks like credentials from its messages
// (package redact), and a URL whose path is followed by "@refs/…" reads as
// one with a password holding '/'.
func showRef(s string) string {
	scheme := strings.Index(s, "://")
	at := strings.LastIndex(s, "@")
	if scheme < 0 || at < scheme {
		return s
	}
	return s[:at] + " at " + s[at+1:]
}

// normalizeRepo reduces a source URI to host/path: no "git+", URL scheme,
// "@ref", ".git" or trailing slash (slsa-verifier compares
// "git+https://"+--source-uri with the provenance's URI without its ref).
func normalizeRepo(s string) string {
	s = strings.TrimPrefix(s, "git+")
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if i := strings.LastIndex(s, "@"); i > 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	return s
}

// slsaPredicate holds the fields of SLSA provenance v1 and v0.2 that
// conditions read (slsa.dev/spec/v1.0/provenance, slsa.dev/provenance/v0.2).
type slsaPredicate struct {
	// v1
	BuildDefinition struct {
		ExternalParameters struct {
			Workflow struct {
				Repository string `json:"repository"`
			} `json:"workflow"`
		} `json:"externalParameters"`
		ResolvedDependencies []struct {
			URI string `json:"uri"`
		} `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
	RunDetails struct {
		Builder struct {
			ID string `json:"id"`
		} `json:"builder"`
	} `json:"runDetails"`
	// v0.2
	Builder struct {
		ID string `json:"id"`
	} `json:"builder"`
	Invocation struct {
		ConfigSource struct {
			URI string `json:"uri"`
		} `json:"configSource"`
	} `json:"invocation"`
	Materials []struct {
		URI string `json:"uri"`
	} `json:"materials"`
}

func (p slsaPredicate) builderID(pt string) string {
	if pt == SLSAProvenanceV1 {
		return p.RunDetails.Builder.ID
	}
	return p.Builder.ID
}

func (p slsaPredicate) sourceURI(pt string) string {
	if pt == SLSAProvenanceV1 {
		if u := p.BuildDefinition.ExternalParameters.Workflow.Repository; u != "" {
			return u
		}
		if len(p.BuildDefinition.ResolvedDependencies) > 0 {
			return p.BuildDefinition.ResolvedDependencies[0].URI
		}
		return ""
	}
	if u := p.Invocation.ConfigSource.URI; u != "" {
		return u
	}
	if len(p.Materials) > 0 {
		return p.Materials[0].URI
	}
	return ""
}

// errNoRegistry: a package outside any registry can carry no attestation.
var errNoRegistry = errors.New("the package is not in a registry, where attestations are attached")
