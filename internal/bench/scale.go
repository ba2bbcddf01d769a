package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ferryhq/ferry/client"
)

// ScaleSpec sizes the scale benchmark (issue 14): W1-shaped repositories
// with small content mirrored at several counts, the resolution of
// synthetic Porter closures of several sizes, and ferry's in-process
// bookkeeping at several package counts.
type ScaleSpec struct {
	// Shape is each repository's content; its Repos is ignored.
	Shape W1Spec
	// Repos are the repository counts mirrored (40, 200, 1,000).
	Repos []int
	// OnceAbove: counts above it run once whatever Config.Runs says.
	OnceAbove int
	// Packages are the closure sizes resolved (1,000, 10,000).
	Packages []int
	// Tags are each package's tags in the resolved closures.
	Tags int
	// Bookkeeping are the package counts of the in-process timing
	// (1,000, 10,000, 30,000).
	Bookkeeping []int
}

// runs returns how many times a figure at size n runs.
func (s ScaleSpec) runs(cfg Config, n int) int {
	if s.OnceAbove > 0 && n > s.OnceAbove {
		return 1
	}
	return cfg.Runs
}

// describe renders the shape of a repository for the report.
func (s W1Spec) describe() string {
	return fmt.Sprintf("each an OCI index over one linux/amd64 image: a %s base layer shared by all plus %s and %s layers unique to the repository", Bytes(s.Base), Bytes(s.Unique1), Bytes(s.Unique2))
}

// ScaleResults is what the scale benchmark measured.
type ScaleResults struct {
	Spec ScaleSpec `json:"spec"`
	// Gen is how long generating the source's repositories took.
	Gen time.Duration `json:"gen"`
	// GenRepos is how many repositories were generated.
	GenRepos int `json:"genRepos"`
	// Mirror holds, for each repository count, ferry's and crane's rows.
	Mirror []*ScaleMirror `json:"mirror"`
	// Resolve holds the closures resolved.
	Resolve []*ResolveScale `json:"resolve"`
	// Bookkeeping holds the in-process timings.
	Bookkeeping []*BookkeepingRun `json:"bookkeeping"`
}

// ScaleMirror is one repository count of the scale benchmark.
type ScaleMirror struct {
	Repos int    `json:"repos"`
	Rows  []*Row `json:"rows"`
}

// scaleSource is the scale and mounts benchmarks' source registry: W1's
// shape with small content, generated once for the largest count needed.
type scaleSource struct {
	reg   *Registry
	proxy *Proxy
	spec  W1Spec
	refs  []Ref
	gen   time.Duration
}

func startScaleSource(ctx context.Context, c *client.Client, cfg Config, repos int) (*scaleSource, error) {
	reg, err := StartRegistry(ctx, cfg.Ferry, filepath.Join(cfg.Work, "scale-source"))
	if err != nil {
		return nil, err
	}
	p, err := StartProxy(reg.Addr, 0)
	if err != nil {
		reg.Close()
		return nil, err
	}
	s := &scaleSource{reg: reg, proxy: p, spec: cfg.Scale.Shape}
	s.spec.Repos = repos
	cfg.logf("scale: generating %d repositories (%s shared, %s + %s unique each)", repos, Bytes(s.spec.Base), Bytes(s.spec.Unique1), Bytes(s.spec.Unique2))
	start := time.Now()
	if s.refs, err = PushW1(ctx, c, reg.Addr, s.spec); err != nil {
		s.close()
		return nil, fmt.Errorf("scale: generating: %w", err)
	}
	s.gen = time.Since(start)
	cfg.logf("scale: generated in %.1fs", s.gen.Seconds())
	return s, nil
}

// first returns the first n repositories and their references through
// the source's proxy.
func (s *scaleSource) first(n int) ([]Ref, []string, error) {
	if n > len(s.refs) {
		return nil, nil, fmt.Errorf("scale source holds %d repositories, %d asked for", len(s.refs), n)
	}
	refs := s.refs[:n]
	roots := make([]string, n)
	for i, r := range refs {
		roots[i] = s.proxy.Addr + "/" + r.Repo + ":" + r.Tag
	}
	return refs, roots, nil
}

func (s *scaleSource) close() {
	s.proxy.Close()
	s.reg.Close()
}

