package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
)

// ShardCounts are the shard counts W1 runs `ferry mirror --shard I/N`
// with (issue 14 point 7).
var ShardCounts = []int{1, 2, 4}

// shardMode names a sharded row's mode.
func shardMode(n int) string {
	if n == 1 {
		return "1 shard"
	}
	return fmt.Sprintf("%d shards at once", n)
}

// shardRow returns W1's row for n shards and, for a fresh mirror to
// (DST/mirror) and a scratch directory, the copy: the lock is made first
// (untimed), then n `ferry mirror --lock ferry.lock --shard I/n` processes
// run at once, each with -j Parallel as each machine of a real run would.
// The copy's wall time is the last shard's; its peak RSS the largest
// shard's.
func (res *Results) shardRow(ctx context.Context, roots []string, n int) (*Row, func(dir, to string) func() Exec) {
	cfg := res.Config
	row := &Row{Tool: "ferry mirror --lock --shard", Mode: shardMode(n), Jobs: cfg.Parallel, Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry lock SRC/w1/app-00:v1 … (untimed); for i in 1..%d: ferry mirror --lock ferry.lock --to DST/mirror --shard $i/%d -j %d -o json -q &  # at once", n, n, cfg.Parallel)}
	res.W1 = append(res.W1, row)
	return row, func(scratch, to string) func() Exec {
		dir, _ := os.MkdirTemp(scratch, "ferry-shard-")
		if e := Run(ctx, dir, nil, nil, append(append([]string{cfg.Ferry, "lock"}, roots...), "-q")...); e.Err != nil {
			return func() Exec { return e }
		}
		return func() Exec { return runShards(ctx, dir, cfg.Ferry, to, n, cfg.Parallel) }
	}
}

// runShards runs n shards of dir's ferry.lock to to at once.
func runShards(ctx context.Context, dir, ferry, to string, n, jobs int) Exec {
	out := make([]Exec, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			out[i] = Run(ctx, dir, nil, nil, ferry, "mirror", "--lock", "ferry.lock", "--to", to,
				"--shard", fmt.Sprintf("%d/%d", i+1, n), "-j", fmt.Sprint(jobs), "-o", "json", "-q")
		})
	}
	wg.Wait()
	var all Exec
	for i, e := range out {
		all.Wall = max(all.Wall, e.Wall)
		all.MaxRSS = max(all.MaxRSS, e.MaxRSS)
		if e.Err != nil && all.Err == nil {
			all.Err, all.Stderr = fmt.Errorf("shard %d/%d: %w", i+1, n, e.Err), e.Stderr
		}
	}
	return all
}

// writeShards adds W1's sharded rows' reading to the report: each against
// the unsharded copy from the same lock.
func (res *Results) writeShards(b *strings.Builder) {
	ref := find(res.W1, "ferry mirror --lock", fmt.Sprintf("-j %d", res.Config.Parallel))
	if ref == nil || len(ref.Samples) == 0 {
		return
	}
	refMed, _ := Median(ref.Samples)
	var lines []string
	for _, n := range ShardCounts {
		r := find(res.W1, "ferry mirror --lock --shard", shardMode(n))
		if r == nil || r.status() != "" || len(r.Samples) == 0 {
			continue
		}
		m, _ := Median(r.Samples)
		lines = append(lines, fmt.Sprintf("- %s: %s the unsharded copy's time (%s), %s the bytes sent, %s the requests to the mirror",
			shardMode(n), ratio(m.Wall.Seconds(), refMed.Wall.Seconds()), secs(m.Wall),
			ratio(float64(m.Stats.BytesUp), float64(refMed.Stats.BytesUp)), ratio(float64(m.Stats.Requests), float64(refMed.Stats.Requests))))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "Sharded (`ferry mirror --lock ferry.lock --shard I/N`, N processes at once against the same mirror, each `-j %d`), against `ferry mirror --lock` in one process. All shards run on this one machine, sharing its %d CPUs and the one loopback registry, so this measures sharding's overhead (every shard reads every package's manifests, polls for the other shards' blobs and mounts them), not the speed-up N machines would bring:\n\n%s\n\n",
		res.Config.Parallel, res.NumCPU, strings.Join(lines, "\n"))
}
