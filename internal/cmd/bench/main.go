// Command bench runs PRODUCT.md's benchmark workloads W1-W4 against ferry
// and the peer copy tools in the same run, on loopback registries, and
// writes BENCHMARKS.md. `make bench` runs it through scripts/bench.sh:
//
//	go run ./internal/cmd/bench --ferry bin/ferry --out BENCHMARKS.md
//
// --scale shrinks or grows W1's repositories, W2's packages and W5's
// charts; --runs sets
// how many times each timed command runs (the median is reported);
// --w3-mib sizes W3's single layer; --fault-seeds and --fault-rate shape
// the fault benchmark (first-run success under injected faults).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/bench"
)

func main() {
	ferry := flag.String("ferry", "bin/ferry", "ferry binary to measure (also serves the registries)")
	work := flag.String("work", "", "scratch directory (default: a new temporary directory, removed afterwards)")
	out := flag.String("out", "BENCHMARKS.md", "report to write; empty writes none")
	jsonOut := flag.String("json", "", "also write the raw results as JSON to this file")
	runs := flag.Int("runs", 3, "runs of each timed command; the median is reported")
	scale := flag.Float64("scale", 1, "multiplies W1's 40 repositories and W2's 1,000 packages")
	w3MiB := flag.Int64("w3-mib", 512, "W3's layer size in MiB (PRODUCT.md: 2048)")
	parallel := flag.Int("parallel", 8, "peers' xargs -P and ferry's -j in the parallel mode")
	workloads := flag.String("workloads", "w1,w1lat,w2,w3,helm,faults,scale,mounts,w6,lean", "comma-separated workloads to run: w1 (with W4 and the bound), w1lat (W1 with 20 ms per request on both sides), w2, w3, helm (W5: a Helm chart closure), faults, scale (40/200/1,000 repositories against crane, resolution of 1,000 and 10,000 packages, bookkeeping up to 30,000), mounts (200 repositories onto a registry refusing mounts), w6 (image sync: 20 repositories × 12 tags against skopeo sync and regsync), lean (ferry version, binary size, packages and cold build against crane)")
	craneSrc := flag.String("crane-src", "", "crane's module source directory (go-containerregistry), for lean's package count and cold build")
	coldBuild := flag.Bool("cold-build", true, "lean: build ferry and crane once each with an empty build cache (minutes)")
	versionRounds := flag.Int("version-rounds", 21, "lean: alternating rounds of ferry version and crane version")
	faultSeeds := flag.Int("fault-seeds", 10, "seeds of the fault benchmark: one first run per tool per seed")
	faultRate := flag.Float64("fault-rate", 0.10, "fraction of requests the fault benchmark's proxies give a fault")
	reasons := flag.String("unavailable", "", "file of \"TOOL<TAB>REASON\" lines for peers the setup could not install")
	distinct := flag.Bool("w2-distinct-tags", false, "push a distinct bundle for each of W2's tags (slow: 30 bundles per package)")
	command := flag.String("command", "make bench", "how this run was started, for the report")
	flag.Parse()
	if flag.NArg() > 0 || *runs < 1 || *scale <= 0 || *w3MiB < 1 || *parallel < 1 || *faultSeeds < 0 || *faultRate < 0 || *faultRate > 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	ferryPath, err := filepath.Abs(*ferry)
	if err != nil {
		fail(err)
	}
	dir := *work
	if dir == "" {
		if dir, err = os.MkdirTemp("", "ferry-bench-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		fail(err)
	}
	cfg := bench.Config{
		Ferry:    ferryPath,
		Work:     dir,
		Runs:     *runs,
		Parallel: *parallel,
		W1: bench.W1Spec{
			Repos: max(2, int(math.Round(40**scale))),
			Base:  20 * bench.MiB, Unique1: 1 * bench.MiB, Unique2: 5 * bench.MiB,
		},
		W2:      bench.W2Spec{Packages: max(8, int(math.Round(1000**scale))), Depth: 8, Tags: 30, AllTagsDistinct: *distinct},
		W2Delay: 20 * time.Millisecond,
		W2Jobs:  []int{*parallel, 64},
		W3Size:  *w3MiB * bench.MiB,
		// W1 with latency: 20 ms per request on both sides (issue 14).
		W1Delay: 20 * time.Millisecond,
		Bound:   boundCommand(dir),
		// W5: issue 11's 100-chart closure, 6 versions per chart.
		Helm:     bench.HelmSpec{Charts: max(5, int(math.Round(100**scale))), Depth: 5, Tags: 6, Images: true},
		HelmJobs: []int{*parallel, 64},
		// Issue 14: W1's shape with small content, so 1,000 repositories
		// take minutes; the 1,000-repository and 10,000-package figures
		// run once.
		Scale: bench.ScaleSpec{
			Shape:       bench.W1Spec{Base: 1 * bench.MiB, Unique1: 16 << 10, Unique2: 64 << 10},
			Repos:       []int{40, 200, 1000},
			OnceAbove:   200,
			Packages:    []int{1000, 10000},
			Tags:        3,
			Bookkeeping: []int{1000, 10000, 30000},
		},
		Mounts: bench.MountsSpec{Repos: 200},
		// W6: issue 27 point 6, 20 repositories × 12 tags whatever the
		// scale.
		W6:   bench.W6Spec{Repos: 20, Base: 1 * bench.MiB, PerRepo: 256 << 10, PerTag: 64 << 10},
		Lean: bench.LeanSpec{VersionRounds: *versionRounds, Repo: repoRoot(), CraneSrc: *craneSrc, ColdBuild: *coldBuild},
		Faults: bench.FaultSpec{
			W1:       bench.W1Spec{Repos: max(2, int(math.Round(10**scale))), Base: 8 * bench.MiB, Unique1: 1 * bench.MiB, Unique2: 4 * bench.MiB},
			Seeds:    *faultSeeds,
			Rate:     *faultRate,
			StallMin: 1500 * time.Millisecond, StallMax: 3 * time.Second,
			RetryAfter: time.Second,
			Timeout:    5 * time.Minute,
		},
		Workloads: strings.Split(*workloads, ","),
		Reasons:   readReasons(*reasons),
		Log:       os.Stderr,
	}
	start := time.Now()
	res, err := bench.RunAll(ctx, cfg)
	if res != nil {
		res.Command = *command
		res.Elapsed = time.Since(start)
		if *jsonOut != "" {
			b, _ := json.MarshalIndent(res, "", "  ")
			if werr := os.WriteFile(*jsonOut, b, 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "bench:", werr)
			}
		}
		if *out != "" && err == nil {
			if werr := os.WriteFile(*out, []byte(res.Markdown()), 0o644); werr != nil {
				fail(werr)
			}
			fmt.Fprintf(os.Stderr, "bench: wrote %s in %s\n", *out, res.Elapsed.Round(time.Second))
		}
	}
	if err != nil {
		fail(err)
	}
}

// repoRoot is the working directory when it is ferry's module root
// (make bench runs there), else empty.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if b, err := os.ReadFile(filepath.Join(wd, "go.mod")); err != nil || !strings.Contains(string(b), "module github.com/ferryhq/ferry\n") {
		return ""
	}
	return wd
}

// readReasons reads "TOOL<TAB>REASON" lines; a missing file is no reasons.
func readReasons(path string) map[string]string {
	m := map[string]string{}
	if path == "" {
		return m
	}
	f, err := os.Open(path)
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if tool, reason, ok := strings.Cut(sc.Text(), "\t"); ok && tool != "" {
			m[tool] = strings.TrimSpace(reason)
		}
	}
	return m
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
