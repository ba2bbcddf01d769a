package ferry

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/verify"
)

// Reresolve resolves ms again against the source registries, keeping the
// versions l holds, and reports every way reality now differs from l: a
// locked tag that moved at its source, a package that joined or left the
// closure, or one that resolves to another digest. The mixin feed is read
// again too (the extensions lock their sections anew).
func (e *Env) Reresolve(ctx context.Context, ms *mirrorset.MirrorSet, l *lock.Lock) ([]verify.Problem, error) {
	regs, _, err := e.sources(ms)
	if err != nil {
		return nil, err
	}
	out, err := e.checkTags(ctx, l, regs.Repository, "at the source")
	if err != nil {
		return nil, err
	}
	nl, _, err := e.Lock(ctx, ms, l, Update{})
	if err != nil {
		return nil, err
	}
	return append(out, compareClosures(l, nl)...), nil
}

// ReresolveMirror proves the mirror alone is enough: it resolves ms again
// with every repository read from the mirror instead of its source, and
// requires the closure of l with the same digests. No source registry and
// no mixin feed is contacted.
//
// Every reference is resolved as `ferry lock` resolves it (roots, `use`,
// dependency references, partial references qualified against the source
// parent as written), and the repository it names is then read at its
// mirror location: the repository override (a --mirror HOST[/PREFIX])
// maps, else the `mirror:` the lock records for the source. A source the
// lock records no mirror for maps like the others do.
//
// Versions the lock holds are kept while they satisfy every constraint
// (ranges included), exactly as `ferry lock` keeps them: a mirror holds
// the tags ferry copied into it, possibly of several locks, and the
// closure of this lock must not depend on which newer tags it also holds.
// A range the locked version no longer satisfies lists the mirror's tags.
// Each locked tag must point at the locked digest in the mirror, and every
// manifest is read by digest from the mirror. Mixins are not resolved
// again (that needs their feed); their mirrored artifacts are what plain
// verify checks.
//
// A reference the mirror cannot satisfy (a repository, tag or manifest it
// lacks, or a range no mirrored tag meets) is a problem, not an error.
func (e *Env) ReresolveMirror(ctx context.Context, ms *mirrorset.MirrorSet, l *lock.Lock, override *relocate.Mapping) ([]verify.Problem, error) {
	to, err := mirrorOf(l, override)
	if err != nil {
		return nil, err
	}
	mirrored := &Env{Client: e.Client, Formats: e.Formats, Concurrency: e.Concurrency, Warn: e.Warn,
		registry: mappedRepositories{open: e.Client.Repository, to: to}}
	out, err := e.checkTags(ctx, l, mirrored.registry.Repository, "in the mirror")
	if err != nil {
		return nil, err
	}
	g, err := mirrored.Resolve(ctx, ms, l, Update{})
	if err != nil {
		if !unsatisfiedInMirror(err) {
			return nil, err
		}
		return append(out, verify.Problem{Package: "(closure)", Kind: verify.ProblemResolve,
			Detail: fmt.Sprintf("the mirror alone does not resolve the inputs: %v", err)}), nil
	}
	return append(out, compareClosures(l, lock.FromGraph(g, ms.Digest()))...), nil
}

// unsatisfiedInMirror reports whether a resolution error says the mirror
// lacks something, rather than that it could not be asked.
func unsatisfiedInMirror(err error) bool {
	var unsat *resolve.UnsatisfiableError
	return errors.Is(err, errdef.ErrNotFound) || errors.As(err, &unsat) || errkind.Of(err) == errkind.Mismatch || errkind.Of(err) == nil && (errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData))
}

