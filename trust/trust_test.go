package trust_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

func TestConfigShapes(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       trust.Config
		err        string
	}{
		{name: "plain list", yaml: "- match: a/\n  keys: [k.pub]\n  required: true\n",
			want: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"k.pub"}, Required: true}}}},
		{name: "mapping", yaml: "trustedRoot: root.json\nrules:\n- match: a/\n  keyless: [{issuer: https://i, subject: s}]\n",
			want: trust.Config{TrustedRoot: "root.json", Rules: []trust.RuleConfig{{Match: "a/", Keyless: []trust.Identity{{Issuer: "https://i", Subject: "s"}}}}}},
		{name: "unknown rule field", yaml: "- match: a/\n  key: k.pub\n", err: "field key not found"},
		{name: "unknown top field", yaml: "trustedroot: x\n", err: "field trustedroot not found"},
		{name: "scalar", yaml: "yes\n", err: "want a list of rules"},
		{name: "mapping with default", yaml: "default: require\nrules:\n- match: a/\n  keys: [k.pub]\n",
			want: trust.Config{Default: "require", Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"k.pub"}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c trust.Config
			err := yaml.Unmarshal([]byte(tc.yaml), &c)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			a, _ := yaml.Marshal(c)
			b, _ := yaml.Marshal(tc.want)
			if string(a) != string(b) {
				t.Errorf("got\n%s\nwant\n%s", a, b)
			}
		})
	}
}

// writeKey writes a fresh signer's public key to dir/name.
func writeKey(t *testing.T, dir, name string) *fixture.Cosign {
	t.Helper()
	s, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WritePublicKey(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewPolicy(t *testing.T) {
	dir := t.TempDir()
	writeKey(t, dir, "a.pub")
	if err := os.WriteFile(filepath.Join(dir, "bad.pub"), []byte("not a key\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  trust.Config
		opts trust.Options
		err  string
	}{
		{name: "key relative to dir", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"a.pub"}}}}},
		{name: "key that does not parse", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"bad.pub"}}}}, err: "not a PEM public key"},
		{name: "missing key", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"none.pub"}}}}, err: "none.pub"},
		{name: "nothing to verify with", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Required: true}}}, err: "give keys or keyless"},
		{name: "same match twice", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keys: []string{"a.pub"}}, {Match: "a/", Keys: []string{"a.pub"}}}}, err: "same match"},
		{name: "bad regexp", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keyless: []trust.Identity{{Issuer: "i", SubjectRegexp: "("}}}}}, err: "subjectRegexp"},
		{name: "subject and regexp", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keyless: []trust.Identity{{Issuer: "i", Subject: "s", SubjectRegexp: "s"}}}}}, err: "not both"},
		{name: "no issuer", cfg: trust.Config{Rules: []trust.RuleConfig{{Match: "a/", Keyless: []trust.Identity{{Subject: "s"}}}}}, err: "issuer is required"},
		{name: "bad --verify-key", opts: trust.Options{VerifyKeys: []string{filepath.Join(dir, "bad.pub")}}, err: "--verify-key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Dir = dir
			p, err := trust.New(&tc.cfg, tc.opts)
			if tc.err == "" {
				if err != nil || len(p.Rules) != len(tc.cfg.Rules) {
					t.Fatalf("policy %+v, err %v", p, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || exitcode.Of(err) != exitcode.Usage {
				t.Fatalf("err = %v (exit %d), want %q, exit 2", err, exitcode.Of(err), tc.err)
			}
		})
	}
}

