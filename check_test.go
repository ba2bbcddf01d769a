package ferry_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/trust"
	"github.com/ferryhq/ferry/verify"
)

// details renders problems as "SOURCE: DETAIL" lines, sources relative
// to host.
func details(host string, ps []verify.Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, strings.TrimPrefix(p.Package, host+"/")+": "+p.Detail)
	}
	return out
}

// wantProblems checks that got holds one problem per want entry, each
// "PACKAGE: substring".
func wantProblems(t *testing.T, host string, got []verify.Problem, want []string) {
	t.Helper()
	lines := details(host, got)
	if len(lines) != len(want) {
		t.Fatalf("problems:\n%s\nwant %d: %q", strings.Join(lines, "\n"), len(want), want)
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			if strings.Contains(l, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem %q in:\n%s", w, strings.Join(lines, "\n"))
		}
		for _, p := range got {
			if p.Kind != verify.ProblemResolve {
				t.Errorf("problem %+v is not of kind %s", p, verify.ProblemResolve)
			}
		}
	}
}

// TestReresolve: resolving the inputs again at the sources reports a
// locked tag that moved (the locked digest itself is kept, so the closure
// does not follow it), and, for inputs that changed since the lock, a
// package that left or joined the closure or resolves to another digest;
// nothing when reality matches the lock.
func TestReresolve(t *testing.T) {
	type input struct {
		refs    []string
		version string
		// replace redirects p/db to p/db-fork.
		replace bool
	}
	app := input{refs: []string{"p/app:1.0.0"}}
	for _, tc := range []struct {
		name        string
		locked, now input
		edit        func(t *testing.T, w *world)
		want        []string
	}{
		{name: "unchanged", locked: app, now: app},
		{name: "dependency's tag moved", locked: app, now: app, edit: func(t *testing.T, w *world) {
			w.push(t, "p/db", fixture.Bundle{Name: "db", Version: "1.0.0", Images: []string{"mariadb"}})
		}, want: []string{"p/db: tag 1.0.0 at the source now points at"}},
		{name: "root's tag moved", locked: app, now: app, edit: func(t *testing.T, w *world) {
			w.push(t, "p/app", fixture.Bundle{Name: "app", Version: "1.0.0", Images: []string{"web"}})
		}, want: []string{"p/app: tag 1.0.0 at the source now points at"}},
		{name: "root added", locked: app, now: input{refs: []string{"p/app:1.0.0", "p/cache:2.0.0"}},
			want: []string{"p/cache: now in the closure at"}},
		{name: "root dropped", locked: input{refs: []string{"p/app:1.0.0", "p/cache:2.0.0"}}, now: app,
			want: []string{"p/cache: no longer in the closure"}},
		{name: "constraint the locked version no longer meets", locked: input{refs: []string{"p/db"}, version: "^1.0"}, now: input{refs: []string{"p/db"}, version: ">=1.1"},
			edit: func(t *testing.T, w *world) {
				w.push(t, "p/db", fixture.Bundle{Name: "db", Version: "1.1.0", Images: []string{"mysql"}})
			}, want: []string{"p/db: resolves to"}},
		{name: "replace kept", locked: input{refs: app.refs, replace: true}, now: input{refs: app.refs, replace: true}},
		{name: "replace dropped", locked: input{refs: app.refs, replace: true}, now: app,
			want: []string{"p/db: resolves to sha256:", "p/db-fork: no longer in the closure"}},
		{name: "replace added", locked: app, now: input{refs: app.refs, replace: true},
			want: []string{"p/db: resolves to replaced by", "p/db-fork: now in the closure at"}},
		{name: "constraint the locked version still meets", locked: input{refs: []string{"p/db"}, version: "^1.0"}, now: input{refs: []string{"p/db"}, version: ">=1.0"},
			edit: func(t *testing.T, w *world) {
				w.push(t, "p/db", fixture.Bundle{Name: "db", Version: "1.1.0", Images: []string{"mysql"}})
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.push(t, "p/cache", fixture.Bundle{Name: "cache", Version: "2.0.0"})
			w.push(t, "p/db-fork", fixture.Bundle{Name: "db", Version: "1.0.0", Images: []string{"mariadb"}})
			ms := func(in input) *mirrorset.MirrorSet {
				m := w.inputs(t, append([]string(nil), in.refs...)...)
				if in.replace {
					m.Replace = []mirrorset.Replace{{From: w.src.Host + "/p/db", To: w.src.Host + "/p/db-fork"}}
				}
				for i := range m.Packages {
					m.Packages[i].Version = in.version
				}
				return m
			}
			l := w.lock(t, w.env(), ms(tc.locked), nil, ferry.Update{})
			if tc.edit != nil {
				tc.edit(t, w)
			}
			got, err := w.env().Reresolve(context.Background(), ms(tc.now), l)
			if err != nil {
				t.Fatal(err)
			}
			wantProblems(t, w.src.Host, got, tc.want)
		})
	}
}

