package bench

import (
	"context"
	"encoding/json"
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
	// The formats register the lock attributes they record
	// (chartDigest), which lock.Read checks.
	_ "github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/internal/charttest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/resolve"
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

// HelmRow is one `ferry lock` or `ferry resolve` configuration of W5,
// with its samples.
type HelmRow struct {
	// Variant is "charts only" or "one image per chart".
	Variant string `json:"variant"`
	// Tool is "ferry lock" or "ferry resolve".
	Tool string `json:"tool"`
	// Mode is "-j 8, 20ms" and the like.
	Mode    string        `json:"mode"`
	Jobs    int           `json:"jobs"`
	Delay   time.Duration `json:"delay"`
	Command string        `json:"command"`
	Failed  string        `json:"failed,omitempty"`
	// Charts and Images are the closure's sizes as ferry.lock (or
	// resolve -o json) records them (kinds helm.chart and image).
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
		for k, s := range settings {
			// ferry resolve once, beside the first lock: the resolver's
			// requests apart from what the lock adds.
			tools := []string{"lock"}
			if k == 0 {
				tools = append(tools, "resolve")
			}
			for _, tool := range tools {
				row := &HelmRow{Variant: v.name, Tool: "ferry " + tool, Mode: fmt.Sprintf("-j %d, %s", s.jobs, s.delay), Jobs: s.jobs, Delay: s.delay,
					Command: fmt.Sprintf("ferry %s -j %d -q  # ferry.yaml: charts: [{ref: oci://PROXY/%s, version: %q}]", tool, s.jobs, v.root, W2Range)}
				if tool == "resolve" {
					row.Command = fmt.Sprintf("ferry resolve -o json -j %d  # the same ferry.yaml", s.jobs)
				}
				res.Helm = append(res.Helm, row)
				res.runHelmRow(ctx, p, row, v.root)
			}
		}
	}
	return nil
}

func (res *Results) runHelmRow(ctx context.Context, p *Proxy, row *HelmRow, root string) {
	cfg := res.Config
	for run := 1; run <= cfg.Runs; run++ {
		cfg.logf("W5 run %d/%d: %s, %s %s", run, cfg.Runs, row.Variant, row.Tool, row.Mode)
		if err := row.runOnce(ctx, cfg, p, root); err != nil {
			row.Failed = err.Error()
			cfg.logf("  failed: %s", row.Failed)
			return
		}
		m := row.Samples[len(row.Samples)-1]
		cfg.logf("  %.2fs, %d charts, %d images, %d requests (%s), %d repeated reads", m.Wall.Seconds(), row.Charts, row.Images, m.Stats.Requests, m.Stats.KindsString(), m.Stats.Repeats)
	}
}

// runOnce runs `ferry lock` (or resolve) on a fresh ferry.yaml naming
// root through the proxy p with the row's delay, and records the sample
// and the closure's sizes.
func (row *HelmRow) runOnce(ctx context.Context, cfg Config, p *Proxy, root string) error {
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
	args := []string{cfg.Ferry, "lock", "-j", fmt.Sprint(row.Jobs), "-q"}
	if row.Tool == "ferry resolve" {
		args = []string{cfg.Ferry, "resolve", "-o", "json", "-j", fmt.Sprint(row.Jobs)}
	}
	p.Delay = row.Delay
	e := Run(ctx, dir, nil, nil, args...)
	p.Delay = 0
	st := p.Take()
	if e.Err != nil {
		return fmt.Errorf("%v: %s", e.Err, e.Stderr)
	}
	var kinds []string
	if row.Tool == "ferry resolve" {
		var g resolve.GraphReport
		if err := json.Unmarshal(e.Stdout, &g); err != nil {
			return fmt.Errorf("reading resolve -o json: %w", err)
		}
		for _, pk := range g.Packages {
			kinds = append(kinds, pk.Kind)
		}
	} else {
		l, err := lock.Read(filepath.Join(dir, "ferry.lock"))
		if err != nil {
			return fmt.Errorf("reading ferry.lock: %w", err)
		}
		for _, pk := range l.Resolved() {
			kinds = append(kinds, pk.Kind)
		}
	}
	row.Charts, row.Images = 0, 0
	for _, k := range kinds {
		switch k {
		case "helm.chart":
			row.Charts++
		case "image":
			row.Images++
		}
	}
	row.Samples = append(row.Samples, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st})
	return nil
}

