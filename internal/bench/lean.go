package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// LeanSpec configures the lean-binary rows (issue 29 point 4): ferry's
// fixed costs against crane's, in the same run.
type LeanSpec struct {
	// VersionRounds is how many times `ferry version` and `crane version`
	// each run, alternating (ferry, crane, crane, ferry, ...).
	VersionRounds int
	// Repo is ferry's source tree (the module root), for the package
	// count and the cold build; empty leaves both out.
	Repo string
	// CraneSrc is the directory of crane's module source
	// (github.com/google/go-containerregistry at the pinned release);
	// empty leaves crane's package count and cold build out.
	CraneSrc string
	// ColdBuild runs each `go build` once with an empty build cache.
	ColdBuild bool
}

// LeanResults are the lean-binary figures.
type LeanResults struct {
	FerryVersion, CraneVersion []Sample
	// FerryBinary and CraneBinary are the binaries' sizes in bytes.
	FerryBinary, CraneBinary int64
	// FerryPackages and CranePackages count the third-party packages
	// (outside the standard library and the tool's own module) each
	// binary links, by `go list -deps`; -1 when not counted.
	FerryPackages, CranePackages int
	// FerryBuild and CraneBuild are the cold builds (CPU is user+sys);
	// nil when not run. BuildNote says why they were not.
	FerryBuild, CraneBuild *Sample
	BuildNote              string
	Errors                 []string
}

// craneModule is the module whose cmd/crane the cold build compiles.
const craneModule = "github.com/google/go-containerregistry"

// runLean measures `ferry version` against `crane version`, the two
// binaries' sizes and third-party package counts, and (when configured)
// their cold builds.
func (res *Results) runLean(ctx context.Context) {
	cfg := res.Config
	spec := cfg.Lean
	lr := &LeanResults{FerryPackages: -1, CranePackages: -1}
	res.Lean = lr
	var crane string
	for _, p := range res.Peers {
		if p.Bin == "crane" && p.Unavailable == "" {
			crane = p.Path
		}
	}
	if st, err := os.Stat(cfg.Ferry); err == nil {
		lr.FerryBinary = st.Size()
	}
	if crane != "" {
		if st, err := os.Stat(crane); err == nil {
			lr.CraneBinary = st.Size()
		}
	}
	rounds := max(spec.VersionRounds, 1)
	cfg.logf("lean: ferry version and crane version, %d alternating rounds", rounds)
	for i := range rounds {
		order := []string{cfg.Ferry, crane}
		if i%2 == 1 {
			order = []string{crane, cfg.Ferry}
		}
		for _, bin := range order {
			if bin == "" {
				continue
			}
			e := Run(ctx, "", nil, nil, bin, "version")
			if e.Err != nil {
				lr.Errors = append(lr.Errors, fmt.Sprintf("%s version: %v: %s", bin, e.Err, e.Stderr))
				continue
			}
			s := Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, CPU: e.CPU}
			if bin == cfg.Ferry {
				lr.FerryVersion = append(lr.FerryVersion, s)
			} else {
				lr.CraneVersion = append(lr.CraneVersion, s)
			}
		}
	}
	if spec.Repo != "" {
		n, err := thirdPartyPackages(ctx, spec.Repo, "./cmd/ferry", "github.com/ferryhq/ferry")
		if err != nil {
			lr.Errors = append(lr.Errors, "counting ferry's packages: "+err.Error())
		}
		lr.FerryPackages = n
	}
	if spec.CraneSrc != "" {
		n, err := thirdPartyPackages(ctx, spec.CraneSrc, "./cmd/crane", craneModule)
		if err != nil {
			lr.Errors = append(lr.Errors, "counting crane's packages: "+err.Error())
		}
		lr.CranePackages = n
	}
	switch {
	case !spec.ColdBuild:
		lr.BuildNote = "skipped (BENCH_COLD_BUILD=0)"
	case spec.Repo == "" || spec.CraneSrc == "":
		lr.BuildNote = "not run: crane's module source was not found"
	default:
		// crane first: the shorter build, so that ferry's does not run
		// in a page cache the other warmed more than its own.
		cfg.logf("lean: cold build of crane (empty GOCACHE)")
		lr.CraneBuild = coldBuild(ctx, spec.CraneSrc, "./cmd/crane", lr)
		cfg.logf("lean: cold build of ferry (empty GOCACHE)")
		lr.FerryBuild = coldBuild(ctx, spec.Repo, "./cmd/ferry", lr)
	}
}

