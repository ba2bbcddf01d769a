package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/redact"
)

func TestString(t *testing.T) {
	const pw = "s3cr3t-MARKER"
	d := digest.FromString("x").String()
	tests := []struct {
		name string
		in   string
		want string // "" when in must come back unchanged
	}{
		{"reference", "fetching user:" + pw + "@r.io/acme/app:v1: not found", "fetching REDACTED@r.io/acme/app:v1: not found"},
		{"reference with port", `reference "u:` + pw + `@localhost:5000/a/b"`, `reference "REDACTED@localhost:5000/a/b"`},
		{"reference with digest", "u:" + pw + "@r.io/a@" + d, "REDACTED@r.io/a@" + d},
		{"password with slash and at", "u:a/b@" + pw + "@r.io/a:v1", "REDACTED@r.io/a:v1"},
		{"url", "GET https://user:" + pw + "@feed.example.com/atom.xml: 404", "GET https://REDACTED@feed.example.com/atom.xml: 404"},
		{"url without path", "(https://user:" + pw + "@feed.example.com)", "(https://REDACTED@feed.example.com)"},
		{"url before a colon", "chart x in repository https://u:" + pw + "@charts.example.com: bad", "chart x in repository https://REDACTED@charts.example.com: bad"},
		{"url ending a sentence", "see https://u:" + pw + "@charts.example.com/x.", "see https://REDACTED@charts.example.com/x."},
		{"url after key", "url=http://u:" + pw + "@h:8080/x", "url=http://REDACTED@h:8080/x"},
		{"flag value", "--to=u:" + pw + "@r.io/mirror: bad", "--to=REDACTED@r.io/mirror: bad"},
		{"several", "a u:" + pw + "@r.io/x and https://v:" + pw + "@h/y", "a REDACTED@r.io/x and https://REDACTED@h/y"},
		{"authorization", "Authorization: Bearer " + pw, "Authorization: Bearer REDACTED"},
		{"query", "https://h/blob?X-Amz-Signature=" + pw + "&a=b", "https://h/blob?X-Amz-Signature=REDACTED&a=b"},
		{"digest pinned reference", "r.io/acme/app@" + d + " is missing", ""},
		{"source at digest", "resolved: r.io/a@" + d, ""},
		{"root constraint", "porter:r.io/mysql:v5.7.0@5.7.x", ""},
		{"constraint", "r.io/db@^1.2 has no match", ""},
		{"plain", "no credentials here: r.io/a:v1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := redact.String(tt.in)
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got != want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, want)
			}
			if strings.Contains(got, pw) {
				t.Errorf("String(%q) keeps the password", tt.in)
			}
		})
	}
}

func TestErrorKeepsChain(t *testing.T) {
	base := fmt.Errorf("reading u:pw@r.io/a/b: %w", fs.ErrNotExist)
	err := redact.Error(base)
	if strings.Contains(err.Error(), "pw") || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Error() = %q, Is(ErrNotExist) = %v", err, errors.Is(err, fs.ErrNotExist))
	}
	clean := errors.New("nothing to hide")
	if redact.Error(clean) != clean || redact.Error(nil) != nil {
		t.Error("an error without credentials is not returned as is")
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := redact.NewWriter(&out)
	// A line split across writes, at the password, is redacted whole.
	for _, s := range []string{"level=WARN msg=\"u:s3", "cr3t@r.io/a/b\"\nnext ", "line https://u:p@h/x"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "level=WARN msg=\"REDACTED@r.io/a/b\"\nnext line https://REDACTED@h/x"
	if out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}

// TestRegistryErrors: what registries and their storage put in errors
// (userinfo, Authorization values, tokens, pre-signed URL signatures) is
// removed.
func TestRegistryErrors(t *testing.T) {
	tests := []struct {
		in, secret string
	}{
		{`Get "https://bob:hunter22@reg.example/v2/": EOF`, "hunter22"},
		{`request failed: Authorization: Basic Ym9iOmh1bnRlcjIy`, "Ym9iOmh1bnRlcjIy"},
		{`bad token eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJib2IifQ.c2lnbmF0dXJl in header`, "eyJzdWIiOiJib2IifQ"},
		{`POST "https://reg.example/token?password=hunter22&scope=x": 400`, "hunter22"},
		{`Get "https://bucket.s3.amazonaws.com/blob?X-Amz-Credential=AKIAEXAMPLE&X-Amz-Security-Token=FwoGZXIvY&X-Amz-Signature=5d6a7f": EOF`, "5d6a7f"},
		{`Get "https://bucket.s3.amazonaws.com/blob?X-Amz-Security-Token=FwoGZXIvY&X-Amz-Date=x": EOF`, "FwoGZXIvY"},
		{`Get "https://acct.blob.core.windows.net/c/b?sv=2020&se=2030&sig=c2FzLXNpZw%3D": EOF`, "c2FzLXNpZw"},
	}
	for _, tt := range tests {
		t.Run(tt.secret, func(t *testing.T) {
			err := redact.Error(errors.New(tt.in))
			if strings.Contains(err.Error(), tt.secret) {
				t.Fatalf("Redact left the secret in %q", err)
			}
		})
	}
	plain := errors.New("nothing secret here: basic authentication failed")
	if redact.Error(plain) != plain {
		t.Fatal("Redact changed a message without secrets")
	}
}
