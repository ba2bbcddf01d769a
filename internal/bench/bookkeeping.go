package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// BookkeepingRun times ferry's in-process bookkeeping over one synthetic
// closure, without a registry: what a mirror run does with the graph and
// the lock besides copying.
type BookkeepingRun struct {
	Packages int               `json:"packages"`
	Steps    []BookkeepingStep `json:"steps"`
}

// BookkeepingStep is one timed step of a BookkeepingRun.
type BookkeepingStep struct {
	Name string        `json:"name"`
	Wall time.Duration `json:"wall"`
	// CPU is the driver process's user and system CPU time during the
	// step (its garbage collection included).
	CPU time.Duration `json:"cpu"`
}

// Total is the time of every step.
func (b *BookkeepingRun) Total() time.Duration {
	var t time.Duration
	for _, s := range b.Steps {
		t += s.Wall
	}
	return t
}

// TotalCPU is the CPU time of every step.
func (b *BookkeepingRun) TotalCPU() time.Duration {
	var t time.Duration
	for _, s := range b.Steps {
		t += s.CPU
	}
	return t
}

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bookkeepingHost is the synthetic closure's registry; nothing is asked
// of it.
const bookkeepingHost = "bench.example"

// SyntheticGraph returns a resolved graph of n Porter bundles shaped as W2
// (8 levels from one root, W2Children's edges with diamonds), each with
// one invocation image, as the resolver would return it.
func SyntheticGraph(n int) (*resolve.Graph, error) {
	levels := Levels(n, 8)
	if levels == nil {
		return nil, fmt.Errorf("%d packages cannot fill 8 levels", n)
	}
	g := &resolve.Graph{Packages: map[string]*resolve.Package{}, Replaced: map[string]string{}}
	for l, size := range levels {
		for i := range size {
			src := bookkeepingHost + "/" + W2Name(l, i)
			p := &resolve.Package{
				ID: src, Source: src, Ref: src + ":v1.28.0", Kind: format.KindPorterBundle, Version: "v1.28.0",
				Descriptor: ocispec.Descriptor{MediaType: ocispec.MediaTypeImageIndex, Digest: digest.FromString(src), Size: 1234},
				Meta: &format.Metadata{Kind: format.KindPorterBundle, Images: []format.Image{{
					Name: "invocation", Ref: src + "@" + digest.FromString(src+"/invocation").String(),
					Descriptor: ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString(src + "/invocation"), Size: 456},
				}}},
			}
			if l+1 < len(levels) {
				for _, j := range W2Children(i, size, levels[l+1]) {
					dep := bookkeepingHost + "/" + W2Name(l+1, j)
					p.Dependencies = append(p.Dependencies, resolve.Edge{Name: fmt.Sprintf("l%d-p%04d", l+1, j), Ref: dep, Constraint: W2Range, Target: dep})
				}
			}
			g.Packages[src] = p
			if l == 0 && i == 0 {
				g.Roots = []string{src}
			}
		}
	}
	return g, nil
}

