package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ferryhq/ferry/client"
)

// boundRow returns the row of W1's bound for repos repositories; note,
// if any, ends its command line's comment.
func (res *Results) boundRow(repos int, note string) *Row {
	if note != "" {
		note = "; " + note
	}
	return &Row{Tool: BoundTool, Mode: "every repository at once", DigestsOK: true,
		Command: fmt.Sprintf("benchbound --from SRC --to DST/mirror w1/app-00:v1 … w1/app-%02d:v1  # the minimal client, internal/cmd/benchbound%s", repos-1, note)}
}

// medians says what a ratio of medians over n runs is taken from.
func medians(n int) string {
	if n == 1 {
		return "one run of each tool (BENCH_RUNS=1: no median)"
	}
	return fmt.Sprintf("medians of %d alternating runs (each run number runs every tool once, in turn, starting at a different tool each time, in this one session)", n)
}

// boundArgs is the command line copying refs from (HOST) to to
// (HOST/PREFIX) with the bound.
func (res *Results) boundArgs(from, to string, refs []Ref) []string {
	args := append(append([]string(nil), res.Config.Bound...), "--from", from, "--to", to)
	for _, r := range refs {
		args = append(args, r.Repo+":"+r.Tag)
	}
	return args
}

// newDelayedTarget is newTarget with a proxy adding delay to every
// request, its storage on a memory file system when inMemory is set and
// the machine has one (memoryDir).
func newDelayedTarget(ctx context.Context, cfg Config, name string, delay time.Duration, inMemory bool) (*target, error) {
	mkdir := os.MkdirTemp
	if inMemory {
		mkdir = memoryDir
	}
	dir, err := mkdir(cfg.Work, name+"-")
	if err != nil {
		return nil, err
	}
	reg, err := StartRegistry(ctx, cfg.Ferry, dir)
	if err != nil {
		return nil, err
	}
	p, err := StartProxy(reg.Addr, delay)
	if err != nil {
		reg.Close()
		return nil, err
	}
	return &target{reg: reg, proxy: p, dir: dir}, nil
}