// thirdPartyPackages counts the packages pkg (in dir) links that are
// neither in the standard library nor in module own.
func thirdPartyPackages(ctx context.Context, dir, pkg, own string) (int, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		return -1, fmt.Errorf("go list -deps %s: %w", pkg, err)
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		if p != own && !strings.HasPrefix(p, own+"/") {
			n++
		}
	}
	return n, nil
}

// coldBuild runs `go build -o TMP pkg` in dir with an empty build cache
// in a temporary directory, and returns its wall and CPU time (user+sys
// of go and every compiler and linker it ran).
func coldBuild(ctx context.Context, dir, pkg string, lr *LeanResults) *Sample {
	cache, err := os.MkdirTemp("", "bench-gocache-")
	if err != nil {
		lr.Errors = append(lr.Errors, err.Error())
		return nil
	}
	defer os.RemoveAll(cache)
	out, err := os.MkdirTemp("", "bench-build-")
	if err != nil {
		lr.Errors = append(lr.Errors, err.Error())
		return nil
	}
	defer os.RemoveAll(out)
	e := Run(ctx, dir, []string{"GOCACHE=" + cache, "GOFLAGS=-mod=mod", "CGO_ENABLED=0"}, nil, "go", "build", "-o", out+"/bin", pkg)
	if e.Err != nil {
		lr.Errors = append(lr.Errors, fmt.Sprintf("cold build of %s: %v: %s", pkg, e.Err, e.Stderr))
		return nil
	}
	return &Sample{Wall: e.Wall, CPU: e.CPU, MaxRSS: e.MaxRSS}
}

