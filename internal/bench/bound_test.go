package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/bench/bound"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestBoundCopy: the bound (package bound) copies W1 into an empty mirror correctly, with
// exactly the requests issue 14's minimal client makes and no others: per
// repository a manifest GET for the index and one for the image, a blob
// GET and a POST and PUT per unique blob, one mount of the shared base
// layer (uploaded once), and two manifest PUTs.
func TestBoundCopy(t *testing.T) {
	ctx := context.Background()
	src, dst := registrytest.New(t), registrytest.New(t)
	c := registrytest.Client(t)
	spec := W1Spec{Repos: 4, Base: 64 << 10, Unique1: 8 << 10, Unique2: 16 << 10}
	refs, err := PushW1(ctx, c, src.Host, spec)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := StartProxy(src.Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	dp, err := StartProxy(dst.Host, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer dp.Close()
	args := make([]string, len(refs))
	for i, r := range refs {
		args[i] = r.Repo + ":" + r.Tag
	}
	if err := bound.Copy(ctx, sp.Addr, dp.Addr+"/mirror", args); err != nil {
		t.Fatal(err)
	}
	if err := checkDigests(ctx, c, dst.Host, "mirror/", refs); err != nil {
		t.Fatal(err)
	}
	n := spec.Repos
	// Each repository: config and two unique layers, plus the base once.
	uploads := 3*n + 1
	for _, tc := range []struct {
		side string
		st   Stats
		want map[string]int
	}{
		{"mirror", dp.Take(), map[string]int{"upload POST": uploads + n - 1, "upload PUT": uploads, "manifest PUT": 2 * n}},
		{"source", sp.Take(), map[string]int{"manifest GET": 2 * n, "blob GET": uploads}},
	} {
		if len(tc.st.ByKind) != len(tc.want) {
			t.Errorf("%s: requests %s, want only %v", tc.side, tc.st.KindsString(), tc.want)
		}
		for k, w := range tc.want {
			if got := tc.st.ByKind[k]; got != w {
				t.Errorf("%s: %d %s requests, want %d (%s)", tc.side, got, k, w, tc.st.KindsString())
			}
		}
		if tc.st.Repeats != 0 || tc.st.Errors != 0 {
			t.Errorf("%s: %d repeated reads, %d errors", tc.side, tc.st.Repeats, tc.st.Errors)
		}
		if tc.side == "mirror" && (tc.st.Mounts != n-1 || tc.st.MountMisses != 0 || tc.st.BlobUploads != uploads) {
			t.Errorf("mirror: %d mounts, %d refused, %d uploads; want %d, 0, %d", tc.st.Mounts, tc.st.MountMisses, tc.st.BlobUploads, n-1, uploads)
		}
	}
}

// TestW1Targets: the W1 and W4 target lines divide medians of ferry -j N
// by the bound's and the fastest peer's, and count requests in all.
func TestW1Targets(t *testing.T) {
	s := func(wall time.Duration, mirror, source int, kinds map[string]int) Sample {
		st := Stats{Requests: mirror, ByKind: kinds}
		if kinds != nil {
			st.Mounts = 1
		}
		return Sample{Wall: wall, Stats: st, Source: Stats{Requests: source}}
	}
	sec := time.Second
	res := &Results{Config: Config{Runs: 3, Parallel: 8}, Peers: []*Peer{{Name: "crane copy"}, {Name: "oras copy"}}}
	ferry := &Row{Tool: "ferry mirror", Mode: "-j 8", DigestsOK: true, Samples: []Sample{
		s(3*sec, 400, 200, map[string]int{"upload POST": 3, "upload PUT": 2}), s(2*sec, 400, 200, nil), s(4*sec, 400, 200, nil)},
		Rerun: []Sample{{Wall: sec / 4, Stats: Stats{Requests: 160}}}}
	bound := &Row{Tool: BoundTool, Mode: "every repository at once", DigestsOK: true, Samples: []Sample{s(2500*time.Millisecond, 361, 201, nil), s(2*sec, 361, 201, nil), s(3100*time.Millisecond, 361, 201, nil)}}
	crane := &Row{Tool: "crane copy", Mode: "8-way parallel", DigestsOK: true, Samples: []Sample{s(9*sec, 840, 280, nil)}, Rerun: []Sample{{Wall: sec}}}
	oras := &Row{Tool: "oras copy", Mode: "8-way parallel", DigestsOK: true, Samples: []Sample{s(7*sec, 720, 240, nil), s(8*sec, 720, 240, nil), s(6*sec, 720, 240, nil)}, Rerun: []Sample{{Wall: 2 * sec}}}
	res.W1 = []*Row{ferry, bound, crane, oras}
	var b strings.Builder
	res.writeW1Targets(&b, ferry)
	res.writeW4Target(&b, ferry)
	out := b.String()
	for _, want := range []string{
		"÷ the bound: **1.20×** (3.00 s ÷ 2.50 s); target ≤ 1.10: **not met**",
		"÷ the best peer (oras copy 8-way parallel, 7.00 s): **0.43×**; target ≤ 0.45: met",
		"- the runs behind these medians took: ferry mirror -j 8 2.00 s to 4.00 s; bound (minimal client) every repository at once 2.00 s to 3.10 s; oras copy 8-way parallel 6.00 s to 8.00 s\n",
		"ferry mirror -j 8: **600** (400 to the mirror, 200 to the source); target ≤ 700: met",
		"| ferry mirror | -j 8 | mirror | 2 | 1 | 2 | 400 | **600** |",
		"| bound (minimal client) | every repository at once | mirror | | | | 361 | **562** |",
		"sent nothing (0 B, 0 writes, 160 requests): yes; ÷ the best peer's re-run (crane copy 8-way parallel, 1.00 s): **0.25×**, target ≤ 0.5: met",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