// runW1Lat measures W1 with Config.W1Delay added to every request on both
// sides (issue 14 point 2) into rows: the source is read through a
// delaying proxy and every fresh mirror, its storage in memory when
// inMemory is set, is written through another. ferry -j Parallel, the
// bound and the peers Parallel-way run once each per run number, in turn.
func (res *Results) runW1Lat(ctx context.Context, c *client.Client, src *Registry, rows *[]*Row, inMemory bool) error {
	cfg := res.Config
	refs, err := res.genW1(ctx, c, src)
	if err != nil {
		return err
	}
	sp, err := StartProxy(src.Addr, cfg.W1Delay)
	if err != nil {
		return err
	}
	defer sp.Close()
	where := "on disk"
	if inMemory {
		where = "in memory"
	}
	cfg.logf("W1-latency, mirrors %s: source through proxy %s adding %s per request", where, sp.Addr, cfg.W1Delay)
	roots := make([]string, len(refs))
	for i, r := range refs {
		roots[i] = sp.Addr + "/" + r.Repo + ":" + r.Tag
	}
	note := fmt.Sprintf("SRC and DST each through a proxy adding %s per request", cfg.W1Delay)
	type cell struct {
		row  *Row
		prep func(ctx context.Context, hosts ...string) error
		run  func(t *target) Exec
	}
	var cells []cell
	j := cfg.Parallel
	ferryRow := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", j), Jobs: j, Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry mirror SRC/w1/app-00:v1 … SRC/w1/app-%02d:v1 --to DST/mirror -j %d -o json -q  # %s", len(refs)-1, j, note)}
	*rows = append(*rows, ferryRow)
	cells = append(cells, cell{row: ferryRow, run: func(t *target) Exec {
		dir, _ := os.MkdirTemp(t.dir, "ferry-")
		args := append([]string{cfg.Ferry, "mirror"}, roots...)
		args = append(args, "--to", t.proxy.Addr+"/mirror", "-j", fmt.Sprint(j), "-o", "json", "-q")
		return Run(ctx, dir, nil, nil, args...)
	}})
	if len(cfg.Bound) > 0 {
		row := res.boundRow(len(refs), note)
		*rows = append(*rows, row)
		cells = append(cells, cell{row: row, run: func(t *target) Exec {
			return Run(ctx, t.dir, nil, nil, res.boundArgs(sp.Addr, t.proxy.Addr+"/mirror", refs)...)
		}})
	}
	for _, p := range res.Peers {
		row := &Row{Tool: p.Name, Mode: fmt.Sprintf("%d-way parallel", j), Version: p.Version, Unavailable: p.Unavailable, DigestsOK: true,
			Command: fmt.Sprintf("xargs -P %d -L 1 %s %s < pairs  # %d lines: %s; %s", j, p.Bin, strings.Join(p.Args, " "), len(refs),
				p.Line("SRC/w1/app-NN:v1", "DST/mirror/w1/app-NN:v1"), note)}
		*rows = append(*rows, row)
		if p.Unavailable != "" {
			continue
		}
		cells = append(cells, cell{row: row, prep: p.Prepare, run: func(t *target) Exec {
			var lines strings.Builder
			for i, r := range refs {
				fmt.Fprintln(&lines, p.Line(roots[i], t.proxy.Addr+"/mirror/"+r.Repo+":"+r.Tag))
			}
			args := append([]string{"xargs", "-P", fmt.Sprint(j), "-L", "1", p.Path}, p.Args...)
			return Run(ctx, t.dir, p.Env, []byte(lines.String()), args...)
		}})
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, cl := range Rotated(cells, run, cfg.Runs) {
			row := cl.row
			if row.Failed != "" {
				continue
			}
			cfg.logf("W1-latency (mirrors %s) run %d/%d: %s %s", where, run, cfg.Runs, row.Tool, row.Mode)
			t, err := newDelayedTarget(ctx, cfg, "w1lat", cfg.W1Delay, inMemory)
			if err != nil {
				return err
			}
			if cl.prep != nil {
				if err := cl.prep(ctx, sp.Addr, t.proxy.Addr); err != nil {
					row.Failed = err.Error()
					t.close()
					continue
				}
			}
			e, st, sst, ok := t.measureCopy(ctx, &cfg, c, row, sp, refs, false, func() Exec { return cl.run(t) })
			if !ok {
				continue
			}
			cfg.logf("  %.2fs, %d requests to the mirror, %d to the source", e.Wall.Seconds(), st.Requests, sst.Requests)
			t.close()
		}
	}
	return nil
}

// isPeer reports whether r is a peer tool's row.
func (res *Results) isPeer(r *Row) bool {
	for _, p := range res.Peers {
		if p.Name == r.Tool {
			return true
		}
	}
	return false
}

// bestPeer returns the peer row of rows with the shortest median of the
// samples pick returns, and that median.
func (res *Results) bestPeer(rows []*Row, pick func(*Row) []Sample) (*Row, Sample) {
	var best *Row
	var bm Sample
	for _, r := range rows {
		if !res.isPeer(r) || r.status() != "" {
			continue
		}
		if m, ok := Median(pick(r)); ok && (best == nil || m.Wall < bm.Wall) {
			best, bm = r, m
		}
	}
	return best, bm
}

func samples(r *Row) []Sample { return r.Samples }
func reruns(r *Row) []Sample  { return r.Rerun }

// verdict says whether r meets "at most target".
func verdict(r, target float64) string {
	switch {
	case r <= 0:
		return "no figure"
	case r <= target:
		return "met"
	}
	return "**not met**"
}

// against renders "NAME MODE's TIME", or "" when r is nil.
func against(r *Row, m Sample) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("%s %s, %s", r.Tool, r.Mode, secs(m.Wall))
}

// w1Target is W1's request budget onto a fresh mirror, in all (issue 14
// point 3).
const w1Target = 700

