package errkind_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ferryhq/ferry/errkind"
)

// typed is an error type that says its kind with an Is method.
type typed struct{ kind error }

func (e *typed) Error() string        { return "typed" }
func (e *typed) Is(target error) bool { return target == e.kind }

// TestOf: the outermost mark decides, through %w wrapping, joined errors
// and typed errors.
func TestOf(t *testing.T) {
	bad := errkind.Markf(errkind.BadInput, "bad")
	mis := errkind.Markf(errkind.Mismatch, "mismatch")
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"nil", nil, nil},
		{"unmarked", errors.New("plain"), nil},
		{"bad input", bad, errkind.BadInput},
		{"mismatch", mis, errkind.Mismatch},
		{"wrapped", fmt.Errorf("context: %w", mis), errkind.Mismatch},
		{"outer decides", errkind.Mark(errkind.BadInput, fmt.Errorf("x: %w", mis)), errkind.BadInput},
		{"outer mismatch", errkind.Mark(errkind.Mismatch, bad), errkind.Mismatch},
		{"joined", errors.Join(errors.New("a"), mis), errkind.Mismatch},
		{"typed", fmt.Errorf("y: %w", &typed{errkind.BadInput}), errkind.BadInput},
		{"typed unmarked", &typed{errors.New("other")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := errkind.Of(tc.err); got != tc.want {
				t.Errorf("Of(%v) = %v, want %v", tc.err, got, tc.want)
			}
			if tc.err != nil && tc.want != nil && !errors.Is(tc.err, tc.want) && tc.name != "outer decides" && tc.name != "outer mismatch" {
				t.Errorf("errors.Is(%v, %v) = false", tc.err, tc.want)
			}
		})
	}
	if errkind.Mark(errkind.BadInput, nil) != nil {
		t.Error("Mark of nil is not nil")
	}
	if got := bad.Error(); got != "bad" {
		t.Errorf("message %q, want unchanged", got)
	}
}

// TestSentinels checks that BadInputError and MismatchError are of their
// kind, through wrapping, and keep their message.
func TestSentinels(t *testing.T) {
	tests := []struct {
		err  error
		kind error
	}{
		{errkind.BadInputError("no destination"), errkind.BadInput},
		{errkind.MismatchError("digest differs"), errkind.Mismatch},
	}
	for _, tt := range tests {
		wrapped := fmt.Errorf("pkg: %w", tt.err)
		if errkind.Of(tt.err) != tt.kind || errkind.Of(wrapped) != tt.kind {
			t.Errorf("%v: kind %v, wrapped %v; want %v", tt.err, errkind.Of(tt.err), errkind.Of(wrapped), tt.kind)
		}
		if !errors.Is(wrapped, tt.err) || !errors.Is(wrapped, tt.kind) {
			t.Errorf("%v: errors.Is fails through wrapping", tt.err)
		}
		other := errkind.Mismatch
		if tt.kind == errkind.Mismatch {
			other = errkind.BadInput
		}
		if errors.Is(tt.err, other) {
			t.Errorf("%v is also %v", tt.err, other)
		}
	}
	if got := errkind.BadInputError("x y").Error(); got != "x y" {
		t.Errorf("message %q", got)
	}
}