func TestRuleLongestMatch(t *testing.T) {
	dir := t.TempDir()
	writeKey(t, dir, "k.pub")
	key := []string{"k.pub"}
	p, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{
		{Match: "ghcr.io/", Keys: key}, {Match: "ghcr.io/acme/", Keys: key}, {Match: "ghcr.io/acme/app", Keys: key},
	}}, trust.Options{Dir: dir, VerifyKeys: []string{filepath.Join(dir, "k.pub")}})
	if err != nil {
		t.Fatal(err)
	}
	for source, want := range map[string]string{
		"ghcr.io/acme/app":     "ghcr.io/acme/app",
		"ghcr.io/acme/db":      "ghcr.io/acme/",
		"ghcr.io/other/x":      "ghcr.io/",
		"docker.io/library/x":  trust.FlagRule,
		"ghcr.io/acme/app-ext": "ghcr.io/acme/app",
	} {
		if r := p.Rule(source); r == nil || r.Name != want {
			t.Errorf("Rule(%s) = %+v, want %s", source, r, want)
		}
	}
	noFlag, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{{Match: "ghcr.io/", Keys: key}}}, trust.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r := noFlag.Rule("docker.io/x"); r != nil {
		t.Errorf("unmatched source got rule %s", r.Name)
	}
}

// publisher is a source repository with one image.
type publisher struct {
	pkg  *lock.Package
	sign func(s *fixture.Cosign)
}

