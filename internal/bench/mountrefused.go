package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/ferryhq/ferry/client"
)

// refuseMount returns r without the mount= and from= of a cross-repository
// mount, so the registry answers it by opening an upload session (202): a
// refusal, as the distribution spec lets a registry that cannot mount
// answer. r itself is not changed.
func refuseMount(r *http.Request) *http.Request {
	r2 := r.Clone(r.Context())
	q := r2.URL.Query()
	q.Del("mount")
	q.Del("from")
	r2.URL.RawQuery = q.Encode()
	r2.RequestURI = r2.URL.RequestURI()
	return r2
}

// session follows upload sessions: a 202 to an upload POST opens one at
// its Location, a 201 to the session's PUT or a 204 to its DELETE closes
// it. p.mu is held.
func (p *Proxy) session(r *http.Request, kind string, w *countingWriter) {
	switch {
	case kind == "upload POST" && w.status == http.StatusAccepted:
		p.st.Sessions++
		if loc, err := url.Parse(w.Header().Get("Location")); err == nil && loc.Path != "" {
			p.open[loc.Path] = true
		}
	case (kind == "upload PUT" && w.status == http.StatusCreated) || (kind == "upload DELETE" && w.status == http.StatusNoContent):
		delete(p.open, r.URL.Path)
	}
}

// MountsSpec sizes the mounts-refused benchmark (issue 14): Repos
// repositories of the scale benchmark's shape copied onto a registry that
// refuses cross-repository mounts.
type MountsSpec struct {
	Repos int
}

// MountsResults is what the mounts-refused benchmark measured.
type MountsResults struct {
	Spec MountsSpec `json:"spec"`
	// Shape describes the repositories (the scale benchmark's source).
	Shape W1Spec `json:"shape"`
	Rows  []*Row `json:"rows"`
}

// runMounts copies the first spec.Repos repositories of the scale source
// onto a fresh registry whose proxy refuses every cross-repository mount:
// ferry mirror -j P against each peer's P-way xargs.
func (res *Results) runMounts(ctx context.Context, c *client.Client, src *scaleSource) error {
	cfg := res.Config
	spec := cfg.Mounts
	refs, roots, err := src.first(spec.Repos)
	if err != nil {
		return err
	}
	out := &MountsResults{Spec: spec, Shape: src.spec}
	res.Mounts = out
	type cell struct {
		row *Row
		run func(t *target) Exec
	}
	var cells []cell
	ferryRow := &Row{Tool: "ferry mirror", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Jobs: cfg.Parallel, Version: res.Ferry, DigestsOK: true,
		Command: fmt.Sprintf("ferry mirror SRC/w1/app-00:v1 … SRC/w1/app-%02d:v1 --to DST/mirror -j %d -o json -q", spec.Repos-1, cfg.Parallel)}
	out.Rows = append(out.Rows, ferryRow)
	cells = append(cells, cell{row: ferryRow, run: func(t *target) Exec {
		dir, _ := os.MkdirTemp(t.dir, "ferry-")
		args := append([]string{cfg.Ferry, "mirror"}, roots...)
		args = append(args, "--to", t.proxy.Addr+"/mirror", "-j", fmt.Sprint(cfg.Parallel), "-o", "json", "-q")
		return Run(ctx, dir, nil, nil, args...)
	}})
	for _, p := range res.Peers {
		// crane is the yardstick; the other peers would add
		// minutes to every run.
		if p.Bin != "crane" {
			continue
		}
		row := &Row{Tool: p.Name, Mode: fmt.Sprintf("%d-way parallel", cfg.Parallel), Version: p.Version, Unavailable: p.Unavailable, DigestsOK: true,
			Command: fmt.Sprintf("xargs -P %d -L 1 %s %s < pairs  # %d lines: %s", cfg.Parallel, p.Bin, strings.Join(p.Args, " "), spec.Repos, p.Line("SRC/w1/app-NN:v1", "DST/mirror/w1/app-NN:v1"))}
		out.Rows = append(out.Rows, row)
		if p.Unavailable != "" {
			continue
		}
		cells = append(cells, cell{row: row, run: func(t *target) Exec {
			return runPeer(ctx, p, cfg.Parallel, t, src.proxy.Addr, refs, roots)
		}})
	}
	for run := 1; run <= cfg.Runs; run++ {
		for _, cl := range Rotated(cells, run, cfg.Runs) {
			row := cl.row
			if row.Failed != "" {
				continue
			}
			cfg.logf("mounts refused run %d/%d: %s %s, %d repositories", run, cfg.Runs, row.Tool, row.Mode, spec.Repos)
			t, err := newTarget(ctx, cfg, "mounts")
			if err != nil {
				return err
			}
			t.proxy.RefuseMounts = true
			t.proxy.Take()
			e, st, _, ok := t.measureCopy(ctx, &cfg, c, row, src.proxy, refs, true, func() Exec { return cl.run(t) })
			if !ok {
				continue
			}
			cfg.logf("  %.2fs, %d requests, %d mount tries (%d refused), %d upload sessions, %d left open", e.Wall.Seconds(), st.Requests, st.MountTries, st.MountMisses, st.Sessions, st.SessionsOpen)
			t.close()
		}
	}
	return nil
}

