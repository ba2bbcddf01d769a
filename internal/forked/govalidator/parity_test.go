package govalidator_test

import (
	"testing"

	realgovalidator "github.com/asaskevich/govalidator"

	"github.com/ferryhq/ferry/internal/forked/govalidator"
)

// TestIsEmailParity holds the copy's IsEmail (what rekor's pkg/pki/x509
// uses to sort a certificate's SANs into e-mail addresses and names) to
// the real govalidator's.
func TestIsEmailParity(t *testing.T) {
	for _, s := range []string{
		"", "signer@example.com", "foo@oidc.local", "foo!oidc.local", "a.b+c@sub.example.co.uk",
		"@example.com", "signer@", "signer@@example.com", "signer@example", "signer@example.com.",
		"SIGNER@EXAMPLE.COM", "\"quoted name\"@example.com", "sp ace@example.com", "ünïcode@exämple.com",
		"https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/heads/main",
		"spiffe://example.com/ns/default/sa/default", "a@b.c", "a@-b.com", "a@b-.com", "x@1.2.3.4",
	} {
		if got, want := govalidator.IsEmail(s), realgovalidator.IsEmail(s); got != want {
			t.Errorf("IsEmail(%q) = %v, the real govalidator says %v", s, got, want)
		}
	}
}
