package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/resolve"
)

// Config is one `make bench` run.
type Config struct {
	// Ferry is the ferry binary measured, which also serves the registries.
	Ferry string
	// Work is a scratch directory; registries' storage lives under it.
	Work string
	// Runs is how many times each timed command runs (the median is kept).
	Runs int
	// Parallel is the peers' xargs -P and ferry's -j in the parallel mode.
	Parallel int
	// W1 sizes workloads W1 and W4.
	W1 W1Spec
	// W2 sizes workload W2.
	W2 W2Spec
	// W2Delay is the proxy's added latency per request in W2.
	W2Delay time.Duration
	// W2Jobs are the ferry -j values W2 runs with.
	W2Jobs []int
	// W3Size is W3's layer size in bytes.
	W3Size int64
	// W1Delay is the latency each of W1-latency's proxies adds per
	// request, on the source's side and on the mirror's (issue 14 point 2).
	W1Delay time.Duration
	// Bound is the command line that runs W1's bound (package bound, the
	// benchbound command) as a process of its own, to which --from, --to
	// and the refs are added; empty leaves the bound out.
	Bound []string
	// Faults sizes the fault benchmark.
	Faults FaultSpec
	// Helm sizes workload W5 (a Helm chart closure); its latency is
	// W2Delay.
	Helm HelmSpec
	// HelmJobs are the ferry -j values W5 runs with; the first also runs
	// without latency.
	HelmJobs []int
	// Scale sizes the scale benchmark ("scale"); Mounts the
	// mounts-refused benchmark ("mounts"). Both read one source of
	// Scale.Shape's repositories.
	Scale  ScaleSpec
	Mounts MountsSpec
	// W6 sizes workload W6, image sync (issue 27 point 6).
	W6 W6Spec
	// Lean configures the lean-binary rows (issue 29 point 4).
	Lean LeanSpec
	// Workloads selects "w1" (with W4), "w1lat" (W1 through proxies
	// adding W1Delay), "w2", "w3", "helm" (W5), "faults", "scale",
	// "mounts", "w6" (image sync) and "lean" (issue 29's fixed costs
	// against crane); empty is all.
	Workloads []string
	// Reasons says why the setup script could not install a peer, by its
	// binary name.
	Reasons map[string]string
	// Log receives progress lines.
	Log io.Writer
}

func (c *Config) wants(w string) bool {
	if len(c.Workloads) == 0 {
		return true
	}
	for _, x := range c.Workloads {
		if x == w {
			return true
		}
	}
	return false
}

func (c *Config) logf(format string, args ...any) {
	if c.Log != nil {
		fmt.Fprintf(c.Log, "bench: "+format+"\n", args...)
	}
}

// Sample is one measured command.
type Sample struct {
	Wall   time.Duration `json:"wall"`
	MaxRSS int64         `json:"maxRSS"`
	// CPU is the command's user and system CPU time (Exec.CPU).
	CPU time.Duration `json:"cpu,omitempty"`
	// Stats counts the traffic to the registry written to (W1, W3) or
	// read (W2).
	Stats Stats `json:"stats"`
	// Source counts the traffic to the source registry (W1, W3).
	Source Stats `json:"source"`
	// Procs splits a W6 copy's CPU time by process; nil elsewhere.
	Procs *ProcCPU `json:"procs,omitempty"`
}

// ProcCPU is the user and system CPU time each process used during one
// copy: the tool (and its children), the source and mirror registries,
// and the driver itself, whose CPU then is mostly its counting proxies.
type ProcCPU struct {
	Tool, Source, Mirror, Driver time.Duration
}

// Row is one tool in one mode of one workload, with its samples.
type Row struct {
	// Tool is "ferry mirror" or a peer's Name.
	Tool string `json:"tool"`
	// Mode is "-j 8", "sequential", "8-way parallel", ...
	Mode string `json:"mode"`
	// Command is the command line, with HOSTs for the loopback ports.
	Command string `json:"command"`
	// Version is the tool's version.
	Version string `json:"version,omitempty"`
	// Unavailable says why the tool could not run.
	Unavailable string `json:"unavailable,omitempty"`
	// Failed holds the first failure.
	Failed string `json:"failed,omitempty"`
	// Samples are the copies (W1, W3) or resolves (W2).
	Samples []Sample `json:"samples"`
	// Rerun are W4's re-runs onto the full mirror.
	Rerun []Sample `json:"rerun,omitempty"`
	// Verify are W4's `ferry verify` runs.
	Verify []Sample `json:"verify,omitempty"`
	// VerifyDeep are W4's `ferry verify --deep` runs.
	VerifyDeep []Sample `json:"verifyDeep,omitempty"`
	// DigestsOK is false when a copy left a tag at another digest.
	DigestsOK bool `json:"digestsOK"`
	// Packages is the closure size W2's resolve reported.
	Packages int `json:"packages,omitempty"`
	// Jobs is ferry's -j.
	Jobs int `json:"jobs,omitempty"`
}

