package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"

	"github.com/ferryhq/ferry/client"
)

// W6Spec sizes workload W6, image sync (issue 27 point 6): Repos
// repositories, each with every tag of W6Tags, a plain image per tag
// whose layers are a Base layer shared by every repository, a PerRepo
// layer shared by the repository's tags and a PerTag layer of its own.
type W6Spec struct {
	Repos                 int
	Base, PerRepo, PerTag int64
}

// W6Tags are the 12 tags of every W6 repository: releases inside and
// outside W6Range, a prerelease, a v-prefixed release inside the range
// that W6Match leaves out, and a moving tag.
var W6Tags = []string{"1.0.0", "1.1.0", "1.2.0", "1.2.1", "1.3.0", "2.0.0-rc.1", "2.0.0", "2.0.1", "v2.1.0", "2.2.0", "3.0.0", "latest"}

// W6Range and W6Match are W6's selection: the semver range and the
// regular expression (releases without a v prefix), as ferry's images:
// entries and regsync take them.
const (
	W6Range = ">=1.2.0 <3.0.0"
	W6Match = `^[0-9]+\.[0-9]+\.[0-9]+$`
)

// W6SkopeoRegex is the same selection as one regular expression, for
// skopeo sync's images-by-tag-regex: Debian's skopeo 1.9 has no
// images-by-semver (added in skopeo 1.14), so the range is spelled out.
const W6SkopeoRegex = `^(1\.([2-9]|[1-9][0-9]+)|2\.[0-9]+)\.[0-9]+$`

// W6Selected are the tags the selection keeps in every repository
// (bench_test.go checks it against ferry's TagSelection and the regular
// expressions).
var W6Selected = []string{"1.2.0", "1.2.1", "1.3.0", "2.0.0", "2.0.1", "2.2.0"}

// W6Name is repository i's path.
func W6Name(i int) string { return fmt.Sprintf("w6/img-%02d", i) }