// helmExtra lists the requests a sample made beyond the minimum, by
// kind: tag lists above one per chart, manifest GETs above one per chart
// and image, blob GETs above one per chart, and every other kind.
func helmExtra(st Stats, charts, images int) string {
	want := map[string]int{"tags": charts, "manifest GET": charts + images, "blob GET": charts}
	var out []string
	for _, k := range []string{"tags", "manifest GET", "blob GET"} {
		if n := st.ByKind[k] - want[k]; n != 0 {
			out = append(out, fmt.Sprintf("%s %+d", k, n))
		}
	}
	rest := Stats{ByKind: map[string]int{}}
	for k, n := range st.ByKind {
		if _, ok := want[k]; !ok {
			rest.ByKind[k] = n
		}
	}
	if s := rest.KindsString(); s != "" {
		out = append(out, s)
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// kindsDiff renders b's requests minus a's, by kind, per unit ("tags
// +1.00/chart"), leaving out kinds with no difference.
func kindsDiff(a, b Stats, units int, unit string) string {
	keys := map[string]bool{}
	for k := range a.ByKind {
		keys[k] = true
	}
	for k := range b.ByKind {
		keys[k] = true
	}
	diff := Stats{ByKind: map[string]int{}}
	for k := range keys {
		if d := b.ByKind[k] - a.ByKind[k]; d != 0 {
			diff.ByKind[k] = d
		}
	}
	var out []string
	for _, kv := range strings.Split(diff.KindsString(), ", ") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		var n int
		fmt.Sscan(v, &n)
		out = append(out, fmt.Sprintf("%s %+.2f/%s", k, float64(n)/float64(max(1, units)), unit))
	}
	return strings.Join(out, ", ")
}

// findHelm returns the W5 row of variant, tool and mode, or nil.
func findHelm(rows []*HelmRow, variant, tool, mode string) *HelmRow {
	for _, r := range rows {
		if r.Variant == variant && r.Tool == tool && r.Mode == mode {
			return r
		}
	}
	return nil
}

// helmExtraOrMin says "the minimum" when a sample made no request beyond
// it, else what it made beyond.
func helmExtraOrMin(st Stats, charts, images int) string {
	if x := helmExtra(st, charts, images); x != "none" {
		return "beyond the minimum: " + x
	}
	return "exactly the minimum"
}

// helmLockWhy explains the requests ferry lock makes beyond ferry
// resolve's, measured above. They are the lock recording each package's
// cosign artifacts and referrers (PRODUCT.md: the lock carries the
// signatures it found), not the chart reader.
const helmLockWhy = "Where the lock's extra requests come from: after resolving, `ferry lock` records each package's signatures, attestations, SBOMs and referrers (cmd/ferry/lock.go → `Env.CheckTrust`, trust.go → `trust.Policy.Apply`, trust/check.go `checkPackage` → `Find` → `relocate.Attached`, relocate/relocate.go). For every package it (1) reads the manifest again by digest to walk its graph (`content.Successors`, relocate/relocate.go `Attached`), though the resolver read it by tag; (2) lists the repository's tags again to find cosign's `sha256-HEX.sig|.att|.sbom` tags (`copier.originTags`, relocate/relocate.go) — the resolver's tag list is cached in the resolver only, hence one repeated read per chart, and one tag list per image, which the resolver never needed; (3) asks the referrers API (`copier.referrersOf`), which the loopback registry (CNCF distribution) answers 404, so oras-go falls back to the referrers tag schema and GETs the manifest `sha256-HEX` (oras-go registry/remote/repository.go `Referrers` → `referrersByTagSchema`), on a fresh `remote.Repository` per package, so the API is asked for every package. The Helm reader itself (helm/reader.go `Read`) reads only the chart layer: no config blob, no HEAD."

func (res *Results) writeHelm(b *strings.Builder) {
	cfg := res.Config
	spec := cfg.Helm
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	bound := time.Duration(spec.Depth*HelmPerChart) * cfg.W2Delay
	versions := W2Versions(spec.Tags)
	p("## W5 Helm chart closure\n\n")
	p("%d OCI charts built with Helm's library (`chartutil.Save`) and pushed with Helm's own registry client (`helm push`), in %d levels %v from one root, each at %d versions (%s … %s and %s). Every chart depends on some of the next level's charts (as W2: each j ≡ i mod n plus one shared pick, so there are diamonds) with the range `%s` on an `oci://` repository, so each dependency needs its tag list. ",
		spec.Charts, spec.Depth, res.HelmLevels, spec.Tags, versions[0], versions[len(versions)-2], versions[len(versions)-1], W2Range)
	p("In the **charts only** closure each chart's one template is a ConfigMap naming no image, so the requests are the charts' alone")
	if spec.Images {
		p("; the **one image per chart** closure is the same graph (other repositories) where each chart's template is a Deployment of an image of its own (a one-layer single-platform image), to show what the images add")
	}
	p(". Generated in %s. ferry.yaml is `charts: [{ref: oci://PROXY/ROOT, version: \"%s\"}]`; `ferry lock` reads the registry through a proxy on 127.0.0.1 that sleeps the given latency before forwarding each request, and counts them.\n\n", secs(res.HelmGen), W2Range)
	p("An OCI chart chosen by a range needs at least %d requests: its tag list, its manifest and its chart layer (the root too: ferry.yaml gives it a range), **%d per chart**; an image named by tag needs its manifest (one request; the lock records its digest). The latency bound is depth × round trips per level × latency = %d × %d × %s = **%s** (one round trip more, %s, with images: the last level's image manifests follow its chart layers); with at most j requests in flight the throughput floor is requests × latency / j.\n\n",
		HelmPerChart, HelmPerChart, spec.Depth, HelmPerChart, cfg.W2Delay, secs(bound), secs(bound+cfg.W2Delay))
	p("| closure | command | time | charts | images | requests | per chart | minimum | beyond the minimum, by kind | repeated reads | vs bound | throughput floor | vs floor |\n|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, r := range res.Helm {
		if r.Failed != "" && len(r.Samples) == 0 {
			p("| %s | %s %s | failed: %s | | | | | | | | | | |\n", r.Variant, r.Tool, r.Mode, oneLine(r.Failed))
			continue
		}
		m, _ := Median(r.Samples)
		vsBound, floorS, vsFloor := "—", "—", "—"
		if r.Delay > 0 {
			floor := time.Duration(m.Stats.Requests) * r.Delay / time.Duration(max(1, r.Jobs))
			b := bound
			if r.Images > 0 {
				b += r.Delay
			}
			vsBound, floorS, vsFloor = ratio(m.Wall.Seconds(), b.Seconds()), secs(floor), ratio(m.Wall.Seconds(), floor.Seconds())
		}
		p("| %s | %s %s | %s | %d | %d | %d | %.2f | %d | %s | %d | %s | %s | %s |\n", r.Variant, r.Tool, r.Mode, secs(m.Wall), r.Charts, r.Images, m.Stats.Requests,
			float64(m.Stats.Requests)/float64(max(1, r.Charts)), HelmPerChart*r.Charts+r.Images, helmExtra(m.Stats, r.Charts, r.Images), m.Stats.Repeats, vsBound, floorS, vsFloor)
	}
	p("\n**per chart** is all requests over the charts (images included); **minimum** is 3 per chart and 1 per image. The rows without latency show the commands' own time (process start, Helm's loader and template engine for every chart, the lock's writing) on this machine.\n")
	p("\nAll requests by kind (median run):\n\n| closure | command | by kind |\n|---|---|---|\n")
	for _, r := range res.Helm {
		if m, ok := Median(r.Samples); ok {
			p("| %s | %s %s | %s |\n", r.Variant, r.Tool, r.Mode, m.Stats.KindsString())
		}
	}
	p("\n")
	// What the lock adds to the resolver's requests, and why.
	helmLockNote := false
	for _, r := range res.Helm {
		if r.Tool != "ferry resolve" || len(r.Samples) == 0 {
			continue
		}
		l := findHelm(res.Helm, r.Variant, "ferry lock", r.Mode)
		if l == nil || len(l.Samples) == 0 {
			continue
		}
		rm, _ := Median(r.Samples)
		lm, _ := Median(l.Samples)
		if lm.Stats.Requests <= rm.Stats.Requests {
			continue
		}
		units, unit := r.Charts, "chart"
		if r.Images > 0 {
			units, unit = r.Charts+r.Images, "package (chart or image)"
		}
		p("**%s, %s:** `ferry resolve` made %d requests (%s), `ferry lock` %d: %s.\n\n", r.Variant, r.Mode, rm.Stats.Requests, helmExtraOrMin(rm.Stats, r.Charts, r.Images), lm.Stats.Requests, kindsDiff(rm.Stats, lm.Stats, units, unit))
		helmLockNote = true
	}
	if helmLockNote {
		p("%s\n\n", helmLockWhy)
	}
	// The images' cost: the image closure against the charts-only one in
	// the same setting.
	var lines []string
	for _, r := range res.Helm {
		if r.Variant == "charts only" || len(r.Samples) == 0 || r.Images == 0 {
			continue
		}
		for _, base := range res.Helm {
			if base.Variant == "charts only" && base.Tool == r.Tool && base.Mode == r.Mode && len(base.Samples) > 0 {
				m, _ := Median(r.Samples)
				bm, _ := Median(base.Samples)
				lines = append(lines, fmt.Sprintf("- %s %s: %d requests against %d for the charts alone, %.2f more per image (%s → %s)", r.Tool, r.Mode,
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
