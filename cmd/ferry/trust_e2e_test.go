package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// trustWorld is two publishers in one source registry: acme/app depends on
// beta/db; each publisher has its own key.
type trustWorld struct {
	src, mirror *registrytest.Registry
	env         *clitest.Env
	acme, beta  *fixture.Cosign
	app, db     string // sources
	digests     map[string]digest.Digest
}

func newTrustWorld(t *testing.T) *trustWorld {
	t.Helper()
	ctx := context.Background()
	w := &trustWorld{src: registrytest.New(t), mirror: registrytest.New(t), env: clitest.New(t), digests: map[string]digest.Digest{}}
	if err := os.MkdirAll(w.env.Path("keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	w.acme, w.beta = e2eSigner(t, w.env, "keys/acme.pub"), e2eSigner(t, w.env, "keys/beta.pub")
	h := w.src.Host
	w.app, w.db = h+"/acme/app", h+"/beta/db"
	c := registrytest.Client(t)
	for _, b := range []struct {
		source string
		b      fixture.Bundle
	}{
		{w.db, fixture.Bundle{Name: "db", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"mysql"}}},
		{w.app, fixture.Bundle{Name: "app", Version: "1.0.0", Tags: []string{"v1.0.0"}, Images: []string{"web"},
			Deps: []fixture.Dep{{Name: "db", Bundle: w.db + ":v1.0.0", Ranges: []string{"^1.0"}}}}},
	} {
		desc, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, b.source), b.source, b.b)
		if err != nil {
			t.Fatal(err)
		}
		w.digests[b.source] = desc.Digest
	}
	return w
}

// sign signs source's bundle with s in its source repository, or, with
// mirror set, in the mirror's copy.
func (w *trustWorld) sign(t *testing.T, s *fixture.Cosign, source string, mirror bool) {
	t.Helper()
	name := source
	if mirror {
		name = w.mirror.Host + "/m" + strings.TrimPrefix(source, w.src.Host)
	}
	c := registrytest.Client(t)
	if _, err := s.SignImage(context.Background(), registrytest.Repository(t, c, name), source, w.digests[source]); err != nil {
		t.Fatal(err)
	}
}

// ferryYAML writes ferry.yaml with the trust section given.
func (w *trustWorld) ferryYAML(trustSection string) {
	w.env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+w.app+":v1.0.0\n"+trustSection)
}

// mirrorManifests counts the manifests pushed to the mirror.
func (w *trustWorld) mirrorManifests() int {
	n := 0
	for _, r := range w.mirror.Requests() {
		if r.Method == http.MethodPut && strings.Contains(r.Path, "/manifests/") {
			n++
		}
	}
	return n
}

