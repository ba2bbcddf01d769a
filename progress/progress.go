// Package progress reports the progress of long work (resolutions, package
// copies, blob transfers, downloads, archive writing and import, installs,
// deep verifies) to the person watching: live bars on a terminal (bars.go,
// drawn with github.com/vbauerster/mpb/v8), one plain line per result when
// the output is a pipe or a file (plain.go), nothing at all with --quiet.
//
// The pipeline packages call a Reporter; which one they get is decided once,
// by the command line (Choose, New).
package progress

import (
	"context"
	"io"
	"strings"
	"unicode"
)

// Outcome says how a blob reached its destination.
type Outcome int

const (
	// Copied: the blob's bytes were read from the origin and written.
	Copied Outcome = iota
	// Mounted: the registry mounted the blob from another repository;
	// no bytes travelled.
	Mounted
	// Skipped: the destination already held the blob.
	Skipped
)

// Reporter receives the events of long work. Every method may be called
// from many goroutines at once. A blob is named by an id unique within the
// run (the pipeline uses "DESTINATION DIGEST"); its label is what a person
// reads.
type Reporter interface {
	// AddPackages adds n to the number of packages the work covers; a
	// negative n takes back packages that turned out to be counted
	// already (a resolution's two edges to one package version).
	AddPackages(n int)
	// PackageStarted is called as the work on a package begins.
	PackageStarted(name string)
	// PackageDone is called as the work on a package ends, with its
	// error (nil on success).
	PackageDone(name string, err error)
	// BlobStarted is called before a blob of size bytes is transferred.
	BlobStarted(id, label string, size int64)
	// BlobBytes reports n more bytes of blob id read from the origin.
	// Bytes may be reported for an id that was never started (a
	// manifest read to find its successors): they count in the total.
	BlobBytes(id string, n int64)
	// BlobDone is called when a blob is in place, by how it got there.
	BlobDone(id string, o Outcome)
	// Line prints one line of its own (a result, a step taken): above
	// the bars on a terminal, as is on a pipe, nowhere when silent.
	Line(s string)
	// Close stops drawing and leaves the final overall line (on a
	// terminal). Events after Close are dropped; lines still print.
	Close()
}

// Mode is how progress is shown.
type Mode int

const (
	// Silent shows nothing (--quiet).
	Silent Mode = iota
	// Plain prints lines only, with no control characters (a pipe, a
	// file, TERM=dumb, -o json).
	Plain
	// Bars draws live progress bars (a terminal).
	Bars
)

// String names m.
func (m Mode) String() string {
	switch m {
	case Silent:
		return "silent"
	case Plain:
		return "plain"
	case Bars:
		return "bars"
	}
	return "unknown"
}

// Choose returns the mode for a stream: Silent when quiet; Plain when
// machine output was asked for (-o json), when the stream is not a
// terminal, or when TERM is "dumb" (a terminal that cannot move the
// cursor); Bars otherwise. NO_COLOR does not turn progress off: it asks
// for no colour (https://no-color.org: "should prevent the addition of
// ANSI color", nothing more), and ferry's bars and lines have none.
func Choose(isTerminal, quiet, machine bool, getenv func(string) string) Mode {
	switch {
	case quiet:
		return Silent
	case machine, !isTerminal:
		return Plain
	case getenv("TERM") == "dumb":
		return Plain
	}
	return Bars
}

// Phase is the kind of work a Reporter's overall line counts.
type Phase int

const (
	// Transfer counts packages copied, blobs and bytes moved (mirror,
	// archive writing and import, install, verify --deep): OverallLine.
	Transfer Phase = iota
	// Resolution counts packages read and still queued while a closure is
	// resolved, and the bytes read: ResolvingLine.
	Resolution
)

// New returns a Reporter of mode m writing to w for the Transfer phase.
// For Bars, w should be a terminal (the bars are drawn with cursor
// movements).
func New(w io.Writer, m Mode) Reporter { return NewPhase(w, m, Transfer) }

// NewPhase returns a Reporter of mode m writing to w whose overall line
// (Bars only) counts the work of phase.
func NewPhase(w io.Writer, m Mode, phase Phase) Reporter {
	switch m {
	case Plain:
		return NewPlain(w)
	case Bars:
		return NewBars(w, BarsOptions{Phase: phase})
	}
	return Discard
}

// Discard is the Reporter that shows nothing.
var Discard Reporter = discard{}

type discard struct{}

func (discard) AddPackages(int)                   {}
func (discard) PackageStarted(string)             {}
func (discard) PackageDone(string, error)         {}
func (discard) BlobStarted(string, string, int64) {}
func (discard) BlobBytes(string, int64)           {}
func (discard) BlobDone(string, Outcome)          {}
func (discard) Line(string)                       {}
func (discard) Close()                            {}

// Or returns r, or Discard when r is nil.
func Or(r Reporter) Reporter {
	if r == nil {
		return Discard
	}
	return r
}

// Sanitize returns s with every control character (ESC, CR, BEL, a
// newline inside the line, …) written as Go escapes it (\x1b, \r), so a
// line from a registry or a file cannot move the cursor or fake output.
// Tabs are kept.
func Sanitize(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !isControl(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\r':
			b.WriteString(`\r`)
		case '\n':
			b.WriteString(`\n`)
		default:
			if r < 0x100 {
				b.WriteString(`\x`)
				b.WriteByte("0123456789abcdef"[r>>4])
				b.WriteByte("0123456789abcdef"[r&0xf])
			} else {
				b.WriteString(`\u`)
				for shift := 12; shift >= 0; shift -= 4 {
					b.WriteByte("0123456789abcdef"[(r>>shift)&0xf])
				}
			}
		}
	}
	return b.String()
}

func isControl(r rune) bool { return r != '\t' && unicode.IsControl(r) }

// NewReader returns rc reporting every byte read from it to r as blob id's
// (BlobBytes). The bytes pass through untouched.
func NewReader(rc io.ReadCloser, r Reporter, id string) io.ReadCloser {
	return &reader{ReadCloser: rc, r: r, id: id}
}

type reader struct {
	io.ReadCloser
	r  Reporter
	id string
}

// NewContext returns ctx carrying r, for work reached through an API that
// takes no Reporter (a format's downloads: see FromContext).
func NewContext(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, ctxKey{}, Or(r))
}

// FromContext returns the Reporter ctx carries (NewContext), or Discard.
func FromContext(ctx context.Context) Reporter {
	if r, ok := ctx.Value(ctxKey{}).(Reporter); ok {
		return r
	}
	return Discard
}

type ctxKey struct{}

func (c *reader) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if n > 0 {
		c.r.BlobBytes(c.id, int64(n))
	}
	return n, err
}
