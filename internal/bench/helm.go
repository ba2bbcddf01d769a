package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/registry"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/lock"
)

// HelmSpec sizes workload W5: Charts OCI charts in Depth levels, each
// pushed at Tags versions.
type HelmSpec struct {
	Charts, Depth, Tags int
	// Images adds a second closure, the same charts each deploying one
	// image of its own, to measure what the images cost apart.
	Images bool
}

// HelmPerChart is the minimum requests an OCI chart chosen by a range
// costs: its tag list, its manifest and its chart layer (Helm's own pull,
// pkg/registry/client.go Pull, reads the same manifest and layer; the
// config blob holds nothing the layer's Chart.yaml does not).
const HelmPerChart = 3

// HelmRow is one `ferry lock` configuration of W5, with its samples.
type HelmRow struct {
	// Variant is "charts only" or "one image per chart".
	Variant string `json:"variant"`
	// Mode is "-j 8, 20ms" and the like.
	Mode    string        `json:"mode"`
	Jobs    int           `json:"jobs"`
	Delay   time.Duration `json:"delay"`
	Command string        `json:"command"`
	Failed  string        `json:"failed,omitempty"`
	// Charts and Images are the closure's sizes as ferry.lock records
	// them (kinds helm.chart and image).
	Charts  int      `json:"charts"`
	Images  int      `json:"images"`
	Samples []Sample `json:"samples"`
}

// HelmName is the chart name of chart i of level l.
func HelmName(l, i int) string { return fmt.Sprintf("l%d-c%03d", l, i) }

// helmTemplate is a chart's one template: a ConfigMap naming no image, or
// a Deployment of image when image is not empty.
func helmTemplate(name, image string) string {
	if image == "" {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-" + name + "\ndata:\n  version: {{ .Chart.Version | quote }}\n"
	}
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-" + name + "\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: " + image + "\n"
}

