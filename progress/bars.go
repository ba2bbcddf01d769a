package progress

import (
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// DefaultMinBarSize is the smallest blob that gets a bar of its own: the
// many small blobs and manifests of a closure only move the overall line.
const DefaultMinBarSize = 1 << 20

// BarsOptions tunes a BarsReporter.
type BarsOptions struct {
	// MinBarSize is the smallest blob drawn with a bar of its own
	// (default DefaultMinBarSize).
	MinBarSize int64
	// Width is the drawing width (default: the terminal's).
	Width int
	// Refresh is the redraw interval (default 150ms, mpb's).
	Refresh time.Duration
	// Phase chooses the overall line: OverallLine for Transfer (the
	// default), ResolvingLine for Resolution.
	Phase Phase
}

// BarsReporter draws live progress on a terminal with mpb: a bar per large
// blob in transfer (label, bytes done and total, rate, ETA) above one
// overall line (packages done/total, blobs, mounts, skips, bytes, rate,
// and the large blobs waiting for a transfer slot; while resolving:
// packages read and queued, bytes read). A blob gets its bar when its
// first bytes arrive, not when it is queued: at -j 8 a closure of many
// large blobs shows eight bars, not one per queued blob at 0 bytes.
type BarsReporter struct {
	p       *mpb.Progress
	w       io.Writer
	min     int64
	phase   Phase
	overall *mpb.Bar
	start   time.Time

	pkgsTotal, pkgsDone, pkgsFailed atomic.Int64
	blobs, mounted, skipped, bytes  atomic.Int64

	mu      sync.Mutex
	bars    map[string]*mpb.Bar
	pending map[string]pendingBlob
	closed  bool
}

// pendingBlob is a large blob started but not yet moving: its bar is made
// with its first bytes.
type pendingBlob struct {
	label string
	size  int64
}

// NewBars returns a BarsReporter drawing on w, which should be a terminal.
func NewBars(w io.Writer, o BarsOptions) *BarsReporter {
	if o.MinBarSize <= 0 {
		o.MinBarSize = DefaultMinBarSize
	}
	opts := []mpb.ContainerOption{mpb.WithOutput(w), mpb.WithAutoRefresh()}
	if o.Width > 0 {
		opts = append(opts, mpb.WithWidth(o.Width))
	}
	if o.Refresh > 0 {
		opts = append(opts, mpb.WithRefreshRate(o.Refresh))
	}
	r := &BarsReporter{p: mpb.New(opts...), w: w, min: o.MinBarSize, phase: o.Phase, start: time.Now(), bars: map[string]*mpb.Bar{}, pending: map[string]pendingBlob{}}
	// The overall line has no filler and the lowest priority: it stays
	// at the bottom, under the blob bars, and stays on screen at the end.
	r.overall = r.p.New(0, mpb.NopStyle(), mpb.BarPriority(math.MaxInt),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return r.Overall(time.Since(r.start)) })))
	return r
}

// Overall returns the overall line after elapsed time, as the phase
// counts.
func (r *BarsReporter) Overall(elapsed time.Duration) string {
	c := Counts{
		PackagesDone: r.pkgsDone.Load(), PackagesTotal: r.pkgsTotal.Load(), PackagesFailed: r.pkgsFailed.Load(),
		Blobs: r.blobs.Load(), Mounted: r.mounted.Load(), Skipped: r.skipped.Load(), Bytes: r.bytes.Load(),
	}
	r.mu.Lock()
	c.Waiting = int64(len(r.pending))
	r.mu.Unlock()
	if r.phase == Resolution {
		return ResolvingLine(c)
	}
	return OverallLine(c, elapsed)
}

// Counts are the figures of the overall line.
type Counts struct {
	PackagesDone, PackagesTotal, PackagesFailed int64
	// Blobs counts blobs in place, however they got there.
	Blobs, Mounted, Skipped int64
	// Bytes counts bytes read from the origin.
	Bytes int64
	// Waiting counts large blobs started but not yet moving (queued for
	// one of the -j transfer slots, or waiting for a first byte).
	Waiting int64
}

// OverallLine formats c as the overall line, with the average rate over
// elapsed.
func OverallLine(c Counts, elapsed time.Duration) string {
	s := fmt.Sprintf("packages %d/%d", c.PackagesDone, c.PackagesTotal)
	if c.PackagesFailed > 0 {
		s += fmt.Sprintf(" (%d failed)", c.PackagesFailed)
	}
	s += fmt.Sprintf(" · blobs %d (%d mounted, %d skipped) · %s", c.Blobs, c.Mounted, c.Skipped, Bytes(c.Bytes))
	if secs := elapsed.Seconds(); secs >= 0.5 && c.Bytes > 0 {
		s += fmt.Sprintf(" · %s/s", Bytes(int64(float64(c.Bytes)/secs)))
	}
	if c.Waiting > 0 {
		s += fmt.Sprintf(" · waiting %d", c.Waiting)
	}
	return s
}