// runPeer copies refs (read at roots) into t's mirror with p, par copies
// at once through xargs.
func runPeer(ctx context.Context, p *Peer, par int, t *target, srcProxy string, refs []Ref, roots []string) Exec {
	var lines strings.Builder
	for i, r := range refs {
		fmt.Fprintln(&lines, p.Line(roots[i], t.proxy.Addr+"/mirror/"+r.Repo+":"+r.Tag))
	}
	if p.Prepare != nil {
		if err := p.Prepare(ctx, srcProxy, t.proxy.Addr); err != nil {
			return Exec{Err: err, Stderr: err.Error()}
		}
	}
	args := append([]string{"xargs", "-P", fmt.Sprint(par), "-L", "1", p.Path}, p.Args...)
	return Run(ctx, t.dir, p.Env, []byte(lines.String()), args...)
}

func (res *Results) writeMounts(b *strings.Builder) {
	cfg := res.Config
	m := res.Mounts
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("## Mounts refused\n\n")
	p("Issue 14: a registry that refuses cross-repository mounts (as some do across projects). The first %d repositories of the scale benchmark's source (%s) are copied into a fresh registry whose recording proxy refuses every mount the way the distribution spec lets a registry refuse: it forwards `POST /v2/NAME/blobs/uploads/?mount=DIGEST&from=REPO` without `mount` and `from`, so the registry opens an upload session (202) instead of mounting. ",
		m.Spec.Repos, m.Shape.describe())
	p("**mount tries** are upload POSTs naming a source repository (`mount=` and `from=`): crane (go-containerregistry) starts every blob upload with one, naming the repository it reads from, so each of its uploads is a refused mount here whose session it then uses. **sessions** are the upload sessions the registry opened (202 to a POST); **left open** are those neither completed (201 to the PUT) nor cancelled when the command exited.\n\n")
	ref := find(m.Rows, "ferry mirror", fmt.Sprintf("-j %d", cfg.Parallel))
	crane := find(m.Rows, "crane copy", fmt.Sprintf("%d-way parallel", cfg.Parallel))
	var craneMed Sample
	if crane != nil {
		craneMed, _ = Median(crane.Samples)
	}
	p("| tool | mode | time | vs crane | CPU | vs crane | requests to mirror | vs crane | mount tries | sessions | left open | sent to mirror | peak RSS | digests |\n|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range m.Rows {
		if s := r.status(); s != "" {
			p("| %s | %s | %s | | | | | | | | | | | |\n", r.Tool, r.Mode, s)
			continue
		}
		med, _ := Median(r.Samples)
		ok := r.digestsCell()
		p("| %s | %s | %s | %s | %s | %s | %d | %s | %d | %d | %d | %s | %s | %s |\n", r.Tool, r.Mode, secs(med.Wall), ratio(med.Wall.Seconds(), craneMed.Wall.Seconds()),
			secs(med.CPU), ratio(med.CPU.Seconds(), craneMed.CPU.Seconds()),
			med.Stats.Requests, ratio(float64(med.Stats.Requests), float64(craneMed.Stats.Requests)), med.Stats.MountTries, med.Stats.Sessions, med.Stats.SessionsOpen,
			Bytes(med.Stats.BytesUp), Bytes(med.MaxRSS), ok)
	}
	if ref != nil && len(ref.Samples) > 0 && crane != nil && len(crane.Samples) > 0 {
		fm, _ := Median(ref.Samples)
		p("\nferry -j %d against crane %d-way: %s the time, %s the requests; mount tries: ferry %d, crane %d; upload sessions left open: ferry %d, crane %d. Issue 14's bound: no more requests and no more time than crane, at most one mount try per blob, no session left open.",
			cfg.Parallel, cfg.Parallel, ratio(fm.Wall.Seconds(), craneMed.Wall.Seconds()), ratio(float64(fm.Stats.Requests), float64(craneMed.Stats.Requests)),
			fm.Stats.MountTries, craneMed.Stats.MountTries, fm.Stats.SessionsOpen, craneMed.Stats.SessionsOpen)
	}
	p("\n\n```sh\n")
	for _, r := range m.Rows {
		p("%s\n", r.Command)
	}
	p("```\n\n")
}