// Rotated returns cells in the order run (1-based, of runs) takes them:
// the list rotated to start (run-1)/runs of the way through it. Over the
// runs of one figure each tool then runs at places a round's 1/runs
// apart (early, midway and late with the default 3 runs). In one fixed
// order a tool's place decided part of its time: on this project's bench
// machine `ferry mirror --lock`, fourth in W1's round, took 1.06–1.37×
// the time of `ferry mirror`, second, in 8 of 8 committed runs, while
// the two run in ABBA order (10 runs each) took the same time to 1%.
func Rotated[T any](cells []T, run, runs int) []T {
	if len(cells) == 0 || runs < 1 {
		return cells
	}
	s := ((run - 1) % runs) * len(cells) / runs
	return append(append(make([]T, 0, len(cells)), cells[s:]...), cells[:s]...)
}

// Median returns the sample with the median wall time, and false when
// there is none.
func Median(s []Sample) (Sample, bool) {
	if len(s) == 0 {
		return Sample{}, false
	}
	c := append([]Sample(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i].Wall < c[j].Wall })
	return c[len(c)/2], true
}

// Results is everything one run measured.
type Results struct {
	Config   Config    `json:"-"`
	Date     time.Time `json:"date"`
	NumCPU   int       `json:"numCPU"`
	MemTotal string    `json:"memTotal"`
	Kernel   string    `json:"kernel"`
	Go       string    `json:"go"`
	Ferry    string    `json:"ferry"`
	Peers    []*Peer   `json:"-"`
	// Command is how the run was started; Elapsed how long it took.
	Command string        `json:"command"`
	Elapsed time.Duration `json:"elapsed"`
	// W1Gen is how long generating W1's source took, W1Unique its unique
	// bytes and W1Logical the bytes of every image's layers added up.
	W1Gen               time.Duration `json:"w1Gen"`
	W1Unique, W1Logical int64
	W1                  []*Row `json:"w1"`
	W2Gen               time.Duration
	W2Levels            []int
	W2                  []*Row `json:"w2"`
	W3Gen               time.Duration
	W3                  []*Row `json:"w3"`
	// FaultsGen, FaultsUnique and FaultsLogical are the fault
	// benchmark's generation time and sizes; Faults its tools.
	FaultsGen                   time.Duration
	FaultsUnique, FaultsLogical int64
	Faults                      []*FaultRow `json:"faults"`
	// HelmGen is how long generating W5 took, HelmLevels its levels and
	// Helm its `ferry lock` and `ferry resolve` runs.
	HelmGen    time.Duration
	HelmLevels []int
	Helm       []*HelmRow `json:"helm"`
	Notes      []string
	// Scale and Mounts are the scale and mounts-refused benchmarks
	// (issue 14), nil when not run.
	Scale  *ScaleResults  `json:"scale,omitempty"`
	Mounts *MountsResults `json:"mounts,omitempty"`

	// W1Lat is W1 through proxies adding Config.W1Delay per request on
	// both sides (issue 14 point 2), each fresh mirror's storage on a
	// memory file system when the machine has one (memoryFS); W1LatDisk
	// is the same with the mirrors' storage on disk, in Config.Work.
	W1Lat     []*Row `json:"w1Lat"`
	W1LatDisk []*Row `json:"w1LatDisk,omitempty"`
	// W6 is image sync (issue 27 point 6): W6Gen its generation time,
	// W6Unique the selected images' unique bytes.
	W6       []*Row `json:"w6,omitempty"`
	W6Gen    time.Duration
	W6Unique int64
	// Lean holds the lean-binary figures (issue 29 point 4), nil when not
	// run.
	Lean *LeanResults `json:"lean,omitempty"`
	// w1Refs are W1's generated images, once generated.
	w1Refs []Ref
}

