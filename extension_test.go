package ferry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"testing"

	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/verify"
)

// recordingExtension is an Extension whose feed answers prepareErr and
// whose lock section is mirrored or not; it records the calls made.
type recordingExtension struct {
	format.Format
	prepareErr error
	mirrored   bool
	transfer   Transfer
	calls      []string
	promotedBy *relocate.Mapping
	promoteErr error
	lockErr    error
}

func (x *recordingExtension) Name() string { return "recording" }
func (x *recordingExtension) Lock(context.Context, *Run, *mirrorset.MirrorSet, *resolve.Graph, *lock.Lock, *lock.Lock) error {
	x.calls = append(x.calls, "lock")
	return x.lockErr
}
func (x *recordingExtension) Prepare(context.Context, *Run, *lock.Lock) (Transfer, error) {
	x.calls = append(x.calls, "prepare")
	return x.transfer, x.prepareErr
}
func (x *recordingExtension) Import(context.Context, *Run, *oci.ReadOnlyStore, *lock.Lock, relocate.Mapping) ([]Moved, error) {
	return nil, nil
}
func (x *recordingExtension) PrepareFrom(_ context.Context, _ *Run, _ *lock.Lock, from *relocate.Mapping) (Transfer, error) {
	x.calls = append(x.calls, "promote")
	x.promotedBy = from
	return promotedTransfer{}, x.promoteErr
}
func (x *recordingExtension) Mirrored(*lock.Lock) bool { return x.mirrored }
func (x *recordingExtension) Verify(context.Context, *Run, *lock.Lock, verify.Options, *verify.Report) error {
	return nil
}

// pushedTransfer is a Transfer that reports one pushed item.
type pushedTransfer struct{}

func (pushedTransfer) Push(context.Context, relocate.Mapping) ([]Moved, error) {
	return []Moved{{Format: "recording", Name: "fetched"}}, nil
}
func (pushedTransfer) Archive(context.Context, *oci.Store) error { return nil }

// promotedTransfer is what PrepareFrom read from a mirror.
type promotedTransfer struct{}

func (promotedTransfer) Push(_ context.Context, to relocate.Mapping) ([]Moved, error) {
	return []Moved{{Format: "recording", Name: "exec", Mirror: to.String() + "/exec@sha256:x"}}, nil
}
func (promotedTransfer) Archive(context.Context, *oci.Store) error { return nil }

func TestPrepareMirror(t *testing.T) {
	refused := fmt.Errorf("fetching the feed: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	other := errors.New("feed answered 500")
	from, err := relocate.ParseMapping("mirror.dmz/m")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		from       *relocate.Mapping
		toArchive  bool
		prepareErr error
		promoteErr error
		mirrored   bool
		transfer   Transfer
		wantErr    error
		wantCalls  []string // Prepare, then Push's
		wantWarned bool
		wantMoved  string
	}{
		{name: "feed", transfer: pushedTransfer{}, wantCalls: []string{"prepare"}, wantMoved: "fetched"},
		{name: "nothing to carry", wantCalls: []string{"prepare"}},
		{name: "--from promotes without the feed", from: &from, wantCalls: []string{"promote"}, wantMoved: "exec"},
		{name: "--from a mirror that lacks the content fails before the copy", from: &from, promoteErr: other, wantErr: other, wantCalls: []string{"promote"}},
		{name: "feed unreachable, lock records mirrors", prepareErr: refused, mirrored: true, wantCalls: []string{"prepare", "promote"}, wantWarned: true, wantMoved: "exec"},
		{name: "feed unreachable, lock records no mirror", prepareErr: refused, wantErr: refused, wantCalls: []string{"prepare"}},
		{name: "feed unreachable, writing an archive", prepareErr: refused, mirrored: true, toArchive: true, wantErr: refused, wantCalls: []string{"prepare"}},
		{name: "feed answers an error", prepareErr: other, mirrored: true, wantErr: other, wantCalls: []string{"prepare"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := &recordingExtension{prepareErr: tc.prepareErr, promoteErr: tc.promoteErr, mirrored: tc.mirrored, transfer: tc.transfer}
			var warned []string
			e := &Env{Client: &client.Client{}, Formats: []format.Format{x}, Warn: func(m string) { warned = append(warned, m) }}
			c, err := e.PrepareMirror(context.Background(), &lock.Lock{}, tc.from, tc.toArchive)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (tc.wantErr == nil) {
				t.Fatalf("PrepareMirror: %v, want %v", err, tc.wantErr)
			}
			if (len(warned) > 0) != tc.wantWarned {
				t.Errorf("warnings %q, want some: %v", warned, tc.wantWarned)
			}
			if err == nil {
				to, _ := relocate.ParseMapping("registry.internal/m")
				moved, err := c.Push(context.Background(), to)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, m := range moved {
					names = append(names, m.Name)
				}
				if want := tc.wantMoved; (want == "" && len(names) > 0) || (want != "" && !slices.Equal(names, []string{want})) {
					t.Errorf("moved %v, want %q", names, want)
				}
				if c.Promote && x.promotedBy != tc.from {
					t.Errorf("promoted from %v, want %v", x.promotedBy, tc.from)
				}
			}
			if !slices.Equal(x.calls, tc.wantCalls) {
				t.Errorf("calls %v, want %v", x.calls, tc.wantCalls)
			}
		})
	}
}

func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("get: %w", syscall.ECONNREFUSED), true},
		{&net.DNSError{Err: "no such host", Name: "feed.invalid"}, true},
		{fmt.Errorf("get: %w", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset")}), true},
		{fmt.Errorf("get: %w", &client.TimeoutError{Host: "feed:443", Waiting: "response headers"}), true},
		{errors.New("GET https://feed/x: 500 Internal Server Error"), false},
		{errors.New("401 Unauthorized"), false},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("Unreachable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