// PushW6 generates W6 in the registry host and returns the selected
// images (W6Selected of every repository) with their digests.
func PushW6(ctx context.Context, c *client.Client, host string, spec W6Spec) ([]Ref, error) {
	base, err := LayerBytes("w6/base", spec.Base)
	if err != nil {
		return nil, err
	}
	baseDesc := blobDesc(ocispec.MediaTypeImageLayerGzip, base)
	refs := make([][]Ref, spec.Repos)
	push := func(i int) error {
		name := W6Name(i)
		repo, err := c.Repository(host + "/" + name)
		if err != nil {
			return err
		}
		if i == 0 {
			err = pushBytes(ctx, repo, baseDesc, base)
		} else {
			err = repo.Mount(ctx, baseDesc, W6Name(0), func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(base)), nil
			})
		}
		if err != nil {
			return fmt.Errorf("%s: base layer: %w", name, err)
		}
		own, err := LayerBytes(name+"/repo", spec.PerRepo)
		if err != nil {
			return err
		}
		ownDesc := blobDesc(ocispec.MediaTypeImageLayerGzip, own)
		if err := pushBytes(ctx, repo, ownDesc, own); err != nil {
			return fmt.Errorf("%s: layer: %w", name, err)
		}
		for _, tag := range W6Tags {
			data, err := LayerBytes(name+"/"+tag, spec.PerTag)
			if err != nil {
				return err
			}
			d := blobDesc(ocispec.MediaTypeImageLayerGzip, data)
			if err := pushBytes(ctx, repo, d, data); err != nil {
				return fmt.Errorf("%s:%s: layer: %w", name, tag, err)
			}
			m, err := pushImage(ctx, repo, name+":"+tag, []ocispec.Descriptor{baseDesc, ownDesc, d})
			if err != nil {
				return err
			}
			if err := repo.Tag(ctx, m, tag); err != nil {
				return fmt.Errorf("%s:%s: tag: %w", name, tag, err)
			}
			if slices.Contains(W6Selected, tag) {
				refs[i] = append(refs[i], Ref{Repo: name, Tag: tag, Digest: m.Digest})
			}
		}
		return nil
	}
	if spec.Repos == 0 {
		return nil, nil
	}
	if err := push(0); err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	ctx = gctx
	for i := 1; i < spec.Repos; i++ {
		g.Go(func() error { return push(i) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var out []Ref
	for _, r := range refs {
		out = append(out, r...)
	}
	return out, nil
}

// W6FerryYAML is ferry's ferry.yaml for W6 reading the source at src:
// one images: entry per repository with the range and the expression.
func W6FerryYAML(src string, repos int) string {
	var b strings.Builder
	b.WriteString("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\nimages:\n")
	for i := range repos {
		fmt.Fprintf(&b, "  - ref: %s/%s\n    tags: [%q]\n    match: '%s'\n", src, W6Name(i), W6Range, W6Match)
	}
	return b.String()
}

// W6SkopeoYAML is skopeo sync's --src yaml file for W6.
func W6SkopeoYAML(src string, repos int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n  tls-verify: false\n  images-by-tag-regex:\n", src)
	for i := range repos {
		fmt.Fprintf(&b, "    %s: '%s'\n", W6Name(i), W6SkopeoRegex)
	}
	return b.String()
}

// W6RegsyncYAML is regsync's configuration for W6, copying into
// DST/mirror/w6/img-NN with parallel jobs at once.
func W6RegsyncYAML(src, dst string, repos, parallel int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\ncreds:\n  - registry: %s\n    tls: disabled\n  - registry: %s\n    tls: disabled\ndefaults:\n  parallel: %d\n  skipDockerConfig: true\nsync:\n", src, dst, parallel)
	for i := range repos {
		fmt.Fprintf(&b, "  - source: %s/%s\n    target: %s/mirror/%s\n    type: repository\n    tags:\n      semverRange: [%q]\n      allow: ['%s']\n", src, W6Name(i), dst, W6Name(i), W6Range, W6Match)
	}
	return b.String()
}

// checkTags reports whether every W6 repository in the mirror at host
// holds exactly the selected tags.
func checkTags(ctx context.Context, c *client.Client, host string, repos int) error {
	for i := range repos {
		repo, err := c.Repository(host + "/mirror/" + W6Name(i))
		if err != nil {
			return err
		}
		var tags []string
		if err := repo.Tags(ctx, "", func(t []string) error { tags = append(tags, t...); return nil }); err != nil {
			return fmt.Errorf("%s: tags: %w", W6Name(i), err)
		}
		sort.Strings(tags)
		if !slices.Equal(tags, W6Selected) {
			return fmt.Errorf("%s holds tags %v in the mirror, want %v", W6Name(i), tags, W6Selected)
		}
	}
	return nil
}

// runW6 measures W6: ferry mirror from a ferry.yaml against skopeo sync
// and regsync once, each into a fresh mirror and then again onto it
// (the re-run, which should send nothing). Runs alternate as in W1.
func (res *Results) runW6(ctx context.Context, c *client.Client) error {
	cfg := res.Config
	spec := cfg.W6
	src, err := StartRegistry(ctx, cfg.Ferry, filepath.Join(cfg.Work, "w6-source"))
	if err != nil {
		return err
	}
	defer src.Close()
	sp, err := StartProxy(src.Addr, 0)
	if err != nil {
		return err
	}
	defer sp.Close()
	cfg.logf("W6: generating %d repositories × %d tags", spec.Repos, len(W6Tags))
	start := time.Now()
	refs, err := PushW6(ctx, c, src.Addr, spec)
	if err != nil {
		return fmt.Errorf("W6: generating: %w", err)
	}
	res.W6Gen = time.Since(start)
	res.W6Unique = spec.Base + int64(spec.Repos)*spec.PerRepo + int64(len(refs))*spec.PerTag

	type cell struct {
		row *Row
		// prepare writes the tool's configuration into dir for the
		// mirror at dst and returns the command, run twice.
		prepare func(dir, dst string) (env []string, argv []string, err error)
	}
	var cells []cell
	ferryRow := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry mirror --to DST/mirror -j %d -o json -q  # ferry.yaml: images: [{ref: SRC/w6/img-NN, tags: [%q], match: '%s'}, …]", cfg.Parallel, W6Range, W6Match)}
	res.W6 = append(res.W6, ferryRow)
	cells = append(cells, cell{row: ferryRow, prepare: func(dir, dst string) ([]string, []string, error) {
		if err := os.WriteFile(filepath.Join(dir, "ferry.yaml"), []byte(W6FerryYAML(sp.Addr, spec.Repos)), 0o644); err != nil {
			return nil, nil, err
		}
		return nil, []string{cfg.Ferry, "mirror", "--to", dst + "/mirror", "-j", fmt.Sprint(cfg.Parallel), "-o", "json", "-q"}, nil
	}})
	for _, name := range []string{"skopeo", "regsync"} {
		p := res.peer(name)
		if name == "regsync" {
			p = lookupTool(ctx, &Peer{Name: "regsync once", Bin: "regsync", VersionArgs: []string{"version", "--format", "{{.VCSTag}}"}}, cfg.Reasons)
		}
		row := &Row{DigestsOK: true}
		switch name {
		case "skopeo":
			row.Tool, row.Mode = "skopeo sync", "sequential (skopeo sync has no parallel copies)"
			row.Command = fmt.Sprintf("skopeo --insecure-policy sync --all --preserve-digests --src yaml --dest docker --dest-tls-verify=false sync.yaml DST/mirror/w6  # sync.yaml: images-by-tag-regex: {w6/img-NN: '%s'}", W6SkopeoRegex)
		case "regsync":
			row.Tool, row.Mode = "regsync once", fmt.Sprintf("parallel: %d", cfg.Parallel)
			row.Command = fmt.Sprintf("regsync once -c regsync.yaml  # sync: [{source: SRC/w6/img-NN, target: DST/mirror/w6/img-NN, type: repository, tags: {semverRange: [%q], allow: ['%s']}}, …]", W6Range, W6Match)
		}
		if p == nil {
			row.Unavailable = name + " not set up"
		} else {
			row.Version, row.Unavailable = p.Version, p.Unavailable
		}
		res.W6 = append(res.W6, row)
		if row.Unavailable != "" {
			continue
		}
		path := p.Path
		switch name {
		case "skopeo":
			cells = append(cells, cell{row: row, prepare: func(dir, dst string) ([]string, []string, error) {
				f := filepath.Join(dir, "sync.yaml")
				if err := os.WriteFile(f, []byte(W6SkopeoYAML(sp.Addr, spec.Repos)), 0o644); err != nil {
					return nil, nil, err
				}
				return nil, []string{path, "--insecure-policy", "sync", "--all", "--preserve-digests", "--src", "yaml", "--dest", "docker", "--dest-tls-verify=false", f, dst + "/mirror/w6"}, nil
			}})
		case "regsync":
			cells = append(cells, cell{row: row, prepare: func(dir, dst string) ([]string, []string, error) {
				f := filepath.Join(dir, "regsync.yaml")
				if err := os.WriteFile(f, []byte(W6RegsyncYAML(sp.Addr, dst, spec.Repos, cfg.Parallel)), 0o644); err != nil {
					return nil, nil, err
				}
				return []string{"HOME=" + dir}, []string{path, "once", "-c", f, "-v", "error"}, nil
			}})
		}
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, cl := range Rotated(cells, run, cfg.Runs) {
			row := cl.row
			if row.Failed != "" {
				continue
			}
			cfg.logf("W6 run %d/%d: %s", run, cfg.Runs, row.Tool)
			t, err := newTarget(ctx, cfg, "w6")
			if err != nil {
				return err
			}
			dir, _ := os.MkdirTemp(t.dir, "cwd-")
			env, argv, err := cl.prepare(dir, t.proxy.Addr)
			if err != nil {
				row.Failed = err.Error()
				t.close()
				continue
			}
			cp := func() Exec { return Run(ctx, dir, env, nil, argv...) }
			var procs ProcCPU
			first := func() Exec {
				s0, m0, d0 := src.CPU(), t.reg.CPU(), processCPU()
				e := cp()
				procs = ProcCPU{Tool: e.CPU, Source: src.CPU() - s0, Mirror: t.reg.CPU() - m0, Driver: processCPU() - d0}
				return e
			}
			e, st, sst, ok := t.measureCopy(ctx, &cfg, c, row, sp, refs, false, first)
			if !ok {
				continue
			}
			row.Samples[len(row.Samples)-1].Procs = &procs
			cfg.logf("  CPU: tool %.2fs, source %.2fs, mirror %.2fs, driver (proxies) %.2fs", procs.Tool.Seconds(), procs.Source.Seconds(), procs.Mirror.Seconds(), procs.Driver.Seconds())
			if err := checkTags(ctx, c, t.reg.Addr, spec.Repos); err != nil && row.Failed == "" {
				row.DigestsOK = false
				row.Failed = "selection differs: " + err.Error()
			}
			cfg.logf("  %.2fs, %s up, %d requests; read %s in %d requests from the source", e.Wall.Seconds(), Bytes(st.BytesUp), st.Requests, Bytes(sst.BytesDown), sst.Requests)
			e = cp()
			st, sst = t.proxy.Take(), sp.Take()
			if e.Err != nil {
				row.Failed = fmt.Sprintf("re-run: %v: %s", e.Err, e.Stderr)
			} else {
				row.Rerun = append(row.Rerun, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, Stats: st, Source: sst})
				cfg.logf("  re-run %.2fs, %s up, %d requests to the mirror, %d to the source", e.Wall.Seconds(), Bytes(st.BytesUp), st.Requests, sst.Requests)
			}
			t.close()
		}
	}
	return nil
}

// lookupTool finds p's binary on PATH and reads its version, or says
// why it is unavailable (reasons: from the setup script, by binary).
func lookupTool(ctx context.Context, p *Peer, reasons map[string]string) *Peer {
	if r := reasons[p.Bin]; r != "" {
		p.Unavailable = r
		return p
	}
	path, err := exec.LookPath(p.Bin)
	if err != nil {
		p.Unavailable = p.Bin + " not found on PATH"
		return p
	}
	p.Path = path
	out, _ := exec.CommandContext(ctx, path, p.VersionArgs...).CombinedOutput()
	p.Version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	return p
}

// peer returns the peer whose binary is bin, or nil.
func (res *Results) peer(bin string) *Peer {
	for _, p := range res.Peers {
		if p.Bin == bin {
			return p
		}
	}
	return nil
}

func (res *Results) writeW6(b *strings.Builder) {
	cfg := res.Config
	spec := cfg.W6
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## W6 image sync\n\n")
	p("%d repositories `w6/img-NN` × %d tags (%s), each tag a plain linux/amd64 image of three layers: %s shared by every repository, %s shared by the repository's tags and %s of its own. ",
		spec.Repos, len(W6Tags), strings.Join(W6Tags, ", "), Bytes(spec.Base), Bytes(spec.PerRepo), Bytes(spec.PerTag))
	p("The selection is the semver range `%s` and the regular expression `%s` (no prerelease, no v prefix): %s in every repository, %d images, %s unique. Generated in %s. ",
		W6Range, W6Match, strings.Join(W6Selected, ", "), spec.Repos*len(W6Selected), Bytes(res.W6Unique), secs(res.W6Gen))
	p("Every tool lists the tags itself and copies into a fresh registry; the driver then checks that each mirror repository holds exactly the selected tags at the source's digests, and runs the same command again onto the full mirror (**re-run**). ")
	p("Debian's skopeo 1.9 has no `images-by-semver` (skopeo 1.14 added it), so its YAML spells the range as the regular expression `%s`; regsync takes the range (`semverRange`) and the expression (`allow`, which it anchors) as ferry does.\n\n", W6SkopeoRegex)
	ref := find(res.W6, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel))
	if ref == nil {
		ref = &Row{}
	}
	refMed, _ := Median(ref.Samples)
	p("| tool | mode | time | vs ferry | requests to mirror | sent to mirror | read from source (requests) | re-run | re-run requests (mirror + source) | re-run sent | peak RSS | tags and digests |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	var best *Row
	var bestWall time.Duration
	for _, r := range res.W6 {
		if s := r.status(); s != "" {
			p("| %s | %s | %s | | | | | | | | | |\n", r.Tool, r.Mode, s)
			continue
		}
		m, _ := Median(r.Samples)
		rr, _ := Median(r.Rerun)
		if r != ref && (best == nil || m.Wall < bestWall) {
			best, bestWall = r, m.Wall
		}
		ok := "exactly the selection, same as source"
		if !r.DigestsOK {
			ok = "**differ**: " + oneLine(r.Failed)
		}
		p("| %s | %s | %s | %s | %d | %s | %s (%d) | %s | %d + %d | %s | %s | %s |\n", r.Tool, r.Mode, secs(m.Wall), ratio(m.Wall.Seconds(), refMed.Wall.Seconds()),
			m.Stats.Requests, Bytes(m.Stats.BytesUp), Bytes(m.Source.BytesDown), m.Source.Requests,
			secs(rr.Wall), rr.Stats.Requests, rr.Source.Requests, Bytes(rr.Stats.BytesUp), Bytes(m.MaxRSS), ok)
	}
	p("\n")
	if best != nil && len(ref.Samples) > 0 {
		r := refMed.Wall.Seconds() / bestWall.Seconds()
		v := "met"
		if r > 0.5 {
			v = "**not met**"
		}
		rr, _ := Median(ref.Rerun)
		p("ferry took %s the time of the fastest peer, %s %s (target ≤ 0.5×: %s); %s. ", ratio(refMed.Wall.Seconds(), bestWall.Seconds()), best.Tool, best.Mode, v, medians(cfg.Runs))
		p("ferry's re-run sent %s to the mirror (target: nothing).", Bytes(rr.Stats.BytesUp))
		p(" CPU time of a first run (user and system, median of each column; the driver's is mostly its two counting proxies): ")
		sep := ""
		for _, r := range res.W6 {
			if r.status() != "" {
				continue
			}
			p("%s%s %s", sep, r.Tool, procMedians(r.Samples))
			sep = "; "
		}
		p(".")
		p(" ferry's re-run reads the ferry.lock the first run wrote, which keeps the tags it selected (README, Images), as a user's second `ferry mirror` does; the peers select again from the tag lists.\n\n")
	}
}

// procMedians formats the medians of samples' per-process CPU times.
func procMedians(samples []Sample) string {
	var measured []Sample
	for _, s := range samples {
		if s.Procs != nil {
			measured = append(measured, s)
		}
	}
	if len(measured) == 0 {
		return "not measured"
	}
	med := func(f func(ProcCPU) time.Duration) string {
		return fmt.Sprintf("%.2f s", medianBy(measured, func(s Sample) float64 { return f(*s.Procs).Seconds() }))
	}
	return fmt.Sprintf("%s (source registry %s, mirror registry %s, driver %s)",
		med(func(p ProcCPU) time.Duration { return p.Tool }), med(func(p ProcCPU) time.Duration { return p.Source }),
		med(func(p ProcCPU) time.Duration { return p.Mirror }), med(func(p ProcCPU) time.Duration { return p.Driver }))
}
