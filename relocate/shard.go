package relocate

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/progress"
)

// Sharded mirroring. `ferry mirror --shard I/N` copies one deterministic
// part of a lock, so that N processes (a Kubernetes Indexed Job, a CI
// matrix) mirror it together with no coordination but the mirror itself:
//
//  1. Every shard reads the graph of every package of the lock (manifests
//     only; blobs are not read) and so knows the same set of unique blobs,
//     each with the mirror repositories that need it. A blob's canonical
//     repository is the first of them by name.
//  2. The blobs are dealt to the shards by size, largest first, each to
//     the shard with the fewest bytes so far (ties by digest, then by
//     shard number): balanced and the same in every shard. Each shard
//     uploads the blobs dealt to it into their canonical repositories,
//     skipping those already there: a blob shared by many packages is
//     uploaded once, by one shard.
//  3. The packages (sorted by source and digest) are dealt round-robin.
//     Before copying a package, its shard waits until every blob of the
//     package is in its canonical repository (HEAD, polled with backoff
//     up to the wait limit), so the package's copy mounts each blob
//     rather than uploading it; then the copy pushes the package's
//     manifests (after their blobs, as every copy does), its tag, and its
//     signatures and referrers.
//
// Every step skips what the mirror already has, so a shard that was
// killed is re-run with the same I/N and completes; the others wait for
// its blobs meanwhile. Signature and referrer blobs are copied by the
// shard of their package, not dealt.

// Shard is one part of a sharded mirror run: Index of Count, counted
// from 1 (I/N on the command line).
type Shard struct {
	Index int
	Count int
}

// ParseShard reads I/N (1 ≤ I ≤ N), or auto/N, whose I comes from the
// environment (ParseShardEnv with os.Getenv).
func ParseShard(s string) (Shard, error) { return ParseShardEnv(s, os.Getenv) }

// ShardIndexVars are the variables auto/N reads, in order: a Kubernetes
// Indexed Job's JOB_COMPLETION_INDEX, counted from 0
// (kubernetes/pkg/controller/job/indexed_job_utils.go sets it in every
// pod), and GitLab CI's CI_NODE_INDEX of `parallel: N`, counted from 1.
var ShardIndexVars = []string{"JOB_COMPLETION_INDEX", "CI_NODE_INDEX"}

// ParseShardEnv reads I/N, or auto/N, taking I from getenv: the first of
// ShardIndexVars that is set, plus one for JOB_COMPLETION_INDEX. With
// auto, a pod of an Indexed Job runs `ferry mirror --shard auto/4` with no
// shell to compute the index.
func ParseShardEnv(s string, getenv func(string) string) (Shard, error) {
	i, n, ok := strings.Cut(s, "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want I/N, for example 1/4, or auto/N", s)
	}
	if strings.TrimSpace(i) == "auto" {
		found := false
		for _, v := range ShardIndexVars {
			val := strings.TrimSpace(getenv(v))
			if val == "" {
				continue
			}
			k, err := strconv.Atoi(val)
			if err != nil {
				return Shard{}, fmt.Errorf("shard %q: $%s=%q is not a number", s, v, val)
			}
			if v == "JOB_COMPLETION_INDEX" {
				k++
			}
			i, found = strconv.Itoa(k), true
			break
		}
		if !found {
			return Shard{}, fmt.Errorf("shard %q: auto takes the index from $%s, and none is set", s, strings.Join(ShardIndexVars, " or $"))
		}
	}
	idx, err := strconv.Atoi(strings.TrimSpace(i))
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: I is not a number: %w", s, err)
	}
	cnt, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return Shard{}, fmt.Errorf("shard %q: N is not a number: %w", s, err)
	}
	if cnt < 1 || idx < 1 || idx > cnt {
		return Shard{}, fmt.Errorf("shard %q (%d/%s): want 1 ≤ I ≤ N (shards are counted from 1)", s, idx, strings.TrimSpace(n))
	}
	return Shard{Index: idx, Count: cnt}, nil
}

