package progress

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestChoose(t *testing.T) {
	for _, tc := range []struct {
		name                string
		tty, quiet, machine bool
		env                 map[string]string
		want                Mode
	}{
		{name: "terminal", tty: true, env: map[string]string{"TERM": "xterm"}, want: Bars},
		{name: "terminal without TERM", tty: true, want: Bars},
		{name: "pipe", env: map[string]string{"TERM": "xterm"}, want: Plain},
		{name: "quiet on a terminal", tty: true, quiet: true, env: map[string]string{"TERM": "xterm"}, want: Silent},
		{name: "quiet on a pipe", quiet: true, want: Silent},
		{name: "json on a terminal", tty: true, machine: true, env: map[string]string{"TERM": "xterm"}, want: Plain},
		{name: "dumb terminal", tty: true, env: map[string]string{"TERM": "dumb"}, want: Plain},
		{name: "NO_COLOR keeps progress (no colour is drawn anyway)", tty: true, env: map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, want: Bars},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Choose(tc.tty, tc.quiet, tc.machine, func(k string) string { return tc.env[k] })
			if got != tc.want {
				t.Errorf("Choose = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mirrored a -> b", "mirrored a -> b"},
		{"tab\tkept", "tab\tkept"},
		{"esc \x1b[2J clear", `esc \x1b[2J clear`},
		{"cr\rover", `cr\rover`},
		{"two\nlines", `two\nlines`},
		{"bell\a nul\x00", `bell\x07 nul\x00`},
		{"c1 \u009b csi", `c1 \x9b csi`},
		{"unicode ✓ · kept", "unicode ✓ · kept"},
	} {
		if got := Sanitize(tc.in); got != tc.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// events drives a Reporter through a run of two packages: one blob
// copied with its bytes, one mounted, one skipped, a line per package.
func events(r Reporter) {
	r.AddPackages(2)
	r.PackageStarted("src/a")
	r.BlobStarted("dst/a sha256:1", "a 1", 3<<20)
	r.BlobBytes("dst/a sha256:1", 1<<20)
	r.BlobBytes("dst/a sha256:1", 2<<20)
	r.BlobDone("dst/a sha256:1", Copied)
	r.BlobBytes("dst/a sha256:m", 512) // a manifest read for its successors
	r.BlobDone("dst/a sha256:2", Skipped)
	r.PackageDone("src/a", nil)
	r.Line("mirrored src/a -> dst/a (copied 1, mounted 0, skipped 1)")
	r.PackageStarted("src/b")
	r.BlobStarted("dst/b sha256:1", "b 1", 3<<20)
	r.BlobDone("dst/b sha256:1", Mounted)
	r.PackageDone("src/b", errors.New("boom"))
	r.Line("mirroring src/b: \x1b[31mboom\r")
	r.Close()
	r.Line("after close")
}

func TestPlainLines(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		{Plain, "mirrored src/a -> dst/a (copied 1, mounted 0, skipped 1)\n" +
			`mirroring src/b: \x1b[31mboom\r` + "\n" +
			"after close\n"},
		{Silent, ""},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			var buf bytes.Buffer
			events(New(&buf, tc.mode))
			if got := buf.String(); got != tc.want {
				t.Errorf("output:\n%q\nwant:\n%q", got, tc.want)
			}
		})
	}
}

func TestOverallLine(t *testing.T) {
	for _, tc := range []struct {
		c       Counts
		elapsed time.Duration
		want    string
	}{
		{Counts{}, 0, "packages 0/0 · blobs 0 (0 mounted, 0 skipped) · 0.0 b"},
		{Counts{PackagesDone: 2, PackagesTotal: 9, Blobs: 14, Mounted: 3, Skipped: 5, Bytes: 3 << 20}, 2 * time.Second,
			"packages 2/9 · blobs 14 (3 mounted, 5 skipped) · 3.0 MiB · 1.5 MiB/s"},
		{Counts{PackagesDone: 9, PackagesTotal: 9, PackagesFailed: 1, Blobs: 1, Bytes: 1536}, 100 * time.Millisecond,
			"packages 9/9 (1 failed) · blobs 1 (0 mounted, 0 skipped) · 1.5 KiB"},
	} {
		if got := OverallLine(tc.c, tc.elapsed); got != tc.want {
			t.Errorf("OverallLine(%+v, %s) = %q, want %q", tc.c, tc.elapsed, got, tc.want)
		}
	}
}

func TestResolvingLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Counts
		want string
	}{
		{"start", Counts{}, "resolving · packages 0 read, 0 queued · 0.0 b"},
		{"midway", Counts{PackagesDone: 37, PackagesTotal: 49, Bytes: 1258291}, "resolving · packages 37 read, 12 queued · 1.2 MiB"},
		{"done, with downloads", Counts{PackagesDone: 9, PackagesTotal: 9, Blobs: 2, Bytes: 3 << 20}, "resolving · packages 9 read, 0 queued · 3.0 MiB · 2 downloaded"},
		{"failed", Counts{PackagesDone: 3, PackagesTotal: 4, PackagesFailed: 1, Bytes: 1536}, "resolving · packages 3 read, 1 queued (1 failed) · 1.5 KiB"},
		// The queue never shows negative, whatever order the events
		// came in.
		{"read before queued", Counts{PackagesDone: 2, PackagesTotal: 1}, "resolving · packages 2 read, 0 queued · 0.0 b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ResolvingLine(tc.c); got != tc.want {
				t.Errorf("ResolvingLine(%+v) = %q, want %q", tc.c, got, tc.want)
			}
		})
	}
}

// TestBarsPhase checks each phase's overall line as a terminal gets it:
// the resolution's counts packages read and queued, never blobs; the
// transfer's is the line mirror always drew.
func TestBarsPhase(t *testing.T) {
	run := func(r Reporter) {
		r.AddPackages(3)
		r.PackageDone("src/a", nil)
		r.BlobBytes("resolve src/a:v1", 1024)
		r.AddPackages(2)
		r.PackageDone("src/b", nil)
		r.BlobBytes("resolve src/b:v1", 512)
		r.Close()
	}
	for _, tc := range []struct {
		name      string
		phase     Phase
		want, not string
	}{
		{"resolution", Resolution, "resolving · packages 2 read, 3 queued · 1.5 KiB", "blobs"},
		{"transfer", Transfer, "packages 2/5 · blobs 0 (0 mounted, 0 skipped) · 1.5 KiB", "resolving"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out syncBuffer
			run(NewBars(&out, BarsOptions{Width: 100, Phase: tc.phase}))
			got := out.String()
			if !strings.Contains(got, tc.want) {
				t.Errorf("output lacks %q:\n%q", tc.want, got)
			}
			if strings.Contains(got, tc.not) {
				t.Errorf("output holds %q:\n%q", tc.not, got)
			}
		})
	}
}

// TestNewPhase checks that the phase reaches the terminal's reporter and
// that a pipe still gets no counters in either phase.
func TestNewPhase(t *testing.T) {
	for _, tc := range []struct {
		mode  Mode
		phase Phase
		want  string
	}{
		{Bars, Resolution, "resolving · packages 1 read, 0 queued"},
		{Bars, Transfer, "packages 1/1 · blobs 0"},
		{Plain, Resolution, ""},
		{Silent, Resolution, ""},
	} {
		t.Run(fmt.Sprintf("%s phase %d", tc.mode, tc.phase), func(t *testing.T) {
			var out syncBuffer
			r := NewPhase(&out, tc.mode, tc.phase)
			r.AddPackages(1)
			r.PackageDone("a", nil)
			r.Close()
			got := out.String()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("output %q, want it to hold %q", got, tc.want)
			}
		})
	}
}