func TestCheck(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	dir := t.TempDir()
	acme, beta := writeKey(t, dir, "acme.pub"), writeKey(t, dir, "beta.pub")

	push := func(path string) publisher {
		name := reg.Host + "/" + path
		repo := registrytest.Repository(t, c, name)
		desc, err := fixture.PushImage(ctx, repo, path, 64)
		if err != nil {
			t.Fatal(err)
		}
		return publisher{
			pkg: &lock.Package{Source: name, Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size},
			sign: func(s *fixture.Cosign) {
				if _, err := s.SignImage(ctx, repo, name, desc.Digest); err != nil {
					t.Fatal(err)
				}
			},
		}
	}
	acmeApp, betaDB, betaWrong, loose, strict, keyless := push("acme/app"), push("beta/db"), push("beta/wrong"), push("loose/x"), push("strict/x"), push("sigstore/x")
	acmeApp.sign(acme)
	betaDB.sign(beta)
	betaWrong.sign(acme)
	keyless.sign(acme) // a key, where the rule trusts only keyless identities
	free := push("free/x")

	// Keyless signatures from an offline virtual Sigstore, checked against
	// its trusted root: one by the trusted identity, one by another.
	vs, err := cosigntest.NewKeyless()
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.WriteTrustedRoot(filepath.Join(dir, "root.json")); err != nil {
		t.Fatal(err)
	}
	const issuer = "https://token.actions.githubusercontent.com"
	signKeyless := func(p publisher, subject string) {
		repo := registrytest.Repository(t, c, p.pkg.Source)
		if _, err := vs.SignImageClassic(ctx, repo, p.pkg.Source, digestOf(p.pkg), subject, issuer); err != nil {
			t.Fatal(err)
		}
	}
	keylessOK, keylessOther := push("sigstore/ok"), push("sigstore/other")
	signKeyless(keylessOK, "https://github.com/acme/app/.github/workflows/release.yml@refs/heads/main")
	signKeyless(keylessOther, "https://github.com/evil/app/.github/workflows/release.yml@refs/heads/main")

	pol, err := trust.New(&trust.Config{TrustedRoot: "root.json", Rules: []trust.RuleConfig{
		{Match: reg.Host + "/acme/", Keys: []string{"acme.pub"}, Required: true},
		{Match: reg.Host + "/beta/", Keys: []string{"beta.pub"}, Required: true},
		{Match: reg.Host + "/loose/", Keys: []string{"acme.pub"}},
		{Match: reg.Host + "/strict/", Keys: []string{"acme.pub"}, Required: true},
		{Match: reg.Host + "/sigstore/", Keyless: []trust.Identity{{Issuer: "https://token.actions.githubusercontent.com", SubjectRegexp: "^https://github.com/acme/"}}},
	}}, trust.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		pkgs     []publisher
		fails    []string // substrings, one per failing package
		verified map[string]string
	}{
		{name: "two publishers with their own keys", pkgs: []publisher{acmeApp, betaDB},
			verified: map[string]string{acmeApp.pkg.Source: reg.Host + "/acme/", betaDB.pkg.Source: reg.Host + "/beta/"}},
		{name: "signed by the other publisher's key", pkgs: []publisher{acmeApp, betaWrong},
			fails: []string{betaWrong.pkg.Source + "@" + betaWrong.pkg.Digest + `: trust rule "` + reg.Host + `/beta/"`}},
		{name: "unsigned, not required", pkgs: []publisher{loose, free}, verified: map[string]string{}},
		{name: "unsigned, required", pkgs: []publisher{strict}, fails: []string{`trust rule "` + reg.Host + `/strict/": no signature`}},
		{name: "keyless, trusted identity", pkgs: []publisher{keylessOK}, verified: map[string]string{keylessOK.pkg.Source: reg.Host + "/sigstore/"}},
		{name: "keyless, another identity", pkgs: []publisher{keylessOther}, fails: []string{keylessOther.pkg.Source}},
		{name: "keyless rule, key signature", pkgs: []publisher{keyless}, fails: []string{keyless.pkg.Source}},
		{name: "every failure listed", pkgs: []publisher{betaWrong, strict, acmeApp}, fails: []string{betaWrong.pkg.Source, strict.pkg.Source}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pkgs []*lock.Package
			for _, p := range tc.pkgs {
				cp := *p.pkg
				pkgs = append(pkgs, &cp)
			}
			recs, err := pol.Check(ctx, pkgs, c, 2)
			if len(tc.fails) > 0 {
				if exitcode.Of(err) != exitcode.Mismatch {
					t.Fatalf("err = %v, want exit 3", err)
				}
				n := len(trust.Failures(err))
				if n != len(tc.fails) {
					t.Errorf("%d failures, want %d: %v", n, len(tc.fails), err)
				}
				for _, want := range tc.fails {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error does not name %q:\n%v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pkgs {
				rs := recs[trust.Key(p.Source, p.Digest)]
				want, signed := tc.verified[p.Source]
				if !signed {
					if len(rs) != 0 {
						t.Errorf("%s: records %+v for an unsigned package", p.Source, rs)
					}
					continue
				}
				if len(rs) != 1 || rs[0].Kind != trust.KindSig || rs[0].Rule != want || rs[0].Subject != p.Digest {
					t.Fatalf("%s: records %+v, want one sig verified by %s", p.Source, rs, want)
				}
				repo := registrytest.Repository(t, c, p.Source)
				desc, err := repo.Resolve(ctx, signature.Tag(digestOf(p)))
				if err != nil || desc.Digest.String() != rs[0].Digest {
					t.Errorf("%s: recorded %s, the tag is %s (%v)", p.Source, rs[0].Digest, desc.Digest, err)
				}
			}
		})
	}

	// A lock that records a signature the source no longer has, or has
	// with another digest, fails against it.
	t.Run("recorded signature changed at the source", func(t *testing.T) {
		p := *acmeApp.pkg
		recs, err := pol.Check(ctx, []*lock.Package{&p}, c, 1)
		if err != nil {
			t.Fatal(err)
		}
		p.Signatures = recs[trust.Key(p.Source, p.Digest)]
		if _, err := pol.Check(ctx, []*lock.Package{&p}, c, 1); err != nil {
			t.Fatalf("unchanged: %v", err)
		}
		acmeApp.sign(acme) // cosign appends a layer: a new manifest
		_, err = pol.Check(ctx, []*lock.Package{&p}, c, 1)
		if exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), "the lock records "+p.Signatures[0].Digest) {
			t.Fatalf("err = %v", err)
		}
	})
}

func digestOf(p *lock.Package) digest.Digest { return digest.Digest(p.Digest) }

