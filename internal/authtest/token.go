package authtest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/ferryhq/ferry/serve"
)

const (
	tokenService = "ferry-test-registry"
	tokenIssuer  = "ferry-test-token-server"
	tokenPath    = "/token"
)

// TokenRegistry is a running registry that demands bearer tokens
// (distribution's token auth), with a token server on the registry's own
// listener at /token that checks basic credentials and issues JWTs for the
// requested scopes.
type TokenRegistry struct {
	// Host is "127.0.0.1:PORT" (plain HTTP on loopback).
	Host string
	// Realm is the token endpoint URL.
	Realm string
	// User and Password are the credentials the token server accepts.
	User, Password string
	// Root is the storage directory.
	Root string
	// Server is the running server.
	Server *serve.Server

	key    *ecdsa.PrivateKey
	kid    string
	mu     sync.Mutex
	tokens []string
	scopes []string
	denied int
}

// NewTokenRegistry starts a token-auth registry on 127.0.0.1 and stops it
// when the test ends.
func NewTokenRegistry(t testing.TB) *TokenRegistry {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("authtest: token key: %v", err)
	}
	var kb [8]byte
	_, _ = rand.Read(kb[:])
	r := &TokenRegistry{User: "ferry", Password: Secret(t), key: key, kid: hex.EncodeToString(kb[:])}

	dir := t.TempDir()
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: &key.PublicKey, KeyID: r.kid, Algorithm: string(jose.ES256), Use: "sig",
	}}})
	if err != nil {
		t.Fatalf("authtest: jwks: %v", err)
	}
	jwksFile := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwksFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	r.Host = ln.Addr().String()
	r.Realm = "http://" + r.Host + tokenPath
	r.Root = filepath.Join(dir, "root")
	srv, err := serve.Start(context.Background(), serve.Options{
		Root:     r.Root,
		Listener: ln,
		TokenAuth: &serve.TokenAuth{
			Realm:   r.Realm,
			Service: tokenService,
			Issuer:  tokenIssuer,
			JWKS:    jwksFile,
		},
		Wrap: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.URL.Path == tokenPath {
					r.serveToken(w, req)
					return
				}
				next.ServeHTTP(w, req)
			})
		},
	})
	if err != nil {
		_ = ln.Close()
		t.Fatalf("authtest: %v", err)
	}
	r.Server = srv
	t.Cleanup(func() { _ = srv.Close() })
	return r
}

// Tokens returns every token issued so far, for leak checks.
func (r *TokenRegistry) Tokens() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.tokens...)
}

// Scopes returns every scope requested from the token server so far.
func (r *TokenRegistry) Scopes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.scopes...)
}

// Denied returns how many token requests were refused for bad or missing
// credentials.
func (r *TokenRegistry) Denied() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.denied
}

type resourceActions struct {
	Type    string   `json:"type"`
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

func (r *TokenRegistry) serveToken(w http.ResponseWriter, req *http.Request) {
	user, pass, ok := req.BasicAuth()
	if req.Method != http.MethodGet || !ok ||
		subtle.ConstantTimeCompare([]byte(user), []byte(r.User)) != 1 ||
		subtle.ConstantTimeCompare([]byte(pass), []byte(r.Password)) != 1 {
		r.mu.Lock()
		r.denied++
		r.mu.Unlock()
		w.Header().Set("WWW-Authenticate", `Basic realm="ferry-test-token"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`))
		return
	}
	var access []resourceActions
	scopes := req.URL.Query()["scope"]
	for _, s := range scopes {
		for _, one := range strings.Fields(s) {
			typ, rest, ok1 := strings.Cut(one, ":")
			i := strings.LastIndex(rest, ":")
			if !ok1 || i < 0 {
				continue
			}
			access = append(access, resourceActions{Type: typ, Name: rest[:i], Actions: strings.Split(rest[i+1:], ",")})
		}
	}
	now := time.Now()
	var jti [8]byte
	_, _ = rand.Read(jti[:])
	claims := map[string]any{
		"iss":    tokenIssuer,
		"sub":    user,
		"aud":    tokenService,
		"exp":    now.Add(5 * time.Minute).Unix(),
		"nbf":    now.Add(-time.Minute).Unix(),
		"iat":    now.Unix(),
		"jti":    hex.EncodeToString(jti[:]),
		"access": access,
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		http.Error(w, "encoding claims", http.StatusInternalServerError)
		return
	}
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: r.key, KeyID: r.kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		http.Error(w, "signer", http.StatusInternalServerError)
		return
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		http.Error(w, "signing", http.StatusInternalServerError)
		return
	}
	tok, err := jws.CompactSerialize()
	if err != nil {
		http.Error(w, "serializing", http.StatusInternalServerError)
		return
	}
	r.mu.Lock()
	r.tokens = append(r.tokens, tok)
	r.scopes = append(r.scopes, scopes...)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"token": tok, "access_token": tok, "expires_in": 300, "issued_at": now.UTC().Format(time.RFC3339),
	})
}