// String returns I/N.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ShardReport counts what one shard did.
type ShardReport struct {
	// Index and Count name the shard (I/N, from 1).
	Index int `json:"index"`
	Count int `json:"count"`
	// Blobs and Packages are the lock's unique blobs and packages, all
	// shards together.
	Blobs    int `json:"blobs"`
	Packages int `json:"packages"`
	// Owned is the number of blobs dealt to this shard, OwnedBytes their size.
	Owned      int   `json:"owned"`
	OwnedBytes int64 `json:"ownedBytes"`
	// Uploaded counts the owned blobs this run sent (Bytes their size);
	// the others were already in the mirror.
	Uploaded int   `json:"uploaded"`
	Bytes    int64 `json:"bytes"`
	// Copied is the number of packages whose manifests, tag and
	// signatures this shard copied (listed in the report's packages).
	Copied int `json:"copied"`
	// Waited counts the blobs of other shards this shard had to wait for.
	Waited int `json:"waited"`
}

// ShardOptions configures MirrorShard.
type ShardOptions struct {
	Shard Shard
	// Wait bounds how long a package waits for the blobs other shards
	// upload (default 1h).
	Wait time.Duration
	// Poll is the backoff between polls for those blobs (default: from
	// 100ms doubling to 5s).
	Poll client.RetryPolicy
	// Log, when set, gets a line when the shard's uploads end and when a
	// package starts waiting for other shards' blobs.
	Log func(format string, args ...any)
}

func (so ShardOptions) logf(format string, args ...any) {
	if so.Log != nil {
		so.Log(format, args...)
	}
}

// shardBlob is one unique blob of a lock.
type shardBlob struct {
	desc ocispec.Descriptor
	// canon is the first mirror repository that needs it; from is the
	// package read to upload it there.
	canon string
	from  *lock.Package
	owner int
}

