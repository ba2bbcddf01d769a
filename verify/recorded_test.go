package verify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/trust"
	"github.com/ferryhq/ferry/verify"
)

// TestVerifyRecordedSignatures: with a lock that records each package's
// signatures, verify checks the mirror against exactly that list: an
// attestation or referrer attached in the mirror afterwards is a problem,
// and --key needs a verifying signature the lock records.
func TestVerifyRecordedSignatures(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// tamper changes app's mirror repository or its record, and
		// returns the problem's Ref and a part of its detail.
		tamper func(t *testing.T, repo oras.Target, app *lock.Package) (ref, detail string)
	}{
		{"as recorded", func(*testing.T, oras.Target, *lock.Package) (string, string) { return "", "" }},
		{"attestation injected", func(t *testing.T, repo oras.Target, app *lock.Package) (string, string) {
			att, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tag := trust.CosignTag(digest.Digest(app.Digest), trust.KindAtt)
			if err := repo.Tag(ctx, att, tag); err != nil {
				t.Fatal(err)
			}
			return app.Mirror + ":" + tag, att.Digest.String() + " is in the mirror but the lock does not name it"
		}},
		{"referrer injected", func(t *testing.T, repo oras.Target, app *lock.Package) (string, string) {
			root := app.Descriptor()
			ref, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.dev.sigstore.bundle.v0.3+json", oras.PackManifestOptions{Subject: &root})
			if err != nil {
				t.Fatal(err)
			}
			return app.Mirror + "@" + ref.Digest.String(), "the lock does not name it"
		}},
		{"a verifying signature the lock does not record", func(t *testing.T, _ oras.Target, app *lock.Package) (string, string) {
			app.Signatures = lock.Signatures{}
			return app.Mirror + ":sha256-" + digest.Digest(app.Digest).Encoded() + ".sig", "are not the ones the lock records"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, mirror, c, l := pipelinetest.MirroredLock(t)
			e := &signEnv{src: src.Host, c: c, l: l, mirror: mirror}
			s, k := cosignSigner(t)
			e.signAll(t, s)
			for _, p := range l.Resolved() {
				repo, err := c.Repository(p.Mirror)
				if err != nil {
					t.Fatal(err)
				}
				if p.Signatures, err = trust.Find(ctx, repo, p.Descriptor()); err != nil {
					t.Fatal(err)
				}
				if len(p.Signatures) == 0 {
					t.Fatalf("%s: no signature found in the mirror", p.Source)
				}
			}
			app := l.Package(src.Host + "/p/app")
			repo, err := c.Repository(app.Mirror)
			if err != nil {
				t.Fatal(err)
			}
			ref, detail := tc.tamper(t, repo, app)
			src.Stop()
			rep, err := verify.Verify(ctx, l, verify.Options{Registry: c, Key: k})
			if err != nil {
				t.Fatal(err)
			}
			if ref == "" {
				if !rep.OK() || rep.Signatures != 2 {
					t.Fatalf("report = %+v", rep)
				}
				return
			}
			found := false
			for _, p := range rep.Problems {
				if p.Package != app.Source || p.Kind != verify.ProblemSignature {
					t.Errorf("unexpected problem %+v", p)
				}
				found = found || (p.Ref == ref && strings.Contains(p.Detail, detail))
			}
			if !found {
				t.Errorf("problems = %+v\nwant %s: %q", rep.Problems, ref, detail)
			}
		})
	}
}