// checkTags checks that every locked tag (each package's version and
// other tags) still points at the locked digest in the repositories open
// opens (where names them in problems).
func (e *Env) checkTags(ctx context.Context, l *lock.Lock, open func(string) (*remote.Repository, error), where string) ([]verify.Problem, error) {
	var out []verify.Problem
	for _, p := range l.Resolved() {
		tags := p.AllTags()
		if len(tags) == 0 {
			continue
		}
		repo, err := open(p.Source)
		if err != nil {
			return nil, err
		}
		for _, t := range tags {
			ref := repo.Reference.Registry + "/" + repo.Reference.Repository + ":" + t
			desc, err := repo.Resolve(ctx, t)
			switch {
			case errors.Is(err, errdef.ErrNotFound):
				out = append(out, resolveProblem(p.Source, ref, "tag %s no longer exists %s", t, where))
			case err != nil:
				return nil, fmt.Errorf("resolving %s: %w", ref, err)
			case desc.Digest.String() != p.Digest:
				out = append(out, resolveProblem(p.Source, ref, "tag %s %s now points at %s, the lock has %s", t, where, desc.Digest, p.Digest))
			}
		}
	}
	return out, nil
}

func resolveProblem(pkg, ref, format string, args ...any) verify.Problem {
	return verify.Problem{Package: pkg, Ref: ref, Kind: verify.ProblemResolve, Detail: fmt.Sprintf(format, args...)}
}

// compareClosures lists every package that joined or left the closure or
// resolves to another digest in nl than in l.
func compareClosures(l, nl *lock.Lock) []verify.Problem {
	var out []verify.Problem
	was, now := digests(l), digests(nl)
	for _, src := range union(was, now) {
		a, inOld := was[src]
		b, inNew := now[src]
		switch {
		case !inNew:
			out = append(out, resolveProblem(src, "", "no longer in the closure (the lock has %s)", a))
		case !inOld:
			out = append(out, resolveProblem(src, "", "now in the closure at %s, the lock lacks it", b))
		case a != b:
			out = append(out, resolveProblem(src, "", "resolves to %s, the lock has %s", b, a))
		}
	}
	return out
}

// mappedRepositories opens, for each source repository, the repository
// to maps it to. Resolution keeps naming packages by source, so its result
// compares with a lock directly.
type mappedRepositories struct {
	open func(string) (*remote.Repository, error)
	to   func(source string) (string, error)
}

// MapsSources reports that every source, a chart in a classic Helm
// repository included, is read from its mapped repository.
func (mappedRepositories) MapsSources() bool { return true }

// Repository opens source's mapped repository.
func (m mappedRepositories) Repository(source string) (*remote.Repository, error) {
	name, err := m.to(source)
	if err != nil {
		return nil, err
	}
	return m.open(name)
}

// ErrNoMirror is a check of the mirror when the lock records none and
// none was named in its stead. It is bad input.
var ErrNoMirror = errkind.BadInputError("the lock records no mirror")

// mirrorOf returns the mapping from a source repository to its mirror
// repository: override when set, else the mirror l records for the
// source, else the HOST[/PREFIX] the recorded mirrors share.
func mirrorOf(l *lock.Lock, override *relocate.Mapping) (func(string) (string, error), error) {
	if override != nil {
		return func(s string) (string, error) { return override.Repo(s), nil }, nil
	}
	recorded := map[string]string{}
	var base *relocate.Mapping
	for _, p := range l.Packages {
		if p.Mirror == "" {
			continue
		}
		recorded[p.Source] = p.Mirror
		if _, path, _ := strings.Cut(p.Source, "/"); base == nil && strings.HasSuffix(p.Mirror, "/"+path) {
			if m, err := relocate.ParseMapping(strings.TrimSuffix(p.Mirror, "/"+path)); err == nil {
				base = &m
			}
		}
	}
	if len(recorded) == 0 {
		return nil, ErrNoMirror
	}
	return func(s string) (string, error) {
		if m, ok := recorded[s]; ok {
			return m, nil
		}
		if base != nil {
			return base.Repo(s), nil
		}
		return "", errkind.Markf(errkind.Mismatch, "%s: the lock records no mirror for it", s)
	}, nil
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