// MirrorShard copies the part of l's mirror that opts.Shard owns (see
// the comment above) and records every package's mirror repository in l,
// as Mirror does, so every shard writes the same lock. The report lists
// the packages this shard copied, and its Shard counts.
func MirrorShard(ctx context.Context, l *lock.Lock, opts Options, so ShardOptions) (*Report, error) {
	sh := so.Shard
	if sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count {
		return nil, fmt.Errorf("shard %s: want 1 ≤ I ≤ N", sh)
	}
	if so.Wait <= 0 {
		so.Wait = time.Hour
	}
	if so.Poll == (client.RetryPolicy{}) {
		so.Poll = client.RetryPolicy{Backoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = 4
	}
	if opts.Target == nil {
		opts.Target = opts.Source
	}
	opts.To = opts.To.WithFormats(opts.Formats)
	pkgs := l.Resolved()
	sort.SliceStable(pkgs, func(i, j int) bool { return pkgs[i].Source+pkgs[i].Digest < pkgs[j].Source+pkgs[j].Digest })
	broken, err := checkDestination(l, pkgs, opts)
	if err != nil {
		return nil, err
	}
	if err := checkRegistry(ctx, opts); err != nil {
		return nil, err
	}
	blobs, graphs, err := shardBlobs(ctx, pkgs, opts)
	if err != nil {
		return nil, err
	}
	dealBlobs(blobs, sh.Count)
	sr := &ShardReport{Index: sh.Index, Count: sh.Count, Blobs: len(blobs), Packages: len(pkgs)}
	led := newLedger(opts.Concurrency)
	led.journal = openJournal(opts.JournalDir)
	for _, b := range blobs {
		led.add(b.canon, b.desc.Digest)
	}
	present := &sync.Map{} // digest → true once seen in its canonical repository
	if err := uploadOwned(ctx, blobs, sh, opts, led, sr, present); err != nil {
		// A repository refused (it must be created first): every
		// repository this shard writes to is checked, and listed at once.
		repos, n := shardRepos(pkgs, blobs, sh, opts)
		return nil, shardRefused(ctx, err, repos, n, opts)
	}
	so.logf("shard %s: uploaded %d of the %d blobs dealt to it (%d bytes), the others were in the mirror", sh, sr.Uploaded, sr.Owned, sr.Bytes)

	var mine []*lock.Package
	var mineBlobs [][]ocispec.Descriptor
	for i, p := range pkgs {
		if i%sh.Count == sh.Index-1 {
			mine = append(mine, p)
			mineBlobs = append(mineBlobs, graphs[i])
		}
	}
	rep := progress.Or(opts.Reporter)
	rep.AddPackages(len(mine))
	byDigest := map[digest.Digest]*shardBlob{}
	for _, b := range blobs {
		byDigest[b.desc.Digest] = b
	}
	var waited atomic.Int64
	results, err := copyPackages(ctx, mine, opts, led, rep, func(i int) error {
		var need []*shardBlob
		for _, d := range mineBlobs[i] {
			need = append(need, byDigest[d.Digest])
		}
		n, err := waitBlobs(ctx, mine[i].Source, need, opts, so, present)
		waited.Add(int64(n))
		return err
	})
	if err != nil {
		return nil, err
	}
	sr.Copied = len(mine)
	sr.Waited = int(waited.Load())
	for _, p := range pkgs {
		p.Mirror = opts.To.Repo(p.Source)
	}
	return &Report{To: opts.To.String(), Packages: results, Shard: sr, BrokenReferences: broken}, nil
}

// walkBlobs returns the blobs (the non-manifest nodes) of the graph under
// p's root, read from p's origin, by digest.
func walkBlobs(ctx context.Context, p *lock.Package, opts Options) ([]ocispec.Descriptor, error) {
	src, err := opts.openSource(p)
	if err != nil {
		return nil, err
	}
	root := p.Descriptor()
	seen := map[digest.Digest]bool{}
	var out []ocispec.Descriptor
	next := []ocispec.Descriptor{root}
	for len(next) > 0 {
		d := next[0]
		next = next[1:]
		if seen[d.Digest] {
			continue
		}
		seen[d.Digest] = true
		if !isManifest(d.MediaType) {
			out = append(out, d)
			continue
		}
		succ, err := content.Successors(ctx, src, d)
		if err != nil {
			return nil, fmt.Errorf("reading %s of %s: %w", d.Digest, p.Source, err)
		}
		next = append(next, succ...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest < out[j].Digest })
	return out, nil
}

// shardBlobs returns the unique blobs of pkgs (sorted by source and
// digest), by digest, each with its canonical repository, and the blobs
// of each package's graph.
func shardBlobs(ctx context.Context, pkgs []*lock.Package, opts Options) ([]*shardBlob, [][]ocispec.Descriptor, error) {
	graphs := make([][]ocispec.Descriptor, len(pkgs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for i, p := range pkgs {
		g.Go(func() error {
			var err error
			graphs[i], err = walkBlobs(gctx, p, opts)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	byDigest := map[digest.Digest]*shardBlob{}
	for i, p := range pkgs {
		repo := opts.To.Repo(p.Source)
		for _, d := range graphs[i] {
			b := byDigest[d.Digest]
			if b == nil {
				byDigest[d.Digest] = &shardBlob{desc: d, canon: repo, from: p}
				continue
			}
			if repo < b.canon {
				b.canon, b.from = repo, p
			}
		}
	}
	out := make([]*shardBlob, 0, len(byDigest))
	for _, b := range byDigest {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].desc.Digest < out[j].desc.Digest })
	return out, graphs, nil
}

// dealBlobs deals blobs to n shards (owner 1..n): largest first, each to
// the shard with the fewest bytes so far, the lowest-numbered on a tie.
func dealBlobs(blobs []*shardBlob, n int) {
	order := slices.Clone(blobs)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].desc.Size != order[j].desc.Size {
			return order[i].desc.Size > order[j].desc.Size
		}
		return order[i].desc.Digest < order[j].desc.Digest
	})
	load := make([]int64, n)
	for _, b := range order {
		best := 0
		for s := 1; s < n; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		b.owner = best + 1
		load[best] += b.desc.Size
	}
}

// uploadOwned uploads the blobs dealt to sh into their canonical
// repositories, skipping those already there.
func uploadOwned(ctx context.Context, blobs []*shardBlob, sh Shard, opts Options, led *ledger, sr *ShardReport, present *sync.Map) error {
	var uploaded, sent atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Concurrency)
	for _, b := range blobs {
		if b.owner != sh.Index {
			continue
		}
		sr.Owned++
		sr.OwnedBytes += b.desc.Size
		g.Go(func() error {
			src, err := opts.openSource(b.from)
			if err != nil {
				return err
			}
			dst, err := opts.Target.Repository(b.canon)
			if err != nil {
				return err
			}
			// A shard cut short leaves blobs in a repository that may hold
			// no tag yet: the journal keeps the next run from taking it
			// for fresh (known.go).
			led.journal.mark(b.canon)
			copts := oras.CopyGraphOptions{
				Concurrency: 1,
				PostCopy: func(context.Context, ocispec.Descriptor) error {
					uploaded.Add(1)
					sent.Add(b.desc.Size)
					return nil
				},
			}
			if err := oras.CopyGraph(gctx, limited{ReadOnlyStorage: src, slots: led.slots, open: led.open}, RetryingTarget(dst, limited{ReadOnlyStorage: src, slots: led.slots}, opts.Retry), b.desc, copts); err != nil {
				return fmt.Errorf("uploading %s to %s: %w", b.desc.Digest, b.canon, err)
			}
			present.Store(b.desc.Digest, true)
			return nil
		})
	}
	err := g.Wait()
	sr.Uploaded, sr.Bytes = int(uploaded.Load()), sent.Load()
	return err
}