// TestE2ETrustPolicy: ferry.yaml's trust rules are checked by lock and
// mirror before anything is written or copied; the lock records the
// signatures with the rule that verified them, and verify checks the
// mirror against that record.
func TestE2ETrustPolicy(t *testing.T) {
	t.Parallel()
	w := newTrustWorld(t)
	h := w.src.Host
	bothRequired := "trust:\n  rules:\n    - match: " + h + "/acme/\n      keys: [keys/acme.pub]\n      required: true\n    - match: " + h + "/beta/\n      keys: [keys/beta.pub]\n      required: true\n"
	// The plain-list shape of the same policy, with beta not required.
	betaOptional := "trust:\n  - match: " + h + "/acme/\n    keys: [keys/acme.pub]\n    required: true\n  - match: " + h + "/beta/\n    keys: [keys/beta.pub]\n"

	// Nothing signed yet.
	w.sign(t, w.acme, w.app, false)
	for _, tc := range []struct {
		name, policy string
		code         int
		want         []string
	}{
		{"unsigned db, required", bothRequired, 3, []string{w.db + "@" + w.digests[w.db].String() + `: trust rule "` + h + `/beta/": no signature`}},
		{"unsigned db, not required", betaOptional, 0, nil},
		{"unknown field", "trust:\n  - match: " + h + "/\n    key: keys/acme.pub\n", 2, []string{`ferry.yaml: trust: line 7: unknown key "key" in a trust rule`}},
		{"key that does not parse", "trust:\n  - match: " + h + "/\n    keys: [ferry.yaml]\n", 2, []string{"not a PEM public key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w.ferryYAML(tc.policy)
			os.Remove(w.env.Path("t.lock"))
			w.mirror.Reset()
			w.env.Expect(tc.code, []string{"lock", "--lock", "t.lock"}, tc.want...)
			if tc.code != 0 {
				e2eAbsent(t, w.env.Path("t.lock"))
				w.env.Expect(tc.code, []string{"mirror", "--to", w.mirror.Host + "/m"}, tc.want...)
				w.env.Expect(tc.code, []string{"mirror", "--to-archive", "c.tar"}, tc.want...)
				e2eAbsent(t, w.env.Path("c.tar"))
				e2eAbsent(t, w.env.Path("ferry.lock"))
				if n := w.mirrorManifests(); n != 0 {
					t.Errorf("%d manifests pushed to the mirror after a failed check", n)
				}
				return
			}
			l, err := lock.Read(w.env.Path("t.lock"))
			if err != nil {
				t.Fatal(err)
			}
			if s := l.Package(w.db).Signatures; len(s) != 0 {
				t.Errorf("unsigned db records %+v", s)
			}
			if s := l.Package(w.app).Signatures; len(s) != 1 || s[0].Rule != h+"/acme/" {
				t.Errorf("app records %+v", s)
			}
		})
	}

	// db signed by the other publisher's key: fails, naming the rule.
	w.sign(t, w.acme, w.db, false)
	w.ferryYAML(bothRequired)
	w.mirror.Reset()
	w.env.Expect(3, []string{"lock"}, w.db, `trust rule "`+h+`/beta/"`, "does not verify", "1 of 2 packages")
	e2eAbsent(t, w.env.Path("ferry.lock"))
	w.env.Expect(3, []string{"mirror", "--to", w.mirror.Host + "/m"}, `trust rule "`+h+`/beta/"`)
	if n := w.mirrorManifests(); n != 0 {
		t.Errorf("%d manifests pushed to the mirror after a failed check", n)
	}

	// Each signed by its own publisher's key (cosign appends: the acme
	// signature on db stays, beta's verifies).
	w.sign(t, w.beta, w.db, false)
	w.env.MustRun("lock")
	l, err := lock.Read(w.env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	c := registrytest.Client(t)
	for source, rule := range map[string]string{w.app: h + "/acme/", w.db: h + "/beta/"} {
		p := l.Package(source)
		tag, err := registrytest.Repository(t, c, source).Resolve(context.Background(), signature.Tag(w.digests[source]))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Signatures) != 1 || p.Signatures[0].Kind != trust.KindSig || p.Signatures[0].Rule != rule || p.Signatures[0].Digest != tag.Digest.String() || p.Signatures[0].Subject != p.Digest {
			t.Errorf("%s records %+v, want the sig %s verified by %s", source, p.Signatures, tag.Digest, rule)
		}
	}
	// --verify-key alone is one required rule for everything: beta's key
	// does not verify acme's app (db carries both signatures by now). The
	// working directory's ferry.yaml supplies the settings of a
	// reference ROOT, its trust rules included, so these runs name a
	// ferry.yaml without rules (--config).
	w.env.WriteFile("plain.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n")
	w.env.Expect(3, []string{"lock", "--config", "plain.yaml", "--lock", "v.lock", w.app + ":v1.0.0", "--verify-key", "keys/beta.pub"}, w.app+"@"+w.digests[w.app].String()+`: trust rule "--verify-key"`, "1 of 2 packages")
	w.env.MustRun("lock", "--config", "plain.yaml", "--lock", "v.lock", w.app+":v1.0.0", "--verify-key", "keys/acme.pub", "--verify-key", "keys/beta.pub")
	// With the working directory's ferry.yaml, its rules cover app and db
	// (acme's rule verifies app), and --verify-key covers the rest.
	w.env.MustRun("lock", "--lock", "v2.lock", w.app+":v1.0.0", "--verify-key", "keys/beta.pub")

	w.env.MustRun("mirror", "--to", w.mirror.Host+"/m")
	if w.mirrorManifests() == 0 {
		t.Fatal("nothing mirrored")
	}
	w.env.Expect(0, []string{"verify"}, "2 signatures")

	// A signature replaced in the mirror: verify reports it (3), install
	// refuses before writing anything.
	good := w.env.ReadFile("ferry.lock")
	w.sign(t, w.acme, w.app, true)
	w.env.Expect(3, []string{"verify"}, w.app+": signature: ", "sha256-"+w.digests[w.app].Encoded()+".sig is sha256:", "the lock records "+l.Package(w.app).Signatures[0].Digest)
	w.env.Expect(3, []string{"install", "--dest", "out"}, "refusing to install")
	e2eAbsent(t, w.env.Path("out"))

	// A recorded attestation the mirror does not have.
	if l, err = lock.Read(w.env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	p := l.Package(w.db)
	att := lock.Signature{Subject: p.Digest, Kind: trust.KindAtt, Digest: digest.FromString("att").String()}
	p.Signatures = append(p.Signatures, att)
	if err := l.Write(w.env.Path("ferry.lock")); err != nil {
		t.Fatal(err)
	}
	w.env.Expect(3, []string{"verify"}, w.db+": signature: ", trust.CosignTag(w.digests[w.db], "att")+" "+att.Digest+" the lock records is missing from the mirror")
	// mirror --lock checks the record against the source too.
	w.mirror.Reset()
	w.env.Expect(3, []string{"mirror", "--lock", "ferry.lock", "--to", w.mirror.Host + "/m2"}, "the source disagrees with the signatures the lock records", "is missing")
	if n := w.mirrorManifests(); n != 0 {
		t.Errorf("%d manifests pushed after a failed check", n)
	}
	w.env.WriteFile("ferry.lock", good)
}
