package relocate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
)

// Refused repositories, found all at once. Registries such as ECR and
// Harbor create no repository on push: a push into one nobody created is
// refused at its first write (client.RepositoryRefusedError). Checking
// every destination repository before the first copy would cost two
// requests per repository (open an upload session, cancel it) on every
// run, also into the registries that create repositories on push, which
// are most: 400 more requests for a closure of 200 repositories. So one
// repository is probed before copying, the first package's, when the
// registry does not know it yet (client.ProbePush: POST
// /v2/NAME/blobs/uploads/, then DELETE of the session; nothing is
// written): two requests a run, none on a re-run. When it is refused,
// the registry is one of those, and every repository of the run is
// probed, concurrently within the run's concurrency, before anything is
// copied (preflight): a first run into ECR or a Harbor project nobody
// created fails with one error listing them all. When the first
// repository takes pushes and a later one is refused at its first write,
// the run starts no further package, probes every destination repository
// no package has begun to write to, and fails with one error listing
// every refused repository and the packages copied before the refusal
// (those already under way when it came finish their copy).

// preflight probes, before any package starts, the repository of the
// run's first package when the registry does not know it (its tag
// listing answers 404 NAME_UNKNOWN) (client.ProbePush: one POST and the
// DELETE of its session, nothing written). Registries that create no repository on push
// refuse it when nobody created it, which is how a first run into ECR or
// Harbor goes: then every other repository of the run is probed too and
// the run fails before copying anything, with one error listing every
// refused repository and how to create it. A probe that fails for another
// reason is not the run's failure (the copy reports what it meets); when
// the first repository takes pushes and another does not, the refusal
// comes at that repository's first write (refused).
func (g *refusalGate) preflight(ctx context.Context, led *ledger) error {
	if g.opts.Target == nil || len(g.pkgs) == 0 || led == nil {
		return nil
	}
	first := g.opts.To.Repo(g.pkgs[0].Source)
	dst, err := g.opts.Target.Repository(first)
	if err != nil {
		return nil
	}
	// The tag listing the first package's copy starts with (ledger
	// repoState, kept for it): a repository that answers it exists, and
	// needs no probe; so a re-run, or a run into repositories that exist,
	// sends nothing more.
	if st := led.repoState(ctx, first, dst); !st.untagged {
		return nil
	}
	refuse, _ := probePush(ctx, []string{first}, g.opts)
	if len(refuse) == 0 {
		return nil
	}
	var rest []string
	seen := map[string]bool{first: true}
	for _, p := range g.pkgs {
		if r := g.opts.To.Repo(p.Source); !seen[r] {
			seen[r] = true
			rest = append(rest, r)
		}
	}
	more, other := probePush(ctx, rest, g.opts)
	for r, err := range more {
		refuse[r] = err
	}
	return refusedError(&RepositoriesRefusedError{NotStarted: len(g.pkgs), BeforeCopy: true}, refuse, other)
}

// refusedError fills e with refuse's repositories, sorted, and their
// refusals, and returns it joined with other, the probes that failed for
// another reason.
func refusedError(e *RepositoriesRefusedError, refuse map[string]error, other []error) error {
	for r := range refuse {
		e.Repositories = append(e.Repositories, r)
	}
	sort.Strings(e.Repositories)
	for _, r := range e.Repositories {
		e.Errs = append(e.Errs, refuse[r])
	}
	if len(other) > 0 {
		return errors.Join(append([]error{e}, other...)...)
	}
	return e
}

// refusalGate stops a run's package copies at the first refused
// repository and probes the repositories not yet written to.
type refusalGate struct {
	pkgs   []*lock.Package
	opts   Options
	mu     sync.Mutex
	stop   bool
	began  map[string]bool
	skip   []bool
	refuse map[string]error
	// other are the probes that failed for another reason.
	other []error
}

func newRefusalGate(pkgs []*lock.Package, opts Options) *refusalGate {
	return &refusalGate{pkgs: pkgs, opts: opts, began: map[string]bool{}, skip: make([]bool, len(pkgs)), refuse: map[string]error{}}
}

// begin reports whether package i may start, and notes that its
// repository is being written to.
func (g *refusalGate) begin(i int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stop {
		g.skip[i] = true
		return false
	}
	g.began[g.opts.To.Repo(g.pkgs[i].Source)] = true
	return true
}

// refused records that package i's repository refused its writes (err,
// explained); the first refusal stops the run and probes every
// repository no package has begun to write to.
func (g *refusalGate) refused(ctx context.Context, i int, err error) {
	g.mu.Lock()
	repo := g.opts.To.Repo(g.pkgs[i].Source)
	if _, ok := g.refuse[repo]; !ok {
		g.refuse[repo] = err
	}
	if g.stop {
		g.mu.Unlock()
		return
	}
	g.stop = true
	var probe []string
	seen := map[string]bool{}
	for _, p := range g.pkgs {
		r := g.opts.To.Repo(p.Source)
		if !g.began[r] && !seen[r] {
			seen[r] = true
			probe = append(probe, r)
		}
	}
	g.mu.Unlock()
	refuse, other := probePush(ctx, probe, g.opts)
	g.mu.Lock()
	defer g.mu.Unlock()
	for r, err := range refuse {
		g.refuse[r] = err
	}
	g.other = append(g.other, other...)
}