// TestReresolveMirror: the mirror alone resolves the closure of the lock,
// reading no source; a tag moved in the mirror and a mirror that lacks the
// closure are problems; a lock with no mirror recorded is bad input.
func TestReresolveMirror(t *testing.T) {
	w := newWorld(t)
	e := w.env()
	ms := w.inputs(t, "p/app:1.0.0")
	l := w.lock(t, e, ms, nil, ferry.Update{})
	if _, err := e.ReresolveMirror(context.Background(), ms, l, nil); exitcode.Of(err) != exitcode.Usage {
		t.Fatalf("a lock never mirrored: %v (exit %d), want exit %d", err, exitcode.Of(err), exitcode.Usage)
	}
	w.mirrorTo(t, l)
	w.src.Stop() // the mirror alone must do
	empty, err := relocate.ParseMapping(w.mirror.Host + "/empty")
	if err != nil {
		t.Fatal(err)
	}

	got, err := e.ReresolveMirror(context.Background(), ms, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, w.src.Host, got, nil)

	got, err = e.ReresolveMirror(context.Background(), ms, l, &empty)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, w.src.Host, got, []string{"p/app: tag 1.0.0 no longer exists in the mirror", "p/db: tag 1.0.0 no longer exists in the mirror", "(closure): the mirror alone does not resolve the inputs"})

	// Move db's tag in the mirror.
	repo, err := w.c.Repository(w.mirror.Host + "/m/p/db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushBundle(context.Background(), repo, w.mirror.Host+"/m/p/db", fixture.Bundle{Name: "db", Version: "1.0.0", Images: []string{"mariadb"}}); err != nil {
		t.Fatal(err)
	}
	got, err = e.ReresolveMirror(context.Background(), ms, l, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, w.src.Host, got, []string{"p/db: tag 1.0.0 in the mirror now points at"})
}

// TestOrigin: where mirror --to reads each package: --from's mirror; the
// source while it answers; the mirror the lock records for the packages
// of a source that cannot be reached, with a warning; nothing to decide
// offline.
func TestOrigin(t *testing.T) {
	w := newWorld(t)
	ms := w.inputs(t, "p/app:1.0.0")
	l := w.lock(t, w.env(), ms, nil, ferry.Update{})
	w.mirrorTo(t, l)
	app := w.pkg(t, l, "p/app")
	ctx := context.Background()

	from, err := relocate.ParseMapping("dr.example/x")
	if err != nil {
		t.Fatal(err)
	}
	origin, err := w.env().Origin(ctx, l, filepath.Join(t.TempDir(), "ferry.lock"), &from)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := origin(app), "dr.example/x/p/app"; got != want {
		t.Errorf("--from: %s read from %s, want %s", app.Source, got, want)
	}

	origin, err = w.env().Origin(ctx, l, "ferry.lock", nil)
	if err != nil || origin != nil {
		t.Fatalf("source up: origin %v, %v; want nil (every package from its source)", origin != nil, err)
	}

	offline := w.env()
	offline.Offline = true
	offline.MirrorSources = map[string][]string{w.src.Host: {w.mirror.Host + "/m"}}
	if origin, err := offline.Origin(ctx, l, "ferry.lock", nil); err != nil || origin != nil {
		t.Fatalf("offline: origin %v, %v; want nil", origin != nil, err)
	}

	w.src.Stop()
	var warned []string
	e := w.env()
	e.Warn = func(m string) { warned = append(warned, m) }
	origin, err = e.Origin(ctx, l, "ferry.lock", nil)
	if err != nil {
		t.Fatal(err)
	}
	if origin == nil {
		t.Fatal("source down: every package still read from its source")
	}
	if got := origin(app); got != app.Mirror || got == "" {
		t.Errorf("source down: app read from %q, want its recorded mirror %q", got, app.Mirror)
	}
	if other := (&lock.Package{Source: "elsewhere.example/a", Digest: app.Digest}); origin(other) != other.Source {
		t.Errorf("a package of another registry is read from %q", origin(other))
	}
	if len(warned) != 1 || !strings.Contains(warned[0], w.src.Host+" cannot be reached") {
		t.Errorf("warnings %q, want one naming %s", warned, w.src.Host)
	}
}

