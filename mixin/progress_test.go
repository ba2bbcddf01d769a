package mixin

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/progress"
)

// TestDownloadProgress checks that every binary Fetch (a lock's
// downloads, sized by Content-Length) and FetchLocked (a mirror's, sized by
// the lock) downloads reaches the Reporter the context carries: one blob
// per file, and every byte, as a terminal's overall line counts them.
func TestDownloadProgress(t *testing.T) {
	ctx := context.Background()
	hc := registrytest.Client(t).HTTPClient()
	fs := mixintest.NewFeed(t)
	feed, err := LoadFeed(ctx, hc, fs.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	var want *Locked
	for _, tc := range []struct {
		name  string
		fetch func(ctx context.Context) (*Locked, error)
	}{
		{"Fetch", func(ctx context.Context) (*Locked, error) {
			return Fetch(ctx, hc, feed, "exec", "v1.2.3", []string{"darwin/arm64"}, nil, t.TempDir())
		}},
		{"FetchLocked", func(ctx context.Context) (*Locked, error) {
			if want == nil {
				return nil, errors.New("no lock entry: Fetch failed")
			}
			return want, FetchLocked(ctx, hc, want, t.TempDir(), nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bars := progress.NewBars(io.Discard, progress.BarsOptions{MinBarSize: 1})
			got, err := tc.fetch(progress.NewContext(ctx, bars))
			bars.Close()
			if err != nil {
				t.Fatal(err)
			}
			want = got
			var size int64
			for _, b := range got.Binaries {
				size += b.Size
			}
			if len(got.Binaries) < 2 || size == 0 {
				t.Fatalf("downloaded %d binaries of %d bytes: the feed should give two", len(got.Binaries), size)
			}
			line := bars.Overall(0)
			if w := "blobs " + strconv.Itoa(len(got.Binaries)) + " (0 mounted, 0 skipped) · " + progress.Bytes(size); !strings.Contains(line, w) {
				t.Errorf("overall line %q, want %q", line, w)
			}
		})
	}
}
