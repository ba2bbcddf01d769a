package exitcode_test

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/manifest"
)

// TestOf pins the exit code of an error: the outermost Error's code, else
// Mismatch for fetched bytes that do not hash to their digest (issue 30:
// at every stage, whatever the registry answers), else Failure.
func TestOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, exitcode.OK},
		{"plain", errors.New("boom"), exitcode.Failure},
		{"body cut short", fmt.Errorf("fetching: %w", io.ErrUnexpectedEOF), exitcode.Failure},
		{"bad input", exitcode.BadInput("bad"), exitcode.Usage},
		{"oras mismatched digest", fmt.Errorf("mirroring x: %w", content.ErrMismatchedDigest), exitcode.Mismatch},
		{"oras trailing data", fmt.Errorf("x: %w", content.ErrTrailingData), exitcode.Mismatch},
		{"ferry manifest digest", fmt.Errorf("fetching x:v1: %w: the 3 bytes received hash to a, not b", manifest.ErrDigest), exitcode.Mismatch},
		{"explicit code wins", exitcode.With(exitcode.Failure, content.ErrMismatchedDigest), exitcode.Failure},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitcode.Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
	if !errors.Is(manifest.ErrDigest, manifest.ErrDigest) {
		t.Error("manifest.ErrDigest is not itself")
	}
}