// writeW1Targets writes issue 14's W1 and W4 targets against ref, ferry
// -j Parallel's row.
func (res *Results) writeW1Targets(b *strings.Builder, ref *Row) {
	cfg := res.Config
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	fm, ok := Median(ref.Samples)
	if !ok {
		return
	}
	f := fm.Wall.Seconds()
	p("Issue 14's targets, from %s:\n\n", medians(cfg.Runs))
	bm, bok := boundMedian(res.W1)
	if bok {
		p("- ferry mirror -j %d ÷ the bound: **%s** (%s ÷ %s); target ≤ 1.10: %s\n", cfg.Parallel, ratio(f, bm.Wall.Seconds()), secs(fm.Wall), secs(bm.Wall), verdict(f/bm.Wall.Seconds(), 1.10))
	}
	if best, pm := res.bestPeer(res.W1, samples); best != nil {
		p("- ferry mirror -j %d ÷ the best peer (%s): **%s**; target ≤ 0.45: %s\n", cfg.Parallel, against(best, pm), ratio(f, pm.Wall.Seconds()), verdict(f/pm.Wall.Seconds(), 0.45))
		if bok {
			p("%s", floorLine(bm, pm, "on this machine"))
		}
		p("%s", spreadLine(ref, find(res.W1, BoundTool, "every repository at once"), best))
	}
	all := fm.Stats.Requests + fm.Source.Requests
	p("- requests in all onto a fresh mirror, ferry mirror -j %d: **%d** (%d to the mirror, %d to the source); target ≤ %d: %s\n",
		cfg.Parallel, all, fm.Stats.Requests, fm.Source.Requests, w1Target, verdict(float64(all), w1Target))
	p("\n")
	res.writeW1Kinds(b, ref)
	p("The bound (`benchbound`: internal/cmd/benchbound, internal/bench/bound) is the least a client can ask: per repository a GET of the index and of the image manifest, a GET from the source and a POST and a PUT to the mirror for each blob (the GET and the POST at once, the PUT streaming the GET), the shared base layer uploaded once and mounted into every other repository once it is there, the image manifest PUT by digest and the index by tag; every repository at once; no HEAD, no ping, no tag list, no signature or referrers probe. It trusts the mirror to be empty, so it has no W4 re-run. It runs as a small process of its own (it imports nothing but net/http and the OCI types), so its time includes starting up, as every other tool's does.\n\n")
}

// kindOrder orders the per-kind table's columns.
var kindOrder = []string{"ping", "tags", "manifest HEAD", "manifest GET", "blob HEAD", "blob GET", "referrers",
	"upload POST", "upload POST ?mount", "upload PATCH", "upload PUT", "manifest PUT", "other"}

// kinds returns s's requests by kind, mount POSTs apart from upload POSTs.
func kinds(s Stats) map[string]int {
	k := make(map[string]int, len(s.ByKind)+1)
	for n, v := range s.ByKind {
		k[n] = v
	}
	if m := s.Mounts + s.MountMisses; m > 0 {
		k["upload POST"] -= m
		k["upload POST ?mount"] = m
		if k["upload POST"] == 0 {
			delete(k, "upload POST")
		}
	}
	return k
}

// writeW1Kinds writes W1's requests by kind, to the mirror and to the
// source, for ferry -j Parallel (ref), the bound and the peers' parallel
// rows, each with its total in all.
func (res *Results) writeW1Kinds(b *strings.Builder, ref *Row) {
	cfg := res.Config
	rows := []*Row{ref}
	if bound := find(res.W1, BoundTool, "every repository at once"); bound != nil {
		rows = append(rows, bound)
	}
	for _, r := range res.W1 {
		if res.isPeer(r) && r.Mode == fmt.Sprintf("%d-way parallel", cfg.Parallel) {
			rows = append(rows, r)
		}
	}
	type side struct {
		row   *Row
		name  string
		k     map[string]int
		total int
		all   int
	}
	var sides []side
	used := map[string]bool{}
	for _, r := range rows {
		m, ok := Median(r.Samples)
		if r.status() != "" || !ok {
			continue
		}
		for i, st := range []Stats{m.Stats, m.Source} {
			s := side{row: r, name: "mirror", k: kinds(st), total: st.Requests}
			if i == 0 {
				s.all = m.Stats.Requests + m.Source.Requests
			} else {
				s.name = "source"
			}
			for n := range s.k {
				used[n] = true
			}
			sides = append(sides, s)
		}
	}
	if len(sides) == 0 {
		return
	}
	cols := []string{}
	for _, n := range kindOrder {
		if used[n] {
			cols = append(cols, n)
			delete(used, n)
		}
	}
	for n := range used { // kinds outside kindOrder, in any order
		cols = append(cols, n)
	}
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("W1's requests by kind onto a fresh mirror (the median run's; `upload POST ?mount` are cross-repository mounts, accepted or not; in all = to the mirror + to the source, target ≤ %d):\n\n", w1Target)
	p("| tool | mode | to | %s | requests | in all |\n|---|---|---|%s---:|---:|\n", strings.Join(cols, " | "), strings.Repeat("---:|", len(cols)))
	for _, s := range sides {
		tool, mode, all := s.row.Tool, s.row.Mode, ""
		if s.name == "source" {
			tool, mode = "", ""
		} else {
			all = fmt.Sprintf("**%d**", s.all)
		}
		p("| %s | %s | %s |", tool, mode, s.name)
		for _, c := range cols {
			if v := s.k[c]; v != 0 {
				p(" %d |", v)
			} else {
				p(" |")
			}
		}
		p(" %d | %s |\n", s.total, all)
	}
	p("\n")
}