// probePush asks each of repos whether it takes pushes
// (client.ProbePush), concurrently within opts.Concurrency: it returns
// the refusals by repository, and the probes that failed otherwise.
func probePush(ctx context.Context, repos []string, opts Options) (map[string]error, []error) {
	refuse := map[string]error{}
	var other []error
	if opts.Target == nil || len(repos) == 0 {
		return refuse, nil
	}
	var mu sync.Mutex
	var eg errgroup.Group
	eg.SetLimit(max(opts.Concurrency, 1))
	for _, r := range repos {
		eg.Go(func() error {
			dst, err := opts.Target.Repository(r)
			if err == nil {
				err = client.ProbePush(ctx, dst)
			}
			if err == nil {
				return nil
			}
			mu.Lock()
			defer mu.Unlock()
			if client.IsRepositoryRefused(err) {
				refuse[r] = err
			} else {
				other = append(other, fmt.Errorf("checking whether %s takes pushes: %w", r, err))
			}
			return nil
		})
	}
	_ = eg.Wait()
	return refuse, other
}

// shardRefused returns err, a shard's blob upload failing, or in its
// place, when err is a repository refused, a *RepositoriesRefusedError
// listing every one of repos (the shard's destination repositories) that
// refuses pushes, probed with client.ProbePush. A shard's blobs go first,
// before any package: no package was copied.
func shardRefused(ctx context.Context, err error, repos []string, notStarted int, opts Options) error {
	if !client.IsRepositoryRefused(err) {
		return err
	}
	refuse, other := probePush(ctx, repos, opts)
	if len(refuse) == 0 {
		return err
	}
	return refusedError(&RepositoriesRefusedError{NotStarted: notStarted}, refuse, other)
}

// err returns the run's error once it stopped at a refusal: every refused
// repository, what was copied before, and errs (the packages' own
// errors) that were not refusals. It returns nil when no refusal came.
func (g *refusalGate) err(errs []error) error {
	if !g.stop {
		return nil
	}
	repos := make([]string, 0, len(g.refuse))
	for r := range g.refuse {
		repos = append(repos, r)
	}
	sort.Strings(repos)
	var copied []string
	notStarted := 0
	var others []error
	for i, p := range g.pkgs {
		switch {
		case g.skip[i]:
			notStarted++
		case errs[i] == nil:
			copied = append(copied, p.Source)
		case !client.IsRepositoryRefused(errs[i]):
			others = append(others, errs[i])
		}
	}
	e := &RepositoriesRefusedError{Repositories: repos, Copied: copied, NotStarted: notStarted}
	for _, r := range repos {
		e.Errs = append(e.Errs, g.refuse[r])
	}
	others = append(others, g.other...)
	if len(others) > 0 {
		return errors.Join(append([]error{e}, others...)...)
	}
	return e
}

// RepositoriesRefusedError is a mirror run stopped because the mirror
// refuses pushes into some of its repositories (they must be created
// first, or their names are not ones it takes): it lists every refused
// repository the run would have written to, found when the first refusal
// came (see refusalGate).
type RepositoriesRefusedError struct {
	// Repositories are the refused repositories, HOST/PATH, sorted.
	Repositories []string
	// Errs are the registry's refusals, explained, one per repository.
	Errs []error
	// Copied are the sources of the packages copied before the run
	// stopped; NotStarted counts the packages it did not start.
	Copied     []string
	NotStarted int
	// BeforeCopy is set when the refusals were found before any package
	// started (refusalGate.preflight): nothing was copied.
	BeforeCopy bool
}

func (e *RepositoriesRefusedError) Error() string {
	var b strings.Builder
	if e.BeforeCopy {
		fmt.Fprintf(&b, "the mirror refuses pushes into %d repositories (every repository of the run was checked before copying; nothing was copied)", len(e.Repositories))
	} else {
		fmt.Fprintf(&b, "the mirror refuses pushes into %d repositories (every repository the run had yet to write to was checked at the first refusal)", len(e.Repositories))
	}
	if e.NotStarted > 0 && !e.BeforeCopy {
		fmt.Fprintf(&b, "; %d packages were not started", e.NotStarted)
	}
	if len(e.Copied) > 0 {
		fmt.Fprintf(&b, "; %d packages were copied before the first refusal (%s)", len(e.Copied), strings.Join(e.Copied, ", "))
	}
	b.WriteString(":")
	for _, err := range e.Errs {
		b.WriteString("\n  - ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the refusals, so that errors.As finds each
// *client.RepositoryRefusedError or *client.AuthError.
func (e *RepositoriesRefusedError) Unwrap() []error { return e.Errs }
