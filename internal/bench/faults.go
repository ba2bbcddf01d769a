package bench

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/faultproxy"
)

// FaultSpec sizes the fault benchmark: W1's shape, smaller, copied by
// ferry and the peers with every request to both registries passing
// through a fault-injecting proxy.
type FaultSpec struct {
	// W1 is the workload.
	W1 W1Spec
	// Seeds is the number of seeds: one first run per tool per seed.
	Seeds int
	// Rate is the fraction of requests given a fault.
	Rate float64
	// StallMin and StallMax bound a stall before forwarding.
	StallMin, StallMax time.Duration
	// RetryAfter is the Retry-After of injected 429 answers.
	RetryAfter time.Duration
	// Timeout bounds one tool run.
	Timeout time.Duration
}

// FaultRun is one tool run through the fault proxies.
type FaultRun struct {
	// Seed seeds the source proxy (2×Seed) and the mirror proxy
	// (2×Seed+1); 0 for a fault-free run.
	Seed uint64 `json:"seed"`
	// OK is true when the tool exited 0, every tag in the mirror has the
	// source's digest, and no blob in the mirror is corrupt.
	OK bool `json:"ok"`
	// Failure says why the run failed.
	Failure string `json:"failure,omitempty"`
	// Wall is the tool's wall-clock time.
	Wall time.Duration `json:"wall"`
	// Sent is the request body bytes the mirror's proxy read from the
	// tool; Read the response body bytes the source's proxy sent it.
	Sent int64 `json:"sent"`
	Read int64 `json:"read"`
	// Faults are the faults both proxies injected.
	Faults faultproxy.Stats `json:"faults"`
	// Corrupt is the number of blobs in the mirror's storage whose
	// content does not hash to their name.
	Corrupt int `json:"corrupt"`
}

