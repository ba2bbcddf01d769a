package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/serve"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/sourcemirror"
)

// TestFlagHints: the typed and sentinel errors of the libraries, which
// name no flag, are worded with ferry's flag, wherever they are wrapped,
// and keep their exit code.
func TestFlagHints(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("resolve x: %w", err) }
	for _, tc := range []struct {
		err  error
		want string
		code int
	}{
		{wrap(&client.PlainHTTPError{Host: "reg.example:5000"}), "refusing plain HTTP to a host that is not loopback; pass --plain-http=reg.example:5000 to allow it", exitcode.Failure},
		{wrap(&client.PlainHTTPError{Host: "r.example", Answered: true, Err: errors.New("tls: first record")}), "; pass --plain-http=r.example if it only speaks HTTP", exitcode.Failure},
		{wrap(&client.TLSError{Host: "r.example", Reason: "unknown authority", UnknownAuthority: true}), "; pass --ca-file with the CA certificate that signed it", exitcode.Failure},
		{wrap(&client.NotRegistryError{Host: "web.example", StatusCode: 404}), "; check the HOST of --to", exitcode.Failure},
		{wrap(errkind.Mark(errkind.BadInput, signature.ErrNoTrustedRoot)), "(pass --trusted-root trusted_root.json)", exitcode.Usage},
		{wrap(fmt.Errorf("a: %w", sourcemirror.ErrNoLocation)), "(or --mirror-source HOST=LOCATION)", exitcode.Failure},
		{wrap(&resolve.NoLatestError{Source: "r.example/app", Tags: []string{"1.0.0", "1.4.2"}}), "--version '^1.4'", exitcode.Failure},
	} {
		got := flagHints(tc.err)
		if !strings.Contains(got.Error(), tc.want) || exitcode.Of(got) != tc.code {
			t.Errorf("flagHints(%q) = %q (exit %d), want %q (exit %d)", tc.err, got, exitcode.Of(got), tc.want, tc.code)
		}
	}
	plain := errors.New("plain")
	if got := flagHints(plain); got != plain {
		t.Errorf("flagHints(other) = %v, want it unchanged", got)
	}
}

// TestServeFlagError: package serve's option errors are worded with
// `ferry serve`'s flags.
func TestServeFlagError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		opts serve.Options
		want string
	}{
		{errors.New("x"), serve.Options{TLSCert: "c"}, "(--tls-cert and --tls-key)"},
		{errors.New("x"), serve.Options{AnonymousRead: true}, "only makes sense with --htpasswd"},
		{&serve.HtpasswdError{Err: errors.New("f has no users")}, serve.Options{Htpasswd: "f"}, "serve: --htpasswd f has no users"},
		{fmt.Errorf("serve: refusing to listen on :0: %w", serve.ErrUnprotected), serve.Options{}, "or pass --insecure to serve it unprotected anyway"},
	} {
		if got := serveFlagError(tc.err, tc.opts); !strings.Contains(got.Error(), tc.want) {
			t.Errorf("serveFlagError(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