// waitBlobs waits until every blob of need is in its canonical repository,
// polling with so.Poll's backoff for at most so.Wait. It returns how many
// blobs it found missing at first.
func waitBlobs(ctx context.Context, what string, need []*shardBlob, opts Options, so ShardOptions, present *sync.Map) (int, error) {
	var missing []*shardBlob
	for _, b := range need {
		if _, ok := present.Load(b.desc.Digest); !ok {
			missing = append(missing, b)
		}
	}
	first := -1
	deadline := time.Now().Add(so.Wait)
	for attempt := 0; ; attempt++ {
		var still []*shardBlob
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(opts.Concurrency)
		for _, b := range missing {
			g.Go(func() error {
				dst, err := opts.Target.Repository(b.canon)
				if err != nil {
					return err
				}
				ok, err := dst.Blobs().Exists(gctx, b.desc)
				if err != nil && !client.IsTransient(err) {
					return fmt.Errorf("looking for %s in %s: %w", b.desc.Digest, b.canon, err)
				}
				if ok {
					present.Store(b.desc.Digest, true)
					return nil
				}
				mu.Lock()
				still = append(still, b)
				mu.Unlock()
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return max(first, 0), err
		}
		if len(still) == 0 {
			return max(first, 0), nil
		}
		var owners []int
		for _, b := range still {
			if !slices.Contains(owners, b.owner) {
				owners = append(owners, b.owner)
			}
		}
		sort.Ints(owners)
		if first < 0 {
			first = len(still)
			so.logf("%s waits for %d blobs the shards %v upload", what, len(still), owners)
		}
		missing = still
		wait := so.Poll.Wait(attempt, 0)
		if time.Now().Add(wait).After(deadline) {
			return first, fmt.Errorf("waited %s for %d blobs the shards %v upload (%s in %s): run those shards (a killed shard is run again with the same I/N)",
				so.Wait, len(still), owners, still[0].desc.Digest, still[0].canon)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return first, ctx.Err()
		}
	}
}

// shardRepos returns the destination repositories shard sh writes to:
// the canonical repositories of the blobs it owns and its packages'
// repositories, each once, and how many packages are its.
func shardRepos(pkgs []*lock.Package, blobs []*shardBlob, sh Shard, opts Options) ([]string, int) {
	seen := map[string]bool{}
	var repos []string
	add := func(r string) {
		if !seen[r] {
			seen[r] = true
			repos = append(repos, r)
		}
	}
	for _, b := range blobs {
		if b.owner == sh.Index {
			add(b.canon)
		}
	}
	n := 0
	for i, p := range pkgs {
		if i%sh.Count == sh.Index-1 {
			add(opts.To.Repo(p.Source))
			n++
		}
	}
	return repos, n
}