// Bookkeeping times, for a synthetic closure of n packages, the steps of
// a mirror run that do not touch a registry: the install plan, building,
// validating, encoding and decoding the lock, rebuilding the graph from
// it, diffing two locks, the mirror mapping's checks, and
// relocate.Mirror's planning up to its first copy (stopped there by a
// deliberate layout clash).
func Bookkeeping(ctx context.Context, n int) (*BookkeepingRun, error) {
	g, err := SyntheticGraph(n)
	if err != nil {
		return nil, err
	}
	run := &BookkeepingRun{Packages: n}
	step := func(name string, f func() error) error {
		runtime.GC()
		start, cpu := time.Now(), processCPU()
		err := f()
		run.Steps = append(run.Steps, BookkeepingStep{Name: name, Wall: time.Since(start), CPU: processCPU() - cpu})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	var l, parsed *lock.Lock
	var data []byte
	mapping, err := relocate.ParseMapping("mirror.example/mirror")
	if err != nil {
		return nil, err
	}
	formats := []format.Format{porter.Reader{}}
	steps := []struct {
		name string
		f    func() error
	}{
		{"resolve: install plan (Graph.Plan)", func() error { _, err := g.Plan(); return err }},
		{"lock.FromGraph", func() error { l = lock.FromGraph(g, "sha256:"+strings.Repeat("0", 64)); return nil }},
		{"Lock.Validate", func() error { return l.Validate() }},
		{"Lock.Marshal (YAML)", func() error { data, err = l.Marshal(); return err }},
		{"lock.Parse", func() error { parsed, err = lock.Parse(data); return err }},
		{"Lock.Graph", func() error { l.Graph(); return nil }},
		{"lock.Diff", func() error {
			if len(lock.Diff(l, parsed)) != 0 {
				return errors.New("a lock differs from itself parsed")
			}
			return nil
		}},
		{"mapping: Repo, Check, CheckLayout", func() error {
			var sources []string
			for _, p := range l.Resolved() {
				sources = append(sources, p.Source)
				_ = mapping.Repo(p.Source)
			}
			if err := mapping.Check(sources); err != nil {
				return err
			}
			return mapping.CheckLayout(l, formats)
		}},
	}
	for _, s := range steps {
		if err := step(s.name, s.f); err != nil {
			return nil, err
		}
	}
	// relocate.Mirror up to its first copy: the same lock plus one
	// package that lands on the root's mirror repository, which Mirror
	// refuses after planning and before it opens any repository.
	clash := *parsed
	clash.Packages = append(append([]lock.Package(nil), parsed.Packages...), parsed.Packages[0])
	clash.Packages[len(clash.Packages)-1].Source = "other.example/" + W2Name(0, 0)
	if err := step("relocate.Mirror: planning before the copy", func() error {
		_, err := relocate.Mirror(ctx, &clash, relocate.Options{To: mapping, Formats: formats, Concurrency: 8})
		if err == nil || !strings.Contains(err.Error(), "maps several sources to one repository") {
			return fmt.Errorf("want the layout clash, got %v", err)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return run, nil
}

func writeBookkeeping(b *strings.Builder, runs []*BookkeepingRun) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### Bookkeeping\n\n")
	p("ferry's own bookkeeping, in process and without a registry (`bench.Bookkeeping`): a synthetic resolved graph of N Porter bundles shaped as W2 (8 levels, diamonds, one image each) goes through the steps of a mirror run that touch no registry, each timed once in the benchmark driver: wall time, and the driver's CPU time during the step (garbage collection included), which a shared machine disturbs less. **per package** is the CPU time divided by N; **growth** is the per-package figure at the largest N over the smallest N's, by CPU and by wall time (1.00× is linear; a step whose cost grows with N, quadratic, shows a growth near the ratio of the Ns). Not measured here: the mirror's blob ledger (relocate/ledger.go, unexported), which the scale table above exercises.\n\n")
	if len(runs) == 0 {
		return
	}
	first, last := runs[0], runs[len(runs)-1]
	p("| step |")
	for _, r := range runs {
		p(" %d: time | CPU per package |", r.Packages)
	}
	p(" growth %d vs %d: CPU | wall |\n|---|", last.Packages, first.Packages)
	for range runs {
		p("---:|---:|")
	}
	p("---:|---:|\n")
	growth := func(a, b time.Duration) string {
		return ratio(a.Seconds()/float64(last.Packages), b.Seconds()/float64(first.Packages))
	}
	for i, s := range first.Steps {
		p("| %s |", s.Name)
		for _, r := range runs {
			if i < len(r.Steps) {
				p(" %s | %s |", secs(r.Steps[i].Wall), perItem(r.Steps[i].CPU, r.Packages))
			} else {
				p(" | |")
			}
		}
		if i < len(last.Steps) {
			p(" %s | %s |\n", growth(last.Steps[i].CPU, s.CPU), growth(last.Steps[i].Wall, s.Wall))
		} else {
			p(" | |\n")
		}
	}
	p("| **all** |")
	for _, r := range runs {
		p(" **%s** | **%s** |", secs(r.Total()), perItem(r.TotalCPU(), r.Packages))
	}
	p(" **%s** | **%s** |\n\n", growth(last.TotalCPU(), first.TotalCPU()), growth(last.Total(), first.Total()))
}