// RunAll generates the workloads and measures ferry and the peers.
func RunAll(ctx context.Context, cfg Config) (*Results, error) {
	if cfg.Runs < 1 {
		cfg.Runs = 1
	}
	res := &Results{Config: cfg, Date: time.Now().UTC(), NumCPU: runtime.NumCPU(), Go: runtime.Version()}
	res.MemTotal, res.Kernel = machine()
	if path, err := exec.LookPath("/usr/bin/time"); err == nil {
		TimeBin = path
	} else {
		res.Notes = append(res.Notes, "GNU time (/usr/bin/time) was not found: peak RSS figures are wait4's ru_maxrss, which Linux floors at the benchmark driver's own RSS.")
	}
	if out := Run(ctx, "", nil, nil, cfg.Ferry, "version"); out.Err == nil {
		res.Ferry, _, _ = strings.Cut(strings.TrimSpace(string(out.Stdout)), "\n") // the first line: ferry VERSION
	}
	res.Peers = Peers(ctx, cfg.Reasons, cfg.Work)
	c, err := client.New(client.Options{})
	if err != nil {
		return nil, err
	}
	if cfg.wants("w1") || cfg.wants("w1lat") || cfg.wants("w3") {
		src, err := StartRegistry(ctx, cfg.Ferry, filepath.Join(cfg.Work, "source"))
		if err != nil {
			return nil, err
		}
		defer src.Close()
		// Tools read the source through a counting proxy; the generators
		// write to it directly.
		sp, err := StartProxy(src.Addr, 0)
		if err != nil {
			return nil, err
		}
		defer sp.Close()
		cfg.logf("source registry %s, through proxy %s", src.Addr, sp.Addr)
		if cfg.wants("w1") {
			if err := res.runW1(ctx, c, src, sp); err != nil {
				return res, err
			}
		}
		if cfg.wants("w1lat") && cfg.W1Delay > 0 {
			if memoryFS() {
				if err := res.runW1Lat(ctx, c, src, &res.W1Lat, true); err != nil {
					return res, err
				}
				if err := res.runW1Lat(ctx, c, src, &res.W1LatDisk, false); err != nil {
					return res, err
				}
			} else if err := res.runW1Lat(ctx, c, src, &res.W1Lat, false); err != nil {
				return res, err
			}
		}
		if cfg.wants("w3") {
			if err := res.runW3(ctx, c, src, sp); err != nil {
				return res, err
			}
		}
	}
	if cfg.wants("w6") && cfg.W6.Repos > 0 {
		if err := res.runW6(ctx, c); err != nil {
			return res, err
		}
	}
	if cfg.wants("w2") {
		if err := res.runW2(ctx, c); err != nil {
			return res, err
		}
	}
	if cfg.wants("helm") && cfg.Helm.Charts > 0 && len(cfg.HelmJobs) > 0 {
		if err := res.runHelm(ctx, c); err != nil {
			return res, err
		}
	}
	if (cfg.wants("scale") && len(cfg.Scale.Repos) > 0) || (cfg.wants("mounts") && cfg.Mounts.Repos > 0) {
		if err := res.runScaleAndMounts(ctx, c); err != nil {
			return res, err
		}
	}
	if cfg.wants("faults") && cfg.Faults.Seeds > 0 {
		if err := res.runFaults(ctx, c); err != nil {
			return res, err
		}
	}
	// Last: the cold builds load the machine for minutes.
	if cfg.wants("lean") {
		res.runLean(ctx)
	}
	return res, nil
}

// target is a fresh registry behind a recording proxy.
type target struct {
	reg   *Registry
	proxy *Proxy
	dir   string
}

// newTarget starts a fresh registry in a directory of cfg.Work named
// after name, behind a proxy that counts its traffic.
func newTarget(ctx context.Context, cfg Config, name string) (*target, error) {
	return newDelayedTarget(ctx, cfg, name, 0, false)
}

func (t *target) close() {
	t.proxy.Close()
	t.reg.Close()
	_ = os.RemoveAll(t.dir)
}