func TestContext(t *testing.T) {
	if got := FromContext(context.Background()); got != Discard {
		t.Errorf("FromContext(empty) = %T, want Discard", got)
	}
	var out syncBuffer
	r := NewPlain(&out)
	if got := FromContext(NewContext(context.Background(), r)); got != Reporter(r) {
		t.Errorf("FromContext = %T, want the reporter put in", got)
	}
	if got := FromContext(NewContext(context.Background(), nil)); got != Discard {
		t.Errorf("FromContext(NewContext(nil)) = %T, want Discard", got)
	}
}

// syncBuffer is a bytes.Buffer mpb's goroutine and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBars checks what the terminal renderer leaves once closed: the
// lines above, the final overall line with every count, drawn with cursor
// movements, and the line printed after Close on its own.
func TestBars(t *testing.T) {
	var out syncBuffer
	r := NewBars(&out, BarsOptions{Width: 100})
	events(r)
	got := out.String()
	for _, want := range []string{
		"mirrored src/a -> dst/a (copied 1, mounted 0, skipped 1)\n",
		`mirroring src/b: \x1b[31mboom\r` + "\n",
		"packages 2/2 (1 failed) · blobs 3 (1 mounted, 1 skipped) · 3.0 MiB",
		"\x1b[",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%q", want, got)
		}
	}
	if !strings.HasSuffix(got, "after close\n") {
		t.Errorf("the line after Close is not last:\n%q", got)
	}
	// The events after Close are dropped, without a panic.
	r.BlobStarted("x", "x", 10<<20)
	r.BlobBytes("x", 1)
	r.BlobDone("x", Copied)
}

func TestReader(t *testing.T) {
	var out syncBuffer
	r := NewBars(&out, BarsOptions{Width: 100})
	r.AddPackages(1)
	rc := NewReader(ioNopCloser{strings.NewReader(strings.Repeat("x", 5000))}, r, "id")
	var sink bytes.Buffer
	if _, err := sink.ReadFrom(rc); err != nil {
		t.Fatal(err)
	}
	if sink.Len() != 5000 {
		t.Fatalf("read %d bytes, want 5000", sink.Len())
	}
	r.PackageDone("p", nil)
	r.Close()
	if want := "packages 1/1 · blobs 0 (0 mounted, 0 skipped) · 4.9 KiB"; !strings.Contains(out.String(), want) {
		t.Errorf("output lacks %q:\n%q", want, out.String())
	}
}

type ioNopCloser struct{ *strings.Reader }

func (ioNopCloser) Close() error { return nil }

// TestBarsOnlyInTransfer: a large blob gets its bar with its first bytes;
// until then it counts as waiting on the overall line, and a blob done
// without bytes (mounted, skipped) never had a bar.
func TestBarsOnlyInTransfer(t *testing.T) {
	var out syncBuffer
	r := NewBars(&out, BarsOptions{Width: 100, MinBarSize: 10})
	for _, id := range []string{"a", "b", "c", "d"} {
		r.BlobStarted(id, "blob "+id, 100)
	}
	r.BlobBytes("a", 10)
	r.mu.Lock()
	bars, pending := len(r.bars), len(r.pending)
	r.mu.Unlock()
	if bars != 1 || pending != 3 {
		t.Fatalf("%d bars and %d waiting after one blob moved, want 1 and 3", bars, pending)
	}
	if got := r.Overall(time.Second); !strings.HasSuffix(got, " · waiting 3") {
		t.Errorf("overall line %q does not end with the waiting count", got)
	}
	r.BlobDone("b", Mounted)
	r.BlobBytes("c", 100)
	r.BlobDone("c", Copied)
	r.BlobDone("a", Copied)
	r.BlobDone("d", Skipped)
	if got := r.Overall(time.Second); strings.Contains(got, "waiting") {
		t.Errorf("overall line %q still counts waiting blobs", got)
	}
	r.Close()
}