// runScale mirrors the source at each repository count with ferry -j P
// and crane's P-way xargs, then resolves the synthetic closures and times
// the bookkeeping.
func (res *Results) runScale(ctx context.Context, c *client.Client, src *scaleSource) error {
	cfg := res.Config
	spec := cfg.Scale
	out := &ScaleResults{Spec: spec, Gen: src.gen, GenRepos: len(src.refs)}
	res.Scale = out
	var crane *Peer
	for _, p := range res.Peers {
		if p.Bin == "crane" {
			crane = p
		}
	}
	for _, n := range spec.Repos {
		refs, roots, err := src.first(n)
		if err != nil {
			return err
		}
		sm := &ScaleMirror{Repos: n}
		out.Mirror = append(out.Mirror, sm)
		type cell struct {
			row *Row
			run func(t *target) Exec
		}
		ferryRow := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Jobs: cfg.Parallel, Version: res.Ferry, DigestsOK: true}
		sm.Rows = append(sm.Rows, ferryRow)
		cells := []cell{{row: ferryRow, run: func(t *target) Exec {
			dir, _ := os.MkdirTemp(t.dir, "ferry-")
			args := append([]string{cfg.Ferry, "mirror"}, roots...)
			args = append(args, "--to", t.proxy.Addr+"/mirror", "-j", fmt.Sprint(cfg.Parallel), "-o", "json", "-q")
			return Run(ctx, dir, nil, nil, args...)
		}}}
		if crane != nil {
			row := &Row{Tool: crane.Name, Mode: fmt.Sprintf("%d-way parallel", cfg.Parallel), Version: crane.Version, Unavailable: crane.Unavailable, DigestsOK: true}
			sm.Rows = append(sm.Rows, row)
			if crane.Unavailable == "" {
				cells = append(cells, cell{row: row, run: func(t *target) Exec {
					return runPeer(ctx, crane, cfg.Parallel, t, src.proxy.Addr, refs, roots)
				}})
			}
		}
		runs := spec.runs(cfg, n)
		for run := 1; run <= runs; run++ {
			for _, cl := range Rotated(cells, run, runs) {
				row := cl.row
				if row.Failed != "" {
					continue
				}
				cfg.logf("scale run %d/%d: %s %s, %d repositories", run, runs, row.Tool, row.Mode, n)
				t, err := newTarget(ctx, cfg, "scale")
				if err != nil {
					return err
				}
				t.proxy.Take()
				e, st, sst, ok := t.measureCopy(ctx, &cfg, c, row, src.proxy, refs, true, func() Exec { return cl.run(t) })
				if !ok {
					continue
				}
				cfg.logf("  %.2fs (CPU %.2fs), %d requests to the mirror, %s up, %d requests to the source", e.Wall.Seconds(), e.CPU.Seconds(), st.Requests, Bytes(st.BytesUp), sst.Requests)
				t.close()
			}
		}
	}
	if err := res.runResolveScale(ctx); err != nil {
		return err
	}
	for _, n := range spec.Bookkeeping {
		cfg.logf("scale: bookkeeping of %d packages, in process", n)
		b, err := Bookkeeping(ctx, n)
		if err != nil {
			return fmt.Errorf("bookkeeping of %d packages: %w", n, err)
		}
		out.Bookkeeping = append(out.Bookkeeping, b)
		cfg.logf("  %s in all, %s per package", secs(b.Total()), perItem(b.Total(), n))
	}
	return nil
}

// perItem renders d/n as µs or ms.
func perItem(d time.Duration, n int) string {
	if n <= 0 {
		return "—"
	}
	per := d / time.Duration(n)
	if per < time.Millisecond {
		return fmt.Sprintf("%.1f µs", float64(per)/float64(time.Microsecond))
	}
	return fmt.Sprintf("%.2f ms", float64(per)/float64(time.Millisecond))
}