// checkDigests reports whether every ref is in the target's registry under
// PREFIX/REPO:TAG at its source digest, asking the registry directly.
func checkDigests(ctx context.Context, c *client.Client, host, prefix string, refs []Ref) error {
	for _, r := range refs {
		repo, err := c.Repository(host + "/" + prefix + r.Repo)
		if err != nil {
			return err
		}
		d, err := repo.Resolve(ctx, r.Tag)
		if err != nil {
			return fmt.Errorf("%s:%s: %w", r.Repo, r.Tag, err)
		}
		if d.Digest != r.Digest {
			return fmt.Errorf("%s:%s is %s in the mirror, %s at the source", r.Repo, r.Tag, d.Digest, r.Digest)
		}
	}
	return nil
}

// measureCopy runs run, a copy of refs into t's mirror, counting the
// traffic through t's proxy and sp (the source's proxy) from the start
// of run, and returns the run with both counts. ok reports whether run
// succeeded: then its sample (with Exec.CPU when cpu is set) is in
// row.Samples and a copy that differs from the source fails the row;
// otherwise row.Failed says why, the failure is logged and t is closed.
func (t *target) measureCopy(ctx context.Context, cfg *Config, c *client.Client, row *Row, sp *Proxy, refs []Ref, cpu bool, run func() Exec) (e Exec, st, sst Stats, ok bool) {
	// What the tools before wrote (a peer that does not mount writes a
	// gigabyte per W1 copy) goes to disk now, not while this tool runs.
	syscall.Sync()
	sp.Take()
	e = run()
	st, sst = t.proxy.Take(), sp.Take()
	if e.Err != nil {
		row.Failed = fmt.Sprintf("%v: %s", e.Err, e.Stderr)
		cfg.logf("  failed: %s", row.Failed)
		t.close()
		return e, st, sst, false
	}
	s := Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st, Source: sst}
	if cpu {
		s.CPU = e.CPU
	}
	row.Samples = append(row.Samples, s)
	if err := checkDigests(ctx, c, t.reg.Addr, "mirror/", refs); err != nil {
		row.DigestsOK = false
		row.Failed = "copy differs from the source: " + err.Error()
	}
	return e, st, sst, true
}

// genW1 generates W1 into src once and returns its images.
func (res *Results) genW1(ctx context.Context, c *client.Client, src *Registry) ([]Ref, error) {
	if res.w1Refs != nil {
		return res.w1Refs, nil
	}
	cfg := res.Config
	spec := cfg.W1
	cfg.logf("W1: generating %d repositories (%d MiB shared, %d+%d MiB unique each)", spec.Repos, spec.Base/MiB, spec.Unique1/MiB, spec.Unique2/MiB)
	start := time.Now()
	refs, err := PushW1(ctx, c, src.Addr, spec)
	if err != nil {
		return nil, fmt.Errorf("W1: generating: %w", err)
	}
	res.W1Gen = time.Since(start)
	res.W1Unique = spec.Base + int64(spec.Repos)*(spec.Unique1+spec.Unique2)
	res.W1Logical = int64(spec.Repos) * (spec.Base + spec.Unique1 + spec.Unique2)
	res.w1Refs = refs
	return refs, nil
}