// FaultRow is one tool in the fault benchmark.
type FaultRow struct {
	Tool        string `json:"tool"`
	Mode        string `json:"mode"`
	Command     string `json:"command"`
	Version     string `json:"version,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
	// Clean are fault-free runs through the same proxies (rate 0).
	Clean []FaultRun `json:"clean"`
	// Runs are the first runs under faults, one per seed.
	Runs []FaultRun `json:"runs"`
}

// faultTool is how to run one tool of the fault benchmark.
type faultTool struct {
	row *FaultRow
	// prepare, when set, runs before the copy with faults off (regctl
	// must be told the hosts speak plain HTTP, and pings them).
	prepare func(ctx context.Context, src, dst string) error
	// run copies from the source proxy src to the mirror proxy dst in dir.
	run func(ctx context.Context, dir, src, dst string) Exec
}

func (res *Results) runFaults(ctx context.Context, c *client.Client) error {
	cfg := res.Config
	spec := cfg.Faults
	reg, err := StartRegistry(ctx, cfg.Ferry, filepath.Join(cfg.Work, "faults-source"))
	if err != nil {
		return err
	}
	defer reg.Close()
	cfg.logf("faults: generating %d repositories (%d MiB shared, %d+%d MiB unique each)", spec.W1.Repos, spec.W1.Base/MiB, spec.W1.Unique1/MiB, spec.W1.Unique2/MiB)
	start := time.Now()
	refs, err := PushW1(ctx, c, reg.Addr, spec.W1)
	if err != nil {
		return fmt.Errorf("faults: generating: %w", err)
	}
	res.FaultsGen = time.Since(start)
	res.FaultsUnique = spec.W1.Base + int64(spec.W1.Repos)*(spec.W1.Unique1+spec.W1.Unique2)
	res.FaultsLogical = int64(spec.W1.Repos) * (spec.W1.Base + spec.W1.Unique1 + spec.W1.Unique2)

	par := cfg.Parallel
	ferryRow := &FaultRow{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", par), Version: res.Ferry,
		Command: fmt.Sprintf("ferry mirror SRC/w1/app-00:v1 … SRC/w1/app-%02d:v1 --to DST/mirror -j %d -o json -q", spec.W1.Repos-1, par)}
	tools := []faultTool{{row: ferryRow, run: func(ctx context.Context, dir, src, dst string) Exec {
		args := []string{cfg.Ferry, "mirror"}
		for _, r := range refs {
			args = append(args, src+"/"+r.Repo+":"+r.Tag)
		}
		args = append(args, "--to", dst+"/mirror", "-j", fmt.Sprint(par), "-o", "json", "-q")
		return Run(ctx, dir, nil, nil, args...)
	}}}
	res.Faults = append(res.Faults, ferryRow)
	for _, p := range res.Peers {
		if p.Bin != "crane" && p.Bin != "regctl" {
			continue
		}
		row := &FaultRow{Tool: p.Name, Mode: fmt.Sprintf("%d-way parallel", par), Version: p.Version, Unavailable: p.Unavailable,
			Command: fmt.Sprintf("xargs -P %d -L 1 %s %s < pairs  # %d lines: %s", par, p.Bin, strings.Join(p.Args, " "), spec.W1.Repos, p.Line("SRC/w1/app-NN:v1", "DST/mirror/w1/app-NN:v1"))}
		res.Faults = append(res.Faults, row)
		if p.Unavailable != "" {
			continue
		}
		var prepare func(ctx context.Context, src, dst string) error
		if p.Prepare != nil {
			prepare = func(ctx context.Context, src, dst string) error { return p.Prepare(ctx, src, dst) }
		}
		tools = append(tools, faultTool{row: row, prepare: prepare, run: func(ctx context.Context, dir, src, dst string) Exec {
			var lines strings.Builder
			for _, r := range refs {
				fmt.Fprintln(&lines, p.Line(src+"/"+r.Repo+":"+r.Tag, dst+"/mirror/"+r.Repo+":"+r.Tag))
			}
			args := append([]string{"xargs", "-P", fmt.Sprint(par), "-L", "1", p.Path}, p.Args...)
			return Run(ctx, dir, p.Env, []byte(lines.String()), args...)
		}})
	}

	for run := 1; run <= cfg.Runs; run++ {
		for _, tl := range Rotated(tools, run, cfg.Runs) {
			cfg.logf("faults: fault-free run %d/%d: %s", run, cfg.Runs, tl.row.Tool)
			fr, err := res.faultRun(ctx, c, reg, refs, tl, 0, 0)
			if err != nil {
				return err
			}
			tl.row.Clean = append(tl.row.Clean, fr)
			cfg.logf("  %s", fr.summary())
		}
	}
	for seed := uint64(1); seed <= uint64(spec.Seeds); seed++ {
		for _, tl := range tools {
			cfg.logf("faults: seed %d/%d: %s", seed, spec.Seeds, tl.row.Tool)
			fr, err := res.faultRun(ctx, c, reg, refs, tl, seed, spec.Rate)
			if err != nil {
				return err
			}
			tl.row.Runs = append(tl.row.Runs, fr)
			cfg.logf("  %s", fr.summary())
		}
	}
	return nil
}

// faultRun copies the workload with tl into a fresh registry, both
// registries behind fault proxies seeded from seed at rate.
func (res *Results) faultRun(ctx context.Context, c *client.Client, src *Registry, refs []Ref, tl faultTool, seed uint64, rate float64) (FaultRun, error) {
	spec := res.Config.Faults
	dir, err := os.MkdirTemp(res.Config.Work, "faults-")
	if err != nil {
		return FaultRun{}, err
	}
	defer os.RemoveAll(dir)
	reg, err := StartRegistry(ctx, res.Config.Ferry, filepath.Join(dir, "mirror"))
	if err != nil {
		return FaultRun{}, err
	}
	defer reg.Close()
	// The proxies start with faults off for the tool's set-up, if any.
	opts := func(s uint64) faultproxy.Options {
		return faultproxy.Options{Seed: s, Rate: 0, StallMin: spec.StallMin, StallMax: spec.StallMax, RetryAfter: spec.RetryAfter}
	}
	sp, err := faultproxy.Start(src.Addr, opts(2*seed))
	if err != nil {
		return FaultRun{}, err
	}
	defer sp.Close()
	dp, err := faultproxy.Start(reg.Addr, opts(2*seed+1))
	if err != nil {
		return FaultRun{}, err
	}
	defer dp.Close()
	cwd := filepath.Join(dir, "cwd")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		return FaultRun{}, err
	}
	if tl.prepare != nil {
		if err := tl.prepare(ctx, sp.Addr, dp.Addr); err != nil {
			return FaultRun{Seed: seed, Failure: "set-up: " + err.Error()}, nil
		}
	}
	sp.Take()
	dp.Take()
	sp.SetRate(rate)
	dp.SetRate(rate)
	rctx, cancel := context.WithTimeout(ctx, spec.Timeout)
	e := tl.run(rctx, cwd, sp.Addr, dp.Addr)
	cancel()
	sst, dst := sp.Stats(), dp.Stats()
	fr := FaultRun{Seed: seed, Wall: e.Wall, Sent: dst.BytesIn, Read: sst.BytesOut, Faults: sst.Add(dst)}
	switch {
	case e.Err != nil:
		fr.Failure = fmt.Sprintf("%v: %s", e.Err, e.Stderr)
	default:
		if err := checkDigests(ctx, c, reg.Addr, "mirror/", refs); err != nil {
			fr.Failure = "exit 0 but the copy is incomplete or differs: " + err.Error()
		}
	}
	// Corrupt blobs are counted whether the tool succeeded or not: a
	// failed run must not leave bad content behind either.
	n, err := CorruptBlobs(reg.Root)
	if err != nil {
		return FaultRun{}, err
	}
	fr.Corrupt = n
	if n > 0 && fr.Failure == "" {
		fr.Failure = fmt.Sprintf("%d corrupt blobs in the mirror", n)
	}
	fr.OK = fr.Failure == ""
	return fr, nil
}

func (fr FaultRun) summary() string {
	s := fmt.Sprintf("%.2fs, %s sent, %s read; %s", fr.Wall.Seconds(), Bytes(fr.Sent), Bytes(fr.Read), fr.Faults)
	if fr.Corrupt > 0 {
		s += fmt.Sprintf("; %d corrupt blobs", fr.Corrupt)
	}
	if !fr.OK {
		s += "; FAILED: " + oneLine(fr.Failure)
	}
	return s
}

// CorruptBlobs counts the blobs in a distribution registry's filesystem
// storage under root (docker/registry/v2/blobs/sha256/XX/HEX/data) whose
// content does not hash to their name.
func CorruptBlobs(root string) (int, error) {
	dir := filepath.Join(root, "docker", "registry", "v2", "blobs", "sha256")
	bad := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path == dir {
				return fs.SkipDir
			}
			return err
		}
		if d.IsDir() || d.Name() != "data" {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		if hex.EncodeToString(h.Sum(nil)) != filepath.Base(filepath.Dir(path)) {
			bad++
		}
		return nil
	})
	return bad, err
}

// medianRun returns the run with the median wall time among runs that
// succeeded, and false when none did.
func medianRun(runs []FaultRun) (FaultRun, bool) {
	var ok []FaultRun
	for _, r := range runs {
		if r.OK {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return FaultRun{}, false
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].Wall < ok[j].Wall })
	return ok[len(ok)/2], true
}

func (res *Results) writeFaults(b *strings.Builder) {
	cfg := res.Config
	spec := cfg.Faults
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Faults: first-run success at %.0f%% faults\n\n", 100*spec.Rate)
	p("W1's shape, smaller: %d repositories `w1/app-NN:v1`, a %s base layer shared by all plus %s and %s layers unique to each (%s logical, %s unique), generated in %s. ",
		spec.W1.Repos, Bytes(spec.W1.Base), Bytes(spec.W1.Unique1), Bytes(spec.W1.Unique2), Bytes(res.FaultsLogical), Bytes(res.FaultsUnique), secs(res.FaultsGen))
	p("Every request of every tool to both registries passes through a fault-injecting reverse proxy on 127.0.0.1 (`internal/faultproxy`) that gives %.0f%% of requests a fault, drawn uniformly among the kinds that apply: 500, 502 or 503 before forwarding; 429 with `Retry-After: %d`; the connection reset before any response; the body cut off after half its length (GET); a %s–%s stall before forwarding; 502 after the registry carried out a write (POST, PUT, PATCH). ",
		100*spec.Rate, int(spec.RetryAfter/time.Second), secs(spec.StallMin), secs(spec.StallMax))
	p("Seed s drives the source's proxy (2s) and the mirror's (2s+1), the same seeds for every tool; decisions follow the order requests arrive, so concurrent tools do not meet identical faults. ")
	p("Each run copies into a fresh registry. A **first run succeeds** when the tool exits 0, every tag in the mirror has the source's digest and every blob in the mirror's storage hashes to its name (**corrupt blobs** are counted after failed runs too). Tools run with their default retry and timeout settings, one run per seed, no second chance. **fault-free** is the median of %d runs through the same proxies with faults off; **sent** is request body bytes the mirror's proxy read from the tool, against **needed**, the workload's unique layer bytes.\n\n", cfg.Runs)
	p("| tool | mode | first-run success | corrupt blobs | time under faults (median of successes) | fault-free time | vs fault-free | sent under faults | fault-free sent | needed | faults met per run (median) |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var failures []string
	total := faultproxy.Stats{}
	for _, r := range res.Faults {
		if r.Unavailable != "" {
			p("| %s | %s | unavailable: %s | | | | | | | | |\n", r.Tool, r.Mode, oneLine(r.Unavailable))
			continue
		}
		ok, corrupt := 0, 0
		var met []int
		for _, fr := range r.Runs {
			if fr.OK {
				ok++
			} else {
				failures = append(failures, fmt.Sprintf("- `%s` seed %d: %s", r.Tool, fr.Seed, oneLine(fr.Failure)))
			}
			corrupt += fr.Corrupt
			met = append(met, fr.Faults.Faults)
			total = total.Add(fr.Faults)
		}
		sort.Ints(met)
		medMet := 0
		if len(met) > 0 {
			medMet = met[len(met)/2]
		}
		clean, cleanOK := medianRun(r.Clean)
		faulty, faultyOK := medianRun(r.Runs)
		cleanWall, cleanSent := "failed", "—"
		if cleanOK {
			cleanWall, cleanSent = secs(clean.Wall), Bytes(clean.Sent)
		}
		fWall, fSent, vs := "—", "—", "—"
		if faultyOK {
			fWall, fSent = secs(faulty.Wall), Bytes(faulty.Sent)
			if cleanOK {
				vs = ratio(faulty.Wall.Seconds(), clean.Wall.Seconds())
			}
		}
		p("| %s | %s | **%d/%d** | %d | %s | %s | %s | %s | %s | %s | %d |\n", r.Tool, r.Mode, ok, len(r.Runs), corrupt, fWall, cleanWall, vs, fSent, cleanSent, Bytes(res.FaultsUnique), medMet)
		for _, fr := range r.Clean {
			if !fr.OK {
				failures = append(failures, fmt.Sprintf("- `%s` fault-free run: %s", r.Tool, oneLine(fr.Failure)))
			}
		}
	}
	p("\nFaults injected over all runs under faults: %s.\n\n", total)
	if len(failures) > 0 {
		p("Failed first runs:\n\n%s\n\n", strings.Join(failures, "\n"))
	}
	p("```sh\n")
	for _, r := range res.Faults {
		p("%s\n", r.Command)
	}
	p("```\n\n")
}
