package progress

import (
	"fmt"
	"io"
	"sync"
)

// PlainReporter prints the lines it is given, one per line, sanitized, and
// nothing else: what a pipe, a file or a CI log gets.
type PlainReporter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewPlain returns a PlainReporter writing to w.
func NewPlain(w io.Writer) *PlainReporter { return &PlainReporter{w: w} }

// AddPackages does nothing: a pipe gets no counters.
func (*PlainReporter) AddPackages(int) {}

// PackageStarted does nothing.
func (*PlainReporter) PackageStarted(string) {}

// PackageDone does nothing: the command prints each package's result line.
func (*PlainReporter) PackageDone(string, error) {}

// BlobStarted does nothing.
func (*PlainReporter) BlobStarted(string, string, int64) {}

// BlobBytes does nothing.
func (*PlainReporter) BlobBytes(string, int64) {}

// BlobDone does nothing.
func (*PlainReporter) BlobDone(string, Outcome) {}

// Line prints s, sanitized, on a line of its own.
func (p *PlainReporter) Line(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.w, Sanitize(s))
}

// Close does nothing.
func (*PlainReporter) Close() {}