// PushHelm generates a W5 closure in the registry host, pushing jobs
// charts at once with Helm's own registry client (`helm push`), under
// PREFIX/charts/NAME:VERSION. Chart.yaml dependencies name
// oci://DEPHOST/PREFIX/charts with the range W2Range, so the closure is
// read through whatever DEPHOST forwards to host (the counting proxy).
// With images, every chart deploys DEPHOST/PREFIX/images/NAME:v1, a
// one-layer image pushed beside it. It returns the root chart's
// repository (without host); its versions are W2Versions(spec.Tags).
// Helm keeps its credentials file under work.
func PushHelm(ctx context.Context, c *client.Client, host, depHost, prefix, work string, spec HelmSpec, images bool, jobs int) (string, error) {
	levels := Levels(spec.Charts, spec.Depth)
	if levels == nil {
		return "", fmt.Errorf("W5: %d charts cannot fill %d levels", spec.Charts, spec.Depth)
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	hc, err := registry.NewClient(
		registry.ClientOptPlainHTTP(),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(work, "helm-registry.json")),
	)
	if err != nil {
		return "", fmt.Errorf("helm registry client: %w", err)
	}
	created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.RFC3339)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	for l, n := range levels {
		for i := range n {
			g.Go(func() error {
				name := HelmName(l, i)
				image := ""
				if images {
					img := prefix + "/images/" + name
					repo, err := c.Repository(host + "/" + img)
					if err != nil {
						return err
					}
					data, err := LayerBytes(img, 1024)
					if err != nil {
						return err
					}
					ld := blobDesc(ocispec.MediaTypeImageLayerGzip, data)
					if err := pushBytes(gctx, repo, ld, data); err != nil {
						return fmt.Errorf("%s: layer: %w", img, err)
					}
					m, err := pushImage(gctx, repo, img, []ocispec.Descriptor{ld})
					if err != nil {
						return err
					}
					if err := repo.Tag(gctx, m, "v1"); err != nil {
						return fmt.Errorf("%s: tag: %w", img, err)
					}
					image = depHost + "/" + img + ":v1"
				}
				var deps []*chart.Dependency
				if l+1 < len(levels) {
					for _, j := range W2Children(i, n, levels[l+1]) {
						deps = append(deps, &chart.Dependency{Name: HelmName(l+1, j), Version: W2Range, Repository: "oci://" + depHost + "/" + prefix + "/charts"})
					}
				}
				for _, v := range W2Versions(spec.Tags) {
					tgz, err := charttest.ChartArchive(charttest.Chart(charttest.ChartSpec{
						Name: name, Version: v, Dependencies: deps,
						Templates: map[string]string{"app.yaml": helmTemplate(name, image)},
					}))
					if err != nil {
						return err
					}
					ref := fmt.Sprintf("%s/%s/charts/%s:%s", host, prefix, name, v)
					if _, err := hc.Push(tgz, ref, registry.PushOptCreationTime(created)); err != nil {
						return fmt.Errorf("helm push %s: %w", ref, err)
					}
				}
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	return prefix + "/charts/" + HelmName(0, 0), nil
}

// helmVariant is one generated W5 closure.
type helmVariant struct {
	name string
	root string
}

func (res *Results) runHelm(ctx context.Context, c *client.Client) error {
	cfg := res.Config
	spec := cfg.Helm
	res.HelmLevels = Levels(spec.Charts, spec.Depth)
	dir := filepath.Join(cfg.Work, "helm")
	reg, err := StartRegistry(ctx, cfg.Ferry, dir)
	if err != nil {
		return err
	}
	defer reg.Close()
	// The charts name the proxy, so it exists before them; it adds the
	// latency only while ferry runs.
	p, err := StartProxy(reg.Addr, 0)
	if err != nil {
		return err
	}
	defer p.Close()
	variants := []helmVariant{{name: "charts only"}}
	if spec.Images {
		variants = append(variants, helmVariant{name: "one image per chart"})
	}
	start := time.Now()
	for k := range variants {
		prefix := "w5"
		if k == 1 {
			prefix = "w5img"
		}
		cfg.logf("W5: generating %d charts (%s) in %d levels %v, %d versions each", spec.Charts, variants[k].name, spec.Depth, res.HelmLevels, spec.Tags)
		root, err := PushHelm(ctx, c, reg.Addr, p.Addr, prefix, dir, spec, k == 1, 8)
		if err != nil {
			return fmt.Errorf("W5: generating: %w", err)
		}
		variants[k].root = root
	}
	res.HelmGen = time.Since(start)
	cfg.logf("W5: generated in %.1fs", res.HelmGen.Seconds())
	type setting struct {
		jobs  int
		delay time.Duration
	}
	var settings []setting
	for _, j := range cfg.HelmJobs {
		settings = append(settings, setting{j, cfg.W2Delay})
	}
	settings = append(settings, setting{cfg.HelmJobs[0], 0})
	for _, v := range variants {
		for _, s := range settings {
			row := &HelmRow{Variant: v.name, Mode: fmt.Sprintf("-j %d, %s", s.jobs, s.delay), Jobs: s.jobs, Delay: s.delay,
				Command: fmt.Sprintf("ferry lock -j %d -q  # ferry.yaml: charts: [{ref: oci://PROXY/%s, version: %q}]", s.jobs, v.root, W2Range)}
			res.Helm = append(res.Helm, row)
			for run := 1; run <= cfg.Runs; run++ {
				cfg.logf("W5 run %d/%d: %s, ferry lock %s", run, cfg.Runs, v.name, row.Mode)
				if err := row.lockOnce(ctx, cfg, p, v.root, s.delay); err != nil {
					row.Failed = err.Error()
					cfg.logf("  failed: %s", row.Failed)
					break
				}
				m := row.Samples[len(row.Samples)-1]
				cfg.logf("  %.2fs, %d charts, %d images, %d requests (%s), %d repeated reads", m.Wall.Seconds(), row.Charts, row.Images, m.Stats.Requests, m.Stats.KindsString(), m.Stats.Repeats)
			}
		}
	}
	return nil
}

// lockOnce runs `ferry lock` on a fresh ferry.yaml naming root through the
// proxy p with delay, and records the sample and the closure's sizes.
func (row *HelmRow) lockOnce(ctx context.Context, cfg Config, p *Proxy, root string, delay time.Duration) error {
	dir, err := os.MkdirTemp(cfg.Work, "w5-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	yml := fmt.Sprintf("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\ncharts:\n  - ref: oci://%s/%s\n    version: %q\n", p.Addr, root, W2Range)
	if err := os.WriteFile(filepath.Join(dir, "ferry.yaml"), []byte(yml), 0o644); err != nil {
		return err
	}
	p.Take()
	p.Delay = delay
	e := Run(ctx, dir, nil, nil, cfg.Ferry, "lock", "-j", fmt.Sprint(row.Jobs), "-q")
	p.Delay = 0
	st := p.Take()
	if e.Err != nil {
		return fmt.Errorf("%v: %s", e.Err, e.Stderr)
	}
	l, err := lock.Read(filepath.Join(dir, "ferry.lock"))
	if err != nil {
		return fmt.Errorf("reading ferry.lock: %w", err)
	}
	row.Charts, row.Images = 0, 0
	for _, pk := range l.Resolved() {
		switch pk.Kind {
		case "helm.chart":
			row.Charts++
		case "image":
			row.Images++
		}
	}
	row.Samples = append(row.Samples, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st})
	return nil
}

// helmExtra lists the requests a sample made beyond the minimum, by kind:
// tag lists, manifest GETs and blob GETs above one per chart, and every
// other kind.
func helmExtra(st Stats, charts int) string {
	var out []string
	for _, k := range []string{"tags", "manifest GET", "blob GET"} {
		if n := st.ByKind[k] - charts; n != 0 {
			out = append(out, fmt.Sprintf("%s %+d", k, n))
		}
	}
	keys := Stats{ByKind: map[string]int{}}
	for k, n := range st.ByKind {
		if k != "tags" && k != "manifest GET" && k != "blob GET" {
			keys.ByKind[k] = n
		}
	}
	if s := keys.KindsString(); s != "" {
		out = append(out, s)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

func (res *Results) writeHelm(b *strings.Builder) {
	cfg := res.Config
	spec := cfg.Helm
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	bound := time.Duration(spec.Depth*HelmPerChart) * cfg.W2Delay
	versions := W2Versions(spec.Tags)
	p("## W5 Helm chart closure (`ferry lock`)\n\n")
	p("%d OCI charts built with Helm's library (`chartutil.Save`) and pushed with Helm's own registry client (`helm push`), in %d levels %v from one root, each at %d versions (%s … %s and %s). Every chart depends on some of the next level's charts (as W2: each j ≡ i mod n plus one shared pick, so there are diamonds) with the range `%s` on an `oci://` repository, so each dependency needs its tag list. ",
		spec.Charts, spec.Depth, res.HelmLevels, spec.Tags, versions[0], versions[len(versions)-2], versions[len(versions)-1], W2Range)
	p("In the **charts only** closure each chart's one template is a ConfigMap naming no image, so the requests are the charts' alone")
	if spec.Images {
		p("; the **one image per chart** closure is the same graph (other repositories) where each chart's template is a Deployment of an image of its own (a one-layer single-platform image), to show what the images add")
	}
	p(". Generated in %s. ferry.yaml is `charts: [{ref: oci://PROXY/ROOT, version: \"%s\"}]`; `ferry lock` reads the registry through a proxy on 127.0.0.1 that sleeps the given latency before forwarding each request, and counts them.\n\n", secs(res.HelmGen), W2Range)
	p("An OCI chart chosen by a range needs at least %d requests: its tag list, its manifest and its chart layer (the root too: ferry.yaml gives it a range), **%d per chart**. The latency bound is depth × round trips per level × latency = %d × %d × %s = **%s**; with at most j requests in flight the throughput floor is requests × latency / j.\n\n",
		HelmPerChart, HelmPerChart, spec.Depth, HelmPerChart, cfg.W2Delay, secs(bound))
	p("| closure | ferry lock | time | charts | images | requests | per chart | minimum | beyond the minimum, by kind | repeated reads | vs bound %s | throughput floor | vs floor |\n|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n", secs(bound))
	for _, r := range res.Helm {
		if r.Failed != "" && len(r.Samples) == 0 {
			p("| %s | %s | failed: %s | | | | | | | | | | |\n", r.Variant, r.Mode, oneLine(r.Failed))
			continue
		}
		m, _ := Median(r.Samples)
		vsBound, floorS, vsFloor := "—", "—", "—"
		if r.Delay > 0 {
			floor := time.Duration(m.Stats.Requests) * r.Delay / time.Duration(max(1, r.Jobs))
			vsBound, floorS, vsFloor = ratio(m.Wall.Seconds(), bound.Seconds()), secs(floor), ratio(m.Wall.Seconds(), floor.Seconds())
		}
		p("| %s | %s | %s | %d | %d | %d | %.2f | %d | %s | %d | %s | %s | %s |\n", r.Variant, r.Mode, secs(m.Wall), r.Charts, r.Images, m.Stats.Requests,
			float64(m.Stats.Requests)/float64(max(1, r.Charts)), HelmPerChart*r.Charts, helmExtra(m.Stats, r.Charts), m.Stats.Repeats, vsBound, floorS, vsFloor)
	}
	p("\nAll requests by kind (median run):\n\n| closure | ferry lock | by kind |\n|---|---|---|\n")
	for _, r := range res.Helm {
		if m, ok := Median(r.Samples); ok {
			p("| %s | %s | %s |\n", r.Variant, r.Mode, m.Stats.KindsString())
		}
	}
	p("\n")
	// The images' cost: the image closure against the charts-only one in
	// the same setting.
	var lines []string
	for _, r := range res.Helm {
		if r.Variant == "charts only" || len(r.Samples) == 0 || r.Images == 0 {
			continue
		}
		for _, base := range res.Helm {
			if base.Variant == "charts only" && base.Mode == r.Mode && len(base.Samples) > 0 {
				m, _ := Median(r.Samples)
				bm, _ := Median(base.Samples)
				lines = append(lines, fmt.Sprintf("- %s: %d requests against %d for the charts alone, %.2f more per image (%s → %s)", r.Mode,
					m.Stats.Requests, bm.Stats.Requests, float64(m.Stats.Requests-bm.Stats.Requests)/float64(r.Images), bm.Stats.KindsString(), m.Stats.KindsString()))
			}
		}
	}
	if len(lines) > 0 {
		p("What the images add (same graph, one image per chart):\n\n%s\n\n", strings.Join(lines, "\n"))
	}
	p("No peer tool locks a Helm chart closure (`helm dependency update` resolves one level, into charts/), so W5 has no peer row.\n\n```sh\n")
	for _, r := range res.Helm {
		p("%s\n", r.Command)
	}
	p("```\n\n")
}