// runW1 measures W1 and W4. Each run number runs every tool once, in
// turn (ferry, the bound, the peers; Rotated), so that a tool's median
// and another's come from alternating runs in the same stretch of time.
func (res *Results) runW1(ctx context.Context, c *client.Client, src *Registry, sp *Proxy) error {
	cfg := res.Config
	spec := cfg.W1
	refs, err := res.genW1(ctx, c, src)
	if err != nil {
		return err
	}

	roots := make([]string, len(refs))
	for i, r := range refs {
		roots[i] = sp.Addr + "/" + r.Repo + ":" + r.Tag
	}
	type cell struct {
		row *Row
		// deep is `ferry verify --deep` (issue 14: bytes read against the
		// unique bytes).
		run func(t *target) (copyRun, rerun func() Exec, verify, deep func() Exec)
	}
	var cells []cell
	for _, j := range []int{1, cfg.Parallel} {
		row := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", j), Jobs: j, Version: res.Ferry, DigestsOK: true,
			Command: fmt.Sprintf("ferry mirror SRC/w1/app-00:v1 … SRC/w1/app-%02d:v1 --to DST/mirror -j %d -o json -q", spec.Repos-1, j)}
		res.W1 = append(res.W1, row)
		cells = append(cells, cell{row: row, run: func(t *target) (func() Exec, func() Exec, func() Exec, func() Exec) {
			dir, _ := os.MkdirTemp(t.dir, "ferry-")
			args := append([]string{cfg.Ferry, "mirror"}, roots...)
			args = append(args, "--to", t.proxy.Addr+"/mirror", "-j", fmt.Sprint(j), "-o", "json", "-q")
			cp := func() Exec { return Run(ctx, dir, nil, nil, args...) }
			verify := func() Exec { return Run(ctx, dir, nil, nil, cfg.Ferry, "verify", "--lock", "ferry.lock", "-q") }
			deep := func() Exec {
				return Run(ctx, dir, nil, nil, cfg.Ferry, "verify", "--lock", "ferry.lock", "--deep", "-j", fmt.Sprint(j), "-q")
			}
			return cp, cp, verify, deep
		}})
	}
	// The bound: the minimal client (bound.go) as a process of its own.
	if len(cfg.Bound) > 0 {
		row := res.boundRow(res.Config.W1.Repos, "")
		res.W1 = append(res.W1, row)
		cells = append(cells, cell{row: row, run: func(t *target) (func() Exec, func() Exec, func() Exec, func() Exec) {
			args := res.boundArgs(sp.Addr, t.proxy.Addr+"/mirror", refs)
			return func() Exec { return Run(ctx, t.dir, nil, nil, args...) }, nil, nil, nil
		}})
	}
	// The copy alone, from a lock made beforehand (untimed).
	lockRow := &Row{Tool: "ferry mirror --lock", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Jobs: cfg.Parallel, Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry lock SRC/w1/app-00:v1 … (untimed); ferry mirror --lock ferry.lock --to DST/mirror -j %d -o json -q", cfg.Parallel)}
	res.W1 = append(res.W1, lockRow)
	cells = append(cells, cell{row: lockRow, run: func(t *target) (func() Exec, func() Exec, func() Exec, func() Exec) {
		dir, _ := os.MkdirTemp(t.dir, "ferry-")
		if e := Run(ctx, dir, nil, nil, append(append([]string{cfg.Ferry, "lock"}, roots...), "-q")...); e.Err != nil {
			return func() Exec { return e }, nil, nil, nil
		}
		cp := func() Exec {
			return Run(ctx, dir, nil, nil, cfg.Ferry, "mirror", "--lock", "ferry.lock", "--to", t.proxy.Addr+"/mirror", "-j", fmt.Sprint(cfg.Parallel), "-o", "json", "-q")
		}
		return cp, nil, nil, nil
	}})
	// Sharded: N `ferry mirror --shard I/N` processes at once (shard.go).
	for _, n := range ShardCounts {
		row, start := res.shardRow(ctx, roots, n)
		cells = append(cells, cell{row: row, run: func(t *target) (func() Exec, func() Exec, func() Exec, func() Exec) {
			return start(t.dir, t.proxy.Addr+"/mirror"), nil, nil, nil
		}})
	}
	for _, p := range res.Peers {
		for _, par := range []int{1, cfg.Parallel} {
			mode := "sequential"
			if par > 1 {
				mode = fmt.Sprintf("%d-way parallel", par)
			}
			row := &Row{Tool: p.Name, Mode: mode, Version: p.Version, Unavailable: p.Unavailable, DigestsOK: true,
				Command: fmt.Sprintf("xargs -P %d -L 1 %s %s < pairs  # %d lines: %s", par, p.Bin, strings.Join(p.Args, " "), spec.Repos, p.Line("SRC/w1/app-NN:v1", "DST/mirror/w1/app-NN:v1"))}
			res.W1 = append(res.W1, row)
			if p.Unavailable != "" {
				continue
			}
			cells = append(cells, cell{row: row, run: func(t *target) (func() Exec, func() Exec, func() Exec, func() Exec) {
				var lines strings.Builder
				for i, r := range refs {
					fmt.Fprintln(&lines, p.Line(roots[i], t.proxy.Addr+"/mirror/"+r.Repo+":"+r.Tag))
				}
				in := []byte(lines.String())
				args := append([]string{"xargs", "-P", fmt.Sprint(par), "-L", "1", p.Path}, p.Args...)
				if p.Prepare != nil {
					if err := p.Prepare(ctx, sp.Addr, t.proxy.Addr); err != nil {
						return func() Exec { return Exec{Err: err, Stderr: err.Error()} }, nil, nil, nil
					}
				}
				cp := func() Exec { return Run(ctx, t.dir, p.Env, in, args...) }
				return cp, cp, nil, nil
			}})
		}
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, cl := range Rotated(cells, run, cfg.Runs) {
			row := cl.row
			if row.Failed != "" {
				continue
			}
			cfg.logf("W1 run %d/%d: %s %s", run, cfg.Runs, row.Tool, row.Mode)
			t, err := newTarget(ctx, cfg, "w1")
			if err != nil {
				return err
			}
			cp, rerun, verify, deep := cl.run(t)
			e, st, sst, ok := t.measureCopy(ctx, &cfg, c, row, sp, refs, false, cp)
			if !ok {
				continue
			}
			cfg.logf("  %.2fs, %s up, %d uploads, %d mounts, %d requests; read %s in %d requests from the source", e.Wall.Seconds(), Bytes(st.BytesUp), st.BlobUploads, st.Mounts, st.Requests, Bytes(sst.BytesDown), sst.Requests)
			if rerun != nil {
				e := rerun()
				st, sst := t.proxy.Take(), sp.Take()
				if e.Err != nil {
					row.Failed = fmt.Sprintf("re-run: %v: %s", e.Err, e.Stderr)
				} else {
					row.Rerun = append(row.Rerun, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st, Source: sst})
					cfg.logf("  W4 re-run %.2fs, %d requests, %s up", e.Wall.Seconds(), st.Requests, Bytes(st.BytesUp))
				}
			}
			if verify != nil {
				e := verify()
				st := t.proxy.Take()
				if e.Err != nil {
					row.Failed = fmt.Sprintf("verify: %v: %s", e.Err, e.Stderr)
				} else {
					row.Verify = append(row.Verify, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st})
					cfg.logf("  W4 verify %.2fs, %d requests", e.Wall.Seconds(), st.Requests)
				}
			}
			if deep != nil && row.Failed == "" {
				e := deep()
				st := t.proxy.Take()
				if e.Err != nil {
					row.Failed = fmt.Sprintf("verify --deep: %v: %s", e.Err, e.Stderr)
				} else {
					row.VerifyDeep = append(row.VerifyDeep, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st})
					cfg.logf("  W4 verify --deep %.2fs, %d requests, read %s (unique %s)", e.Wall.Seconds(), st.Requests, Bytes(st.BytesDown), Bytes(res.W1Unique))
				}
			}
			t.close()
		}
	}
	return nil
}

