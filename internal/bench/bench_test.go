package bench

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/resolve"
)

func TestLayerIsDeterministicTarGzip(t *testing.T) {
	a, err := LayerBytes("seed", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LayerBytes("seed", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatal("the same seed and size gave different layers")
	}
	c, err := LayerBytes("other", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds gave the same layer")
	}
	zr, err := gzip.NewReader(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Name != "data/blob" || hdr.Size != 100_000 {
		t.Fatalf("entry %q of %d bytes, want data/blob of 100000", hdr.Name, hdr.Size)
	}
	data, err := io.ReadAll(tr)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(Random("seed", 100_000))
	if !bytes.Equal(data, want) {
		t.Fatal("the layer's file is not Random(seed, size)")
	}
	d, err := LayerDescriptor("seed", 100_000)
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != digest.FromBytes(a) || d.Size != int64(len(a)) {
		t.Fatalf("LayerDescriptor = %s %d, want %s %d", d.Digest, d.Size, digest.FromBytes(a), len(a))
	}
}

func TestLevels(t *testing.T) {
	for _, tc := range []struct{ packages, depth int }{{1000, 8}, {100, 8}, {8, 8}, {250, 8}, {5000, 8}} {
		lv := Levels(tc.packages, tc.depth)
		if len(lv) != tc.depth {
			t.Fatalf("Levels(%d, %d) = %v: want %d levels", tc.packages, tc.depth, lv, tc.depth)
		}
		sum := 0
		for i, n := range lv {
			if n < 1 || (i > 0 && n < lv[i-1]) {
				t.Fatalf("Levels(%d, %d) = %v: levels must be non-empty and non-decreasing", tc.packages, tc.depth, lv)
			}
			sum += n
		}
		if sum != tc.packages || lv[0] != 1 {
			t.Fatalf("Levels(%d, %d) = %v: want one root and %d in all", tc.packages, tc.depth, lv, tc.packages)
		}
		// Every package below the root has a parent.
		for l := 0; l+1 < len(lv); l++ {
			covered := map[int]bool{}
			for i := range lv[l] {
				for _, j := range W2Children(i, lv[l], lv[l+1]) {
					if j < 0 || j >= lv[l+1] {
						t.Fatalf("child %d out of range %d", j, lv[l+1])
					}
					covered[j] = true
				}
			}
			if len(covered) != lv[l+1] {
				t.Fatalf("level %d: %d of %d packages have a parent", l+1, len(covered), lv[l+1])
			}
		}
	}
	if Levels(3, 8) != nil {
		t.Fatal("3 packages cannot fill 8 levels")
	}
}

func TestW2Versions(t *testing.T) {
	v := W2Versions(30)
	if len(v) != 30 || v[0] != "1.0.0" || v[28] != "1.28.0" || v[29] != "2.0.0" {
		t.Fatalf("W2Versions(30) = %v", v)
	}
}

func TestKind(t *testing.T) {
	for _, tc := range []struct{ method, path, want string }{
		{"GET", "/v2/", "ping"},
		{"GET", "/v2/w2/l1/p0000/tags/list", "tags"},
		{"GET", "/v2/a/b/manifests/v1", "manifest GET"},
		{"HEAD", "/v2/a/manifests/sha256:abc", "manifest HEAD"},
		{"PUT", "/v2/a/manifests/v1", "manifest PUT"},
		{"GET", "/v2/a/blobs/sha256:abc", "blob GET"},
		{"POST", "/v2/a/blobs/uploads/", "upload POST"},
		{"PATCH", "/v2/a/blobs/uploads/123", "upload PATCH"},
		{"GET", "/v2/a/referrers/sha256:abc", "referrers"},
		{"GET", "/metrics", "other"},
	} {
		if got := Kind(tc.method, tc.path); got != tc.want {
			t.Errorf("Kind(%s %s) = %q, want %q", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	if _, ok := Median(nil); ok {
		t.Fatal("Median(nil) reported a sample")
	}
	m, _ := Median([]Sample{{Wall: 3}, {Wall: 1}, {Wall: 2}})
	if m.Wall != 2 {
		t.Fatalf("Median = %v, want 2", m.Wall)
	}
}

func TestRotated(t *testing.T) {
	tools := []string{"a", "b", "c", "d", "e", "f"}
	for _, tc := range []struct {
		run, runs int
		want      string
	}{
		{1, 1, "abcdef"},
		{2, 1, "abcdef"},
		{1, 3, "abcdef"},
		{2, 3, "cdefab"},
		{3, 3, "efabcd"},
		{4, 3, "abcdef"}, // a fourth round starts over
		{1, 2, "abcdef"},
		{2, 2, "defabc"},
		{2, 4, "bcdefa"}, // 6/4: starts 1 in
		{3, 4, "defabc"},
		{4, 4, "efabcd"}, // 18/4: starts 4 in
		{5, 0, "abcdef"},
	} {
		if got := strings.Join(Rotated(tools, tc.run, tc.runs), ""); got != tc.want {
			t.Errorf("Rotated(run %d of %d) = %s, want %s", tc.run, tc.runs, got, tc.want)
		}
	}
	if got := Rotated([]string(nil), 2, 3); len(got) != 0 {
		t.Errorf("Rotated(nil) = %v", got)
	}
	// Over the default 3 runs of W1's 13 rows, each row runs at places a
	// third of a round apart (4 or 5 places, cyclically).
	rows := make([]int, 13)
	for i := range rows {
		rows[i] = i
	}
	places := map[int][]int{}
	for run := 1; run <= 3; run++ {
		for pos, r := range Rotated(rows, run, 3) {
			places[r] = append(places[r], pos)
		}
	}
	for r, ps := range places {
		slices.Sort(ps)
		for i, p := range ps {
			gap := (ps[(i+1)%len(ps)] - p + len(rows)) % len(rows)
			if gap != 4 && gap != 5 {
				t.Errorf("row %d ran at places %v of a round, want them a third apart", r, ps)
				break
			}
		}
	}
}

func TestCorruptBlobs(t *testing.T) {
	root := t.TempDir()
	put := func(name string, content []byte) {
		t.Helper()
		d := digest.FromBytes([]byte(name))
		dir := filepath.Join(root, "docker", "registry", "v2", "blobs", "sha256", d.Encoded()[:2], d.Encoded())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "data"), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		blobs map[string][]byte
		want  int
	}{
		{"empty storage", nil, 0},
		{"intact", map[string][]byte{"a": []byte("a"), "b": []byte("b")}, 0},
		{"one cut short", map[string][]byte{"a": []byte("a"), "bb": []byte("b")}, 1},
		{"two wrong", map[string][]byte{"a": []byte("x"), "b": []byte("y"), "c": []byte("c")}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root = t.TempDir()
			for name, content := range tc.blobs {
				put(name, content)
			}
			got, err := CorruptBlobs(root)
			if err != nil || got != tc.want {
				t.Fatalf("CorruptBlobs = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// TestW6Selection: W6Selected is what ferry's tag selection keeps of
// W6Tags (W6Range and W6Match), and skopeo's one expression keeps the
// same tags.
func TestW6Selection(t *testing.T) {
	sel := resolve.TagSelection{Ranges: []string{W6Range}, Match: []string{W6Match}}
	got, err := sel.Select(W6Tags)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if !slices.Equal(got, W6Selected) {
		t.Errorf("ferry selects %v, W6Selected is %v", got, W6Selected)
	}
	re := regexp.MustCompile(W6SkopeoRegex)
	var sk []string
	for _, tag := range W6Tags {
		if re.MatchString(tag) {
			sk = append(sk, tag)
		}
	}
	sort.Strings(sk)
	if !slices.Equal(sk, W6Selected) {
		t.Errorf("skopeo's expression selects %v, W6Selected is %v", sk, W6Selected)
	}
}

// TestMarkdownW6AndLean renders W6 and the lean rows from made-up
// samples: ferry's ratio to the fastest peer and each target's verdict.
func TestMarkdownW6AndLean(t *testing.T) {
	s := func(wall time.Duration, rss int64, up int64) Sample {
		return Sample{Wall: wall, MaxRSS: rss, Stats: Stats{BytesUp: up, Requests: 10}}
	}
	res := &Results{Config: Config{Runs: 1, Parallel: 8, W6: W6Spec{Repos: 20}, W3Size: 128 * MiB}}
	res.W6 = []*Row{
		{Tool: "ferry mirror", Mode: "-j 8", DigestsOK: true, Samples: []Sample{s(2*time.Second, 50*MiB, 10*MiB)}, Rerun: []Sample{s(time.Second, 50*MiB, 0)}},
		{Tool: "skopeo sync", Mode: "sequential", DigestsOK: true, Samples: []Sample{s(40*time.Second, 50*MiB, 10*MiB)}, Rerun: []Sample{s(time.Second, 50*MiB, 0)}},
		{Tool: "regsync once", Mode: "parallel: 8", DigestsOK: true, Samples: []Sample{s(5*time.Second, 50*MiB, 10*MiB)}, Rerun: []Sample{s(time.Second, 50*MiB, 0)}},
	}
	res.Lean = &LeanResults{
		FerryVersion: []Sample{s(60*time.Millisecond, 40*MiB, 0)}, CraneVersion: []Sample{s(10*time.Millisecond, 11*MiB, 0)},
		FerryBinary: 80 * MiB, CraneBinary: 17 * MiB, FerryPackages: 900, CranePackages: 28,
		FerryBuild: &Sample{CPU: 400 * time.Second}, CraneBuild: &Sample{CPU: 70 * time.Second},
	}
	md := res.Markdown()
	for _, want := range []string{
		"ferry took 0.40× the time of the fastest peer, regsync once parallel: 8 (target ≤ 0.5×: met)",
		"| `version` wall time | 0.060 s | 0.010 s | 6.00× | ≤ 2× | **not met** |",
		"| cold build CPU (user+sys; wall) | 400 s (0 s) | 70 s (0 s) | 5.71× | ≤ 2.5× | **not met** |",
		"| third-party packages linked | 900 | 28 | 32× | | |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
}