// writeW4Target writes issue 14's W4 target: ferry's re-run sends nothing
// and takes at most half the best peer's re-run.
func (res *Results) writeW4Target(b *strings.Builder, ref *Row) {
	fm, ok := Median(ref.Rerun)
	if !ok {
		return
	}
	st := fm.Stats
	writes := st.ByKind["upload POST"] + st.ByKind["upload PATCH"] + st.ByKind["upload PUT"] + st.ByKind["manifest PUT"]
	sent := "yes"
	if st.BytesUp != 0 || writes != 0 {
		sent = "**no**"
	}
	fmt.Fprintf(b, "Issue 14's W4 target: ferry %s's re-run sent nothing (%s, %d writes, %d requests): %s", ref.Mode, Bytes(st.BytesUp), writes, st.Requests, sent)
	if best, bm := res.bestPeer(res.W1, reruns); best != nil {
		fmt.Fprintf(b, "; ÷ the best peer's re-run (%s): **%s**, target ≤ 0.5: %s", against(best, bm), ratio(fm.Wall.Seconds(), bm.Wall.Seconds()), verdict(fm.Wall.Seconds()/bm.Wall.Seconds(), 0.5))
	}
	fmt.Fprintf(b, ".\n\n")
}

// writeW1Lat writes W1 with latency (issue 14 point 2): the mirrors in
// memory (W1Lat) and on disk (W1LatDisk), when both were measured.
func (res *Results) writeW1Lat(b *strings.Builder) {
	cfg := res.Config
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## W1 with latency\n\n")
	p("W1 again (the same %d repositories), every tool reading the source through a proxy that sleeps %s before forwarding each request and writing each fresh mirror through another: a registry far away on both sides. ferry with -j %d, the bound, and the peers %d-way parallel, each run number running every tool once, in turn, from a different starting tool each time.\n\n",
		len(res.w1Refs), cfg.W1Delay, cfg.Parallel, cfg.Parallel)
	if len(res.W1LatDisk) == 0 {
		res.writeW1LatTable(b, res.W1Lat)
		return
	}
	p("This workload measures what a network's latency costs each tool, so it runs twice. First with each fresh mirror's storage on a memory file system (/dev/shm), so that the time is the tools' round trips and transfers; then, the same way, with the storage on this machine's disk, as in W1. On a virtual machine's shared disk the destination registry's writes (distribution syncs every file it writes: ~11 fsyncs per blob upload) take an uneven time that no client controls%s.\n\n", res.w1LatSpread())
	p("Issue 14's target is judged on the first table, which measures what it asks about: the tools' round trips on a slow network. The second shows where this machine's disk puts the floor: there ferry is about as fast as the bound, and the bound's own ratio to the best peer is the least any client's can be.\n\n")
	p("### Mirrors in memory\n\n")
	res.writeW1LatTable(b, res.W1Lat)
	p("### Mirrors on disk\n\n")
	res.writeW1LatTable(b, res.W1LatDisk)
}

