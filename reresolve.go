package ferry

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"oras.land/oras-go/v2/errdef"

	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/verify"
)

// Reresolve resolves ms again against the source registries, keeping the
// versions l holds, and reports every way reality now differs from l: a
// locked tag that moved at its source, a package that joined or left the
// closure, or one that resolves to another digest.
func (e *Env) Reresolve(ctx context.Context, ms *mirrorset.MirrorSet, l *lock.Lock) ([]verify.Problem, error) {
	var out []verify.Problem
	add := func(pkg, ref, format string, args ...any) {
		out = append(out, verify.Problem{Package: pkg, Ref: ref, Kind: verify.ProblemResolve, Detail: fmt.Sprintf(format, args...)})
	}
	for _, p := range l.Resolved() {
		if p.Version == "" {
			continue
		}
		repo, err := e.Client.Repository(p.Source)
		if err != nil {
			return nil, err
		}
		ref := p.Source + ":" + p.Version
		desc, err := repo.Resolve(ctx, p.Version)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			add(p.Source, ref, "tag %s no longer exists at the source", p.Version)
		case err != nil:
			return nil, fmt.Errorf("resolving %s: %w", ref, err)
		case desc.Digest.String() != p.Digest:
			add(p.Source, ref, "tag %s now points at %s, the lock has %s", p.Version, desc.Digest, p.Digest)
		}
	}
	nl, _, err := e.Lock(ctx, ms, l, Update{})
	if err != nil {
		return nil, err
	}
	was, now := digests(l), digests(nl)
	for _, src := range union(was, now) {
		a, inOld := was[src]
		b, inNew := now[src]
		switch {
		case !inNew:
			add(src, "", "no longer in the closure (the lock has %s)", a)
		case !inOld:
			add(src, "", "now in the closure at %s, the lock lacks it", b)
		case a != b:
			add(src, "", "resolves to %s, the lock has %s", b, a)
		}
	}
	return out, nil
}

// digests maps each package of a lock (by its graph ID) to its digest, and
// each replaced source to what replaces it.
func digests(l *lock.Lock) map[string]string {
	m := map[string]string{}
	g := l.Graph()
	for id, p := range g.Packages {
		m[id] = p.Descriptor.Digest.String()
	}
	for old, nw := range g.Replaced {
		m[old] = "replaced by " + nw
	}
	return m
}

func union(a, b map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
