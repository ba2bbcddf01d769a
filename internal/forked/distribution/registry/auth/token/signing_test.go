package token

import (
	"testing"

	"github.com/go-jose/go-jose/v4"
)

// TestSigningAlgorithms pins ferry's switch (signingAlgorithms) to the
// entries of upstream's map literal in registry/auth/token/token.go
// (distribution v3.1.2): the same names give the same algorithms, and no
// other name is accepted.
func TestSigningAlgorithms(t *testing.T) {
	upstream := map[string]jose.SignatureAlgorithm{
		"EdDSA": jose.EdDSA,
		"HS256": jose.HS256,
		"HS384": jose.HS384,
		"HS512": jose.HS512,
		"RS256": jose.RS256,
		"RS384": jose.RS384,
		"RS512": jose.RS512,
		"ES256": jose.ES256,
		"ES384": jose.ES384,
		"ES512": jose.ES512,
		"PS256": jose.PS256,
		"PS384": jose.PS384,
		"PS512": jose.PS512,
	}
	for name, want := range upstream {
		got, ok := signingAlgorithms(name)
		if !ok || got != want {
			t.Errorf("signingAlgorithms(%q) = %q, %v; want %q, true", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "none", "hs256", "HS1", "ES256K", "RSA-OAEP"} {
		if got, ok := signingAlgorithms(name); ok {
			t.Errorf("signingAlgorithms(%q) = %q, true; want false", name, got)
		}
	}
	if _, err := getSigningAlgorithms([]string{"RS256", "none"}); err == nil || err.Error() != "unsupported signing algorithm: none" {
		t.Errorf("getSigningAlgorithms: err %v", err)
	}
}