// writeW1LatTable writes one W1-with-latency table, its target and its
// commands.
func (res *Results) writeW1LatTable(b *strings.Builder, rows []*Row) {
	cfg := res.Config
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	ref := find(rows, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel))
	if ref == nil {
		ref = &Row{}
	}
	fm, fok := Median(ref.Samples)
	p("| tool | mode | time | vs ferry -j %d | requests to mirror | requests to source | in all | sent to mirror | mounts | digests |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---|\n", cfg.Parallel)
	for _, r := range rows {
		if s := r.status(); s != "" {
			p("| %s | %s | %s | | | | | | | |\n", r.Tool, r.Mode, s)
			continue
		}
		m, _ := Median(r.Samples)
		ok := r.digestsCell()
		p("| %s | %s | %s | %s | %d | %d | %d | %s | %d | %s |\n", r.Tool, r.Mode, secs(m.Wall), ratio(m.Wall.Seconds(), fm.Wall.Seconds()),
			m.Stats.Requests, m.Source.Requests, m.Stats.Requests+m.Source.Requests, Bytes(m.Stats.BytesUp), m.Stats.Mounts, ok)
	}
	p("\n")
	if fok {
		f := fm.Wall.Seconds()
		p("Issue 14's target, from %s:\n\n", medians(cfg.Runs))
		best, pm := res.bestPeer(rows, samples)
		if best != nil {
			p("- ferry mirror -j %d ÷ the best peer (%s): **%s**; target ≤ 0.40: %s\n", cfg.Parallel, against(best, pm), ratio(f, pm.Wall.Seconds()), verdict(f/pm.Wall.Seconds(), 0.40))
		}
		if bm, ok := boundMedian(rows); ok {
			p("- ferry mirror -j %d ÷ the bound: %s (%s ÷ %s); no target with latency\n", cfg.Parallel, ratio(f, bm.Wall.Seconds()), secs(fm.Wall), secs(bm.Wall))
			if best != nil {
				p("%s", floorLine(bm, pm, "here"))
			}
		}
		p("\n")
	}
	p("```sh\n")
	for _, r := range rows {
		p("%s\n", r.Command)
	}
	p("```\n\n")
}

// w1LatSpread says how far apart ferry -j Parallel's runs were on disk and
// in memory, or "" when either has fewer than two.
func (res *Results) w1LatSpread() string {
	spread := func(rows []*Row) (lo, hi time.Duration, n int) {
		r := find(rows, "ferry mirror", fmt.Sprintf("-j %d", res.Config.Parallel))
		if r == nil {
			return 0, 0, 0
		}
		return wallRange(r.Samples)
	}
	dl, dh, n := spread(res.W1LatDisk)
	ml, mh, m := spread(res.W1Lat)
	if n < 2 || m < 2 {
		return ""
	}
	return fmt.Sprintf(": in this run ferry's %d runs took %s to %s on disk, and %s to %s in memory", n, secs(dl), secs(dh), secs(ml), secs(mh))
}

// wallRange returns the shortest and longest wall time of samples, and
// how many there are.
func wallRange(samples []Sample) (lo, hi time.Duration, n int) {
	for i, s := range samples {
		if i == 0 {
			lo, hi = s.Wall, s.Wall
		}
		lo, hi = min(lo, s.Wall), max(hi, s.Wall)
	}
	return lo, hi, len(samples)
}

// spreadLine says, for W1's targets, how far apart the runs behind the
// medians were: ferry's, the bound's and the best peer's. A verdict whose
// ratio is closer to its target than these spreads can turn with the next
// run. "" with fewer than two runs.
func spreadLine(ferry, bound, peer *Row) string {
	var parts []string
	for _, r := range []*Row{ferry, bound, peer} {
		if r == nil {
			continue
		}
		lo, hi, n := wallRange(r.Samples)
		if n < 2 {
			return ""
		}
		parts = append(parts, fmt.Sprintf("%s %s %s to %s", r.Tool, r.Mode, secs(lo), secs(hi)))
	}
	return "- the runs behind these medians took: " + strings.Join(parts, "; ") + "\n"
}

// boundMedian returns the median sample of the bound's row of rows, when
// it has one.
func boundMedian(rows []*Row) (Sample, bool) {
	bound := find(rows, BoundTool, "every repository at once")
	if bound == nil || bound.status() != "" {
		return Sample{}, false
	}
	return Median(bound.Samples)
}

// floorLine is the report's line dividing the bound's time by the best
// peer's: no client's ratio to that peer can be lower where (a place:
// "here", "on this machine") they were measured.
func floorLine(bound, peer Sample, where string) string {
	return fmt.Sprintf("- the bound ÷ the best peer: %s, the least any client's ratio can be %s\n", ratio(bound.Wall.Seconds(), peer.Wall.Seconds()), where)
}