func (res *Results) runW3(ctx context.Context, c *client.Client, src *Registry, sp *Proxy) error {
	cfg := res.Config
	cfg.logf("W3: generating one image with a %d MiB layer (streamed)", cfg.W3Size/MiB)
	start := time.Now()
	ref, err := PushW3(ctx, c, src.Addr, cfg.W3Size)
	if err != nil {
		return fmt.Errorf("W3: generating: %w", err)
	}
	res.W3Gen = time.Since(start)
	srcRef := sp.Addr + "/" + ref.Repo + ":" + ref.Tag
	type cell struct {
		row  *Row
		args func(t *target) []string
		env  []string
		prep func(ctx context.Context, hosts ...string) error
	}
	ferryRow := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry mirror SRC/w3/big:v1 --to DST/mirror -j %d -o json -q", cfg.Parallel)}
	res.W3 = append(res.W3, ferryRow)
	cells := []cell{{row: ferryRow, args: func(t *target) []string {
		return []string{cfg.Ferry, "mirror", srcRef, "--to", t.proxy.Addr + "/mirror", "-j", fmt.Sprint(cfg.Parallel), "-o", "json", "-q"}
	}}}
	for _, p := range res.Peers {
		row := &Row{Tool: p.Name, Mode: "single copy", Version: p.Version, Unavailable: p.Unavailable, DigestsOK: true,
			Command: p.Bin + " " + strings.Join(p.Args, " ") + " " + p.Line("SRC/w3/big:v1", "DST/mirror/w3/big:v1")}
		res.W3 = append(res.W3, row)
		if p.Unavailable != "" {
			continue
		}
		cells = append(cells, cell{row: row, env: p.Env, prep: p.Prepare, args: func(t *target) []string {
			args := append([]string{p.Path}, p.Args...)
			return append(args, strings.Fields(p.Line(srcRef, t.proxy.Addr+"/mirror/"+ref.Repo+":"+ref.Tag))...)
		}})
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, cl := range Rotated(cells, run, cfg.Runs) {
			row := cl.row
			if row.Failed != "" {
				continue
			}
			cfg.logf("W3 run %d/%d: %s", run, cfg.Runs, row.Tool)
			t, err := newTarget(ctx, cfg, "w3")
			if err != nil {
				return err
			}
			dir, _ := os.MkdirTemp(t.dir, "cwd-")
			if cl.prep != nil {
				if err := cl.prep(ctx, sp.Addr, t.proxy.Addr); err != nil {
					row.Failed = err.Error()
					t.close()
					continue
				}
			}
			e, st, _, ok := t.measureCopy(ctx, &cfg, c, row, sp, []Ref{ref}, false, func() Exec { return Run(ctx, dir, cl.env, nil, cl.args(t)...) })
			if !ok {
				continue
			}
			cfg.logf("  %.2fs, peak RSS %s, %s up", e.Wall.Seconds(), Bytes(e.MaxRSS), Bytes(st.BytesUp))
			t.close()
		}
	}
	return nil
}