// ResolvingLine formats c as the overall line of a resolution: the
// packages read (PackagesDone), those queued but not read yet
// (PackagesTotal - PackagesDone), the bytes read, and the files
// downloaded (Blobs: a lock's mixin binaries) once there are any:
//
//	resolving · packages 37 read, 12 queued · 1.2 MiB
func ResolvingLine(c Counts) string {
	s := fmt.Sprintf("resolving · packages %d read, %d queued", c.PackagesDone, max(c.PackagesTotal-c.PackagesDone, 0))
	if c.PackagesFailed > 0 {
		s += fmt.Sprintf(" (%d failed)", c.PackagesFailed)
	}
	s += " · " + Bytes(c.Bytes)
	if c.Blobs > 0 {
		s += fmt.Sprintf(" · %d downloaded", c.Blobs)
	}
	return s
}

// Bytes formats n in binary units, as the bars do ("12.3 MiB").
func Bytes(n int64) string {
	return fmt.Sprintf("% .1f", decor.SizeB1024(n))
}

// AddPackages adds n to the packages total.
func (r *BarsReporter) AddPackages(n int) { r.pkgsTotal.Add(int64(n)) }

// PackageStarted does nothing: the overall line counts finished packages.
func (r *BarsReporter) PackageStarted(string) {}

// PackageDone counts a finished package.
func (r *BarsReporter) PackageDone(_ string, err error) {
	if err != nil {
		r.pkgsFailed.Add(1)
	}
	r.pkgsDone.Add(1)
}

// BlobStarted notes a blob of at least MinBarSize bytes; its bar is drawn
// once its first bytes arrive (BlobBytes), until then it counts as
// waiting on the overall line.
func (r *BarsReporter) BlobStarted(id, label string, size int64) {
	if size < r.min {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if old := r.bars[id]; old != nil { // a retry starts the blob again
		old.Abort(true)
		delete(r.bars, id)
	}
	r.pending[id] = pendingBlob{label: label, size: size}
}

// BlobBytes counts n bytes, on the blob's bar when it has one, making the
// bar of a large blob with its first bytes.
func (r *BarsReporter) BlobBytes(id string, n int64) {
	r.bytes.Add(n)
	r.mu.Lock()
	b := r.bars[id]
	if pb, ok := r.pending[id]; ok && b == nil && !r.closed {
		delete(r.pending, id)
		b = r.p.AddBar(pb.size, mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Name(Sanitize(pb.label), decor.WCSyncSpaceR)),
			mpb.AppendDecorators(
				decor.CountersKibiByte("% .1f / % .1f", decor.WCSyncSpace),
				decor.AverageSpeed(decor.SizeB1024(0), "% .1f", decor.WCSyncSpace),
				decor.OnComplete(decor.AverageETA(decor.ET_STYLE_GO, decor.WCSyncSpace), "done"),
			))
		r.bars[id] = b
	}
	r.mu.Unlock()
	if b != nil {
		b.IncrInt64(n)
	}
}

// BlobDone counts a blob in place and removes its bar.
func (r *BarsReporter) BlobDone(id string, o Outcome) {
	r.blobs.Add(1)
	switch o {
	case Mounted:
		r.mounted.Add(1)
	case Skipped:
		r.skipped.Add(1)
	}
	r.mu.Lock()
	b := r.bars[id]
	delete(r.bars, id)
	delete(r.pending, id)
	r.mu.Unlock()
	// A bar whose bytes all came completes by itself; one mounted,
	// skipped or read short (a retry re-reads from the origin) is
	// dropped: a bar made with its total cannot be completed early.
	if b != nil && !b.Completed() {
		b.Abort(true)
	}
}

// Line prints s, sanitized, above the bars (after Close: on its own).
func (r *BarsReporter) Line(s string) {
	s = Sanitize(s) + "\n"
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if !closed {
		if _, err := r.p.Write([]byte(s)); err == nil {
			return
		}
	}
	io.WriteString(r.w, s)
}

// Close draws the last overall line and stops.
func (r *BarsReporter) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	for id, b := range r.bars {
		b.Abort(true)
		delete(r.bars, id)
	}
	clear(r.pending)
	r.mu.Unlock()
	r.overall.SetTotal(-1, true)
	r.p.Wait()
}