// medianBy returns the median of f over s, 0 when s is empty.
func medianBy(s []Sample, f func(Sample) float64) float64 {
	if len(s) == 0 {
		return 0
	}
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// leanVerdict says whether got/base meets target (got/base ≤ target).
func leanVerdict(got, base, target float64) string {
	if got <= 0 || base <= 0 {
		return "—"
	}
	if got/base <= target {
		return "met"
	}
	return "**not met**"
}

func (res *Results) writeLean(b *strings.Builder) {
	cfg := res.Config
	lr := res.Lean
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Lean binary (issue 29)\n\n")
	p("ferry's fixed costs against crane's (%s), in this run. `version` rows: %d alternating rounds of `ferry version` and `crane version` (ferry, crane; then crane, ferry; …), medians of wall time and of peak RSS (GNU time). ", res.peerVersion("crane"), len(lr.FerryVersion))
	p("The other rows are taken from this run's W1, W3 and W4 tables where those ran.\n\n")
	p("| figure | ferry | crane or peer | ratio | target | |\n|---|---:|---:|---:|---:|---|\n")
	wall := func(s Sample) float64 { return s.Wall.Seconds() }
	rss := func(s Sample) float64 { return float64(s.MaxRSS) }
	fw, cw := medianBy(lr.FerryVersion, wall), medianBy(lr.CraneVersion, wall)
	fr, cr := medianBy(lr.FerryVersion, rss), medianBy(lr.CraneVersion, rss)
	p("| `version` wall time | %.3f s | %.3f s | %s | ≤ 2× | %s |\n", fw, cw, ratio(fw, cw), leanVerdict(fw, cw, 2))
	p("| `version` peak RSS | %s | %s | %s | ≤ 2× | %s |\n", Bytes(int64(fr)), Bytes(int64(cr)), ratio(fr, cr), leanVerdict(fr, cr, 2))
	// W3: peak RSS against crane copy's, highest of the runs as writeW3.
	peak := func(r *Row) int64 {
		var m int64
		if r != nil {
			for _, s := range r.Samples {
				m = max(m, s.MaxRSS)
			}
		}
		return m
	}
	if f, c := peak(find(res.W3, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel))), peak(find(res.W3, "crane copy", "single copy")); f > 0 && c > 0 {
		p("| W3 peak RSS (%s layer) | %s | %s (crane copy) | %s | ≤ 2× | %s |\n", Bytes(cfg.W3Size), Bytes(f), Bytes(c), ratio(float64(f), float64(c)), leanVerdict(float64(f), float64(c), 2))
	}
	// W4: ferry -j N's re-run against the fastest peer re-run.
	if ref := find(res.W1, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel)); ref != nil && len(ref.Rerun) > 0 {
		fm, _ := Median(ref.Rerun)
		var best *Row
		var bestWall time.Duration
		for _, r := range res.W1 {
			if strings.HasPrefix(r.Tool, "ferry") || r.Tool == BoundTool || len(r.Rerun) == 0 {
				continue
			}
			m, _ := Median(r.Rerun)
			if best == nil || m.Wall < bestWall {
				best, bestWall = r, m.Wall
			}
		}
		if best != nil {
			p("| W4 re-run | %s | %s (%s %s) | %s | ≤ 0.5× | %s |\n", secs(fm.Wall), secs(bestWall), best.Tool, best.Mode, ratio(fm.Wall.Seconds(), bestWall.Seconds()), leanVerdict(fm.Wall.Seconds(), bestWall.Seconds(), 0.5))
		}
		if bound := find(res.W1, BoundTool, "every repository at once"); bound != nil && len(bound.Samples) > 0 && len(ref.Samples) > 0 {
			fm, _ := Median(ref.Samples)
			bm, _ := Median(bound.Samples)
			p("| W1 against the bound | %s | %s (the bound) | %s | ≤ 1.05× | %s |\n", secs(fm.Wall), secs(bm.Wall), ratio(fm.Wall.Seconds(), bm.Wall.Seconds()), leanVerdict(fm.Wall.Seconds(), bm.Wall.Seconds(), 1.05))
		}
	}
	if lr.FerryBuild != nil && lr.CraneBuild != nil {
		f, c := lr.FerryBuild.CPU.Seconds(), lr.CraneBuild.CPU.Seconds()
		p("| cold build CPU (user+sys; wall) | %.0f s (%.0f s) | %.0f s (%.0f s) | %s | ≤ 2.5× | %s |\n", f, lr.FerryBuild.Wall.Seconds(), c, lr.CraneBuild.Wall.Seconds(), ratio(f, c), leanVerdict(f, c, 2.5))
	} else {
		p("| cold build CPU | %s | | | ≤ 2.5× | |\n", lr.BuildNote)
	}
	p("| binary size | %s | %s | %s | | |\n", Bytes(lr.FerryBinary), Bytes(lr.CraneBinary), ratio(float64(lr.FerryBinary), float64(lr.CraneBinary)))
	if lr.FerryPackages >= 0 {
		c := "—"
		if lr.CranePackages >= 0 {
			c = itoa(lr.CranePackages)
		}
		p("| third-party packages linked | %d | %s | %s | | |\n", lr.FerryPackages, c, ratio(float64(lr.FerryPackages), float64(lr.CranePackages)))
	}
	p("\nThe cold build is `go build -o TMP ./cmd/ferry` in this tree and `go build -o TMP ./cmd/crane` in crane's module source (%s at the pinned release), each once with `GOCACHE` an empty temporary directory and `CGO_ENABLED=0`, crane first; its CPU time is the user and system time of `go` and every compiler and linker it ran (wait4's rusage). The module cache is warm for both (no download is timed). `BENCH_COLD_BUILD=0 make bench` leaves it out. Third-party packages are `go list -deps` of the command outside the standard library and the tool's own module (internal/depcheck pins ferry's).\n\n", craneModule)
	if len(lr.Errors) > 0 {
		p("Errors: %s\n\n", oneLine(strings.Join(lr.Errors, "; ")))
	}
}

// peerVersion returns the version of the peer whose binary is bin, or
// "unavailable".
func (res *Results) peerVersion(bin string) string {
	for _, p := range res.Peers {
		if p.Bin == bin {
			if p.Unavailable != "" {
				return "unavailable: " + oneLine(p.Unavailable)
			}
			return p.Version
		}
	}
	return "not run"
}