// TestTrust: a required rule fails (exit 3) on an unsigned package at
// lock; once signed, CheckTrust records the signatures, which mirroring
// copies; the mirror then passes CheckMirrorTrust and CheckTrustAt, and a
// mirror without them fails both.
func TestTrust(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ms := w.inputs(t, "p/app:1.0.0")
	l := w.lock(t, w.env(), ms, nil, ferry.Update{})
	dir := t.TempDir()
	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	if err := signer.WritePublicKey(filepath.Join(dir, "cosign.pub")); err != nil {
		t.Fatal(err)
	}
	ms.Trust = &trust.Config{Rules: []trust.RuleConfig{{Match: w.src.Host + "/p/", Keys: []string{"cosign.pub"}, Required: true}}}
	pol, err := ferry.TrustPolicy(ms, filepath.Join(dir, "ferry.yaml"), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ferry.TrustPolicy(nil, "", []string{filepath.Join(dir, "missing.pub")}, ""); err == nil {
		t.Error("--verify-key of a missing file accepted")
	}
	flagPol, err := ferry.TrustPolicy(nil, "", []string{filepath.Join(dir, "cosign.pub")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if r := flagPol.Rule(w.src.Host + "/p/app"); r == nil || !r.Required {
		t.Errorf("--verify-key makes no required rule: %+v", r)
	}

	e := w.env()
	if err := e.CheckTrust(ctx, pol, l, false); exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), "p/app") {
		t.Fatalf("unsigned packages under a required rule: %v (exit %d), want exit 3 naming p/app", err, exitcode.Of(err))
	}
	// The unsigned closure, mirrored under /bare, before signing.
	bareLock := w.lock(t, w.env(), ms, nil, ferry.Update{})
	bare, err := relocate.ParseMapping(w.mirror.Host + "/bare")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, bareLock, relocate.Options{Source: w.c, To: bare, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}

	for _, p := range l.Resolved() {
		repo, err := w.c.Repository(p.Source)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := signer.SignImage(ctx, repo, p.Source, digest.Digest(p.Digest)); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.CheckTrust(ctx, pol, l, false); err != nil {
		t.Fatalf("signed packages: %v", err)
	}
	for _, path := range []string{"p/app", "p/db"} {
		if p := w.pkg(t, l, path); p.Signatures == nil {
			t.Errorf("%s: no signature recorded", path)
		}
	}
	to := w.mirrorTo(t, l)

	if err := e.CheckMirrorTrust(ctx, pol, l, nil); err != nil {
		t.Errorf("CheckMirrorTrust at the mirror that holds the signatures: %v", err)
	}
	if err := e.CheckMirrorTrust(ctx, pol, l, &bare); exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), "refusing to install") {
		t.Errorf("CheckMirrorTrust at a mirror without signatures: %v (exit %d), want exit 3", err, exitcode.Of(err))
	}

	at := func(m relocate.Mapping) func(*lock.Package) string {
		return func(p *lock.Package) string { return m.Repo(p.Source) }
	}
	if added, err := e.CheckTrustAt(ctx, pol, l, at(to)); err != nil || len(added) != 0 {
		t.Errorf("CheckTrustAt the signed mirror: %v added, %v", added, err)
	}
	if added, err := e.CheckTrustAt(ctx, pol, l, nil); err != nil || len(added) != 0 {
		t.Errorf("CheckTrustAt the sources: %v added, %v", added, err)
	}
	if _, err := e.CheckTrustAt(ctx, pol, l, at(bare)); exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("CheckTrustAt a mirror without signatures: %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
}

// TestSources: the flags' source mirrors replace ferry.yaml's of the same
// prefix; resolution reads a source from its mirror when the source is
// gone, keeps the source's name and records where it read; an entry that
// does not parse is bad input.
func TestSources(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	ms := w.inputs(t, "p/app:1.0.0")
	l := w.lock(t, w.env(), ms, nil, ferry.Update{})
	to, err := relocate.ParseMapping(w.mirror.Host + "/copy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: w.c, To: to, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}

	e := w.env()
	if regs, err := e.Sources(ms); err != nil || regs != w.c {
		t.Errorf("no mirrors: Sources = %v, %v; want the client", regs, err)
	}

	ms.Mirrors = map[string]mirrorset.Locations{w.src.Host: {"nowhere.invalid/x"}, "other.example": {"o.example"}}
	e = w.env()
	e.MirrorSources = map[string][]string{w.src.Host: {w.mirror.Host + "/copy"}}
	table, err := e.Mirrors(ms)
	if err != nil {
		t.Fatal(err)
	}
	if got := table.Locations(w.src.Host + "/p/app"); len(got) == 0 || got[0] != w.mirror.Host+"/copy/p/app" {
		t.Errorf("locations %q: the flag's mirror does not replace ferry.yaml's", got)
	}
	if got := table.Locations("other.example/a"); len(got) == 0 || got[0] != "o.example/a" {
		t.Errorf("locations %q: ferry.yaml's other entry was lost", got)
	}

	w.src.Stop()
	nl, g, err := e.Lock(ctx, ms, nil, ferry.Update{})
	if err != nil {
		t.Fatalf("Lock through the source mirror: %v", err)
	}
	for _, p := range nl.Resolved() {
		if want := w.pkg(t, l, strings.TrimPrefix(p.Source, w.src.Host+"/")); p.Digest != want.Digest {
			t.Errorf("%s: %s through the mirror, %s at the source", p.Source, p.Digest, want.Digest)
		}
	}
	for id, p := range g.Packages {
		if !strings.HasPrefix(p.ReadFrom, w.mirror.Host+"/copy/") {
			t.Errorf("%s read from %q, want the mirror", id, p.ReadFrom)
		}
	}

	bad := &ferry.Env{Client: w.c, Formats: formats.All(), MirrorSources: map[string][]string{"": {""}}}
	if _, err := bad.Sources(nil); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("an empty mirror entry: %v (exit %d), want exit %d", err, exitcode.Of(err), exitcode.Usage)
	}
}