// W2MetadataJobs is the registry reads ferry keeps in flight while
// resolving: --metadata-jobs, which W2 leaves at its default whatever -j
// its rows give (-j bounds blob copies).
const W2MetadataJobs = resolve.DefaultConcurrency

func (res *Results) runW2(ctx context.Context, c *client.Client) error {
	cfg := res.Config
	spec := cfg.W2
	res.W2Levels = Levels(spec.Packages, spec.Depth)
	reg, err := StartRegistry(ctx, cfg.Ferry, filepath.Join(cfg.Work, "w2"))
	if err != nil {
		return err
	}
	defer reg.Close()
	p, err := StartProxy(reg.Addr, cfg.W2Delay)
	if err != nil {
		return err
	}
	defer p.Close()
	cfg.logf("W2: generating %d bundles in %d levels %v, %d tags each", spec.Packages, spec.Depth, res.W2Levels, spec.Tags)
	start := time.Now()
	root, err := PushW2(ctx, c, reg.Addr, p.Addr, spec, 16)
	if err != nil {
		return fmt.Errorf("W2: generating: %w", err)
	}
	res.W2Gen = time.Since(start)
	cfg.logf("W2: generated in %.1fs", res.W2Gen.Seconds())
	rootRef := p.Addr + "/" + root.Repo + ":" + root.Tag
	for _, j := range cfg.W2Jobs {
		row := &Row{Tool: "ferry resolve", Mode: fmt.Sprintf("-j %d", j), Jobs: j, Version: res.Ferry, DigestsOK: true,
			Command: fmt.Sprintf("ferry resolve PROXY/%s:%s -o json -j %d", root.Repo, root.Tag, j)}
		res.W2 = append(res.W2, row)
		for run := 1; run <= cfg.Runs; run++ {
			cfg.logf("W2 run %d/%d: ferry resolve -j %d", run, cfg.Runs, j)
			dir, _ := os.MkdirTemp(cfg.Work, "w2-run-")
			p.Take()
			// W2's dependencies declare ranges: Porter's default
			// strategy, exact, resolves none (porter/format.go).
			e := Run(ctx, dir, []string{"FERRY_VERSION_STRATEGY=highest"}, nil, cfg.Ferry, "resolve", rootRef, "-o", "json", "-j", fmt.Sprint(j))
			st := p.Take()
			_ = os.RemoveAll(dir)
			if e.Err != nil {
				row.Failed = fmt.Sprintf("%v: %s", e.Err, e.Stderr)
				cfg.logf("  failed: %s", row.Failed)
				break
			}
			var g struct {
				Packages []json.RawMessage `json:"packages"`
			}
			if err := json.Unmarshal(e.Stdout, &g); err != nil {
				row.Failed = "reading resolve -o json: " + err.Error()
				break
			}
			row.Packages = len(g.Packages)
			row.Samples = append(row.Samples, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st})
			cfg.logf("  %.2fs, %d packages, %d requests (%s), %d repeated reads", e.Wall.Seconds(), row.Packages, st.Requests, st.KindsString(), st.Repeats)
		}
	}
	return nil
}

// machine returns the total memory and kernel release, best effort.
func machine() (mem, kernel string) {
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					var kb int64
					fmt.Sscan(f[1], &kb)
					mem = Bytes(kb * 1024)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	return mem, kernel
}