// TestMirrorSetTrust: ferry.yaml's trust section is read in either shape,
// rejects unknown fields, and is not part of the inputs digest.
func TestMirrorSetTrust(t *testing.T) {
	head := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: ghcr.io/acme/app:v1\n"
	tests := []struct {
		name, trust string
		rules       int
		err         string
	}{
		{"none", "", 0, ""},
		{"list", "trust:\n  - match: ghcr.io/acme/\n    keys: [a.pub]\n", 1, ""},
		{"mapping", "trust:\n  trustedRoot: root.json\n  rules:\n    - match: ghcr.io/\n      keys: [a.pub]\n      required: true\n", 1, ""},
		{"unknown field", "trust:\n  - match: ghcr.io/\n    required: yes\n    kyes: [a.pub]\n", 0, `line 8: unknown key "kyes" in a trust rule`},
	}
	base, err := mirrorset.Parse([]byte(head))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := mirrorset.Parse([]byte(head + tc.trust))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			if m.Trust != nil {
				n = len(m.Trust.Rules)
			}
			if n != tc.rules {
				t.Errorf("%d rules, want %d", n, tc.rules)
			}
			if m.Digest() != base.Digest() {
				t.Errorf("the trust section changed the inputs digest")
			}
		})
	}
}

// TestApplyUnrecorded: a lock that records a package's signatures (a lock
// written before signing records `signatures: []`) gains, when mirrored,
// the signatures its rule verifies at the source, and Apply returns them;
// a lock that records nothing records everything found, and one that
// names the signature already, or whose package no rule covers, is left
// as it is.
func TestApplyUnrecorded(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	dir := t.TempDir()
	acme := writeKey(t, dir, "acme.pub")
	pkgOf := func(path string, sign bool) lock.Package {
		name := reg.Host + "/" + path
		repo := registrytest.Repository(t, c, name)
		desc, err := fixture.PushImage(ctx, repo, path, 64)
		if err != nil {
			t.Fatal(err)
		}
		if sign {
			if _, err := acme.SignImage(ctx, repo, name, desc.Digest); err != nil {
				t.Fatal(err)
			}
		}
		return lock.Package{Source: name, Version: "v1", Digest: desc.Digest.String(), MediaType: desc.MediaType, Size: desc.Size}
	}
	signed, unsigned, free := pkgOf("acme/app", true), pkgOf("acme/unsigned", false), pkgOf("free/x", true)
	pol, err := trust.New(&trust.Config{Rules: []trust.RuleConfig{{Match: reg.Host + "/acme/", Keys: []string{"acme.pub"}}}}, trust.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	recorded := func(p lock.Package) lock.Signatures {
		cp := p
		recs, err := pol.Check(ctx, []*lock.Package{&cp}, c, 1)
		if err != nil {
			t.Fatal(err)
		}
		return recs[trust.Key(p.Source, p.Digest)]
	}
	tests := []struct {
		name      string
		pkg       lock.Package
		record    lock.Signatures
		wantAdded int
		wantSigs  int
	}{
		{name: "lock written before signing", pkg: signed, record: lock.Signatures{}, wantAdded: 1, wantSigs: 1},
		{name: "lock that records nothing", pkg: signed, record: nil, wantAdded: 0, wantSigs: 1},
		{name: "lock that names the signature", pkg: signed, record: recorded(signed), wantAdded: 0, wantSigs: 1},
		{name: "unsigned under a rule that does not require", pkg: unsigned, record: lock.Signatures{}, wantAdded: 0, wantSigs: 0},
		{name: "signed, no rule", pkg: free, record: lock.Signatures{}, wantAdded: 0, wantSigs: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.pkg
			p.Signatures = append(tc.record[:0:0], tc.record...)
			if tc.record == nil {
				p.Signatures = nil
			}
			l := &lock.Lock{Packages: []lock.Package{p}}
			added, err := pol.Apply(ctx, l, c, 1, true)
			if err != nil {
				t.Fatal(err)
			}
			got := l.Packages[0].Signatures
			if len(added) != tc.wantAdded || len(got) != tc.wantSigs {
				t.Fatalf("added %v, the lock records %+v; want %d added, %d recorded", added, got, tc.wantAdded, tc.wantSigs)
			}
			for _, a := range added {
				if a.Source != p.Source || a.Digest != p.Digest || a.Signature.Kind != trust.KindSig || a.Signature.Rule != reg.Host+"/acme/" {
					t.Errorf("added %+v", a)
				}
				if !strings.Contains(a.String(), signature.Tag(digestOf(&p))) {
					t.Errorf("%q does not name the signature's tag", a.String())
				}
			}
		})
	}
}