func (res *Results) writeScale(b *strings.Builder) {
	cfg := res.Config
	s := res.Scale
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Scale\n\n")
	p("Issue 14: cost per repository as the mirror grows. W1's shape with small content so 1,000 repositories fit in minutes: repositories `w1/app-NN:v1`, %s (gzip'd tar layers of deterministic pseudo-random content), generated into one source registry (%d repositories in %s); each count copies the first N of them into a fresh registry. ",
		s.Spec.Shape.describe(), s.GenRepos, secs(s.Gen))
	if s.Spec.OnceAbove > 0 && cfg.Runs > 1 {
		p("Counts above %d run once; the others are the median of %d runs. ", s.Spec.OnceAbove, cfg.Runs)
	}
	p("Figures per repository divide the command's totals by N; **growth** is the per-repository figure at this N over the one at the smallest N (1.00× is linear). **CPU** is the user and system CPU time of the command and every process it waited for (for crane, every `crane copy` process), not the registries': on a shared machine it is the steadier measure of a tool's own cost, wall time moves with the load.\n\n")
	p("| repositories | tool | mode | time | per repository | growth | CPU | per repository | growth | requests to mirror | per repository | growth | sent to mirror | per repository | read from source (requests) | peak RSS | digests |\n|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	first := map[string]Sample{}
	firstN := map[string]int{}
	for _, sm := range s.Mirror {
		for _, r := range sm.Rows {
			if st := r.status(); st != "" {
				p("| %d | %s | %s | %s | | | | | | | | | | | | | |\n", sm.Repos, r.Tool, r.Mode, st)
				continue
			}
			m, _ := Median(r.Samples)
			key := r.Tool + " " + r.Mode
			if _, ok := first[key]; !ok {
				first[key], firstN[key] = m, sm.Repos
			}
			f, fn := first[key], float64(firstN[key])
			n := float64(sm.Repos)
			ok := r.digestsCell()
			p("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %d | %.1f | %s | %s | %s | %s (%d) | %s | %s |\n", sm.Repos, r.Tool, r.Mode,
				secs(m.Wall), perItem(m.Wall, sm.Repos), ratio(m.Wall.Seconds()/n, f.Wall.Seconds()/fn),
				secs(m.CPU), perItem(m.CPU, sm.Repos), ratio(m.CPU.Seconds()/n, f.CPU.Seconds()/fn),
				m.Stats.Requests, float64(m.Stats.Requests)/n, ratio(float64(m.Stats.Requests)/n, float64(f.Stats.Requests)/fn),
				Bytes(m.Stats.BytesUp), Bytes(int64(float64(m.Stats.BytesUp)/n)), Bytes(m.Source.BytesDown), m.Source.Requests, Bytes(m.MaxRSS), ok)
		}
	}
	// ferry against crane at each count.
	var lines []string
	for _, sm := range s.Mirror {
		f := find(sm.Rows, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel))
		c := find(sm.Rows, "crane copy", fmt.Sprintf("%d-way parallel", cfg.Parallel))
		if f == nil || c == nil || len(f.Samples) == 0 || len(c.Samples) == 0 {
			continue
		}
		fm, _ := Median(f.Samples)
		cm, _ := Median(c.Samples)
		lines = append(lines, fmt.Sprintf("- %d repositories: ferry -j %d takes %s crane's time and %s its CPU, and makes %s its requests to the mirror",
			sm.Repos, cfg.Parallel, ratio(fm.Wall.Seconds(), cm.Wall.Seconds()), ratio(fm.CPU.Seconds(), cm.CPU.Seconds()), ratio(float64(fm.Stats.Requests), float64(cm.Stats.Requests))))
	}
	if len(lines) > 0 {
		p("\n%s\n", strings.Join(lines, "\n"))
	}
	p("\n```sh\nferry mirror SRC/w1/app-00:v1 … SRC/w1/app-(N-1):v1 --to DST/mirror -j %d -o json -q\nxargs -P %d -L 1 crane copy < pairs  # N lines: SRC/w1/app-NN:v1 DST/mirror/w1/app-NN:v1\n```\n\n", cfg.Parallel, cfg.Parallel)
	if len(s.Resolve) > 0 {
		res.writeResolveScale(b)
	}
	if len(s.Bookkeeping) > 0 {
		writeBookkeeping(b, s.Bookkeeping)
	}
}

// runScaleAndMounts generates the scale source once, for the largest
// count either benchmark needs, and runs the scale and mounts-refused
// benchmarks the configuration selects.
func (res *Results) runScaleAndMounts(ctx context.Context, c *client.Client) error {
	cfg := res.Config
	scale := cfg.wants("scale") && len(cfg.Scale.Repos) > 0
	mounts := cfg.wants("mounts") && cfg.Mounts.Repos > 0
	n := 0
	if scale {
		n = max(n, slices.Max(cfg.Scale.Repos))
	}
	if mounts {
		n = max(n, cfg.Mounts.Repos)
	}
	src, err := startScaleSource(ctx, c, cfg, n)
	if err != nil {
		return err
	}
	defer src.close()
	if scale {
		if err := res.runScale(ctx, c, src); err != nil {
			return err
		}
	}
	if mounts {
		if err := res.runMounts(ctx, c, src); err != nil {
			return err
		}
	}
	return nil
}
