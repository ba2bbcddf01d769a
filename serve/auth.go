package serve

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/ferryhq/ferry/internal/forked/distribution/configuration"
	"github.com/ferryhq/ferry/internal/forked/distribution/registry/auth"
	_ "github.com/ferryhq/ferry/internal/forked/distribution/registry/auth/htpasswd" // the "htpasswd" access controller
	_ "github.com/ferryhq/ferry/internal/forked/distribution/registry/auth/token"    // the "token" access controller
)

// guard sits in front of the registry and the Extra routes: it refuses
// writes in read-only mode and checks credentials.
type guard struct {
	next     http.Handler
	readOnly bool
	// basic is distribution's htpasswd access controller, applied to every
	// route; nil without Htpasswd.
	basic    auth.AccessController
	anonRead bool
	// bearer is distribution's token access controller, applied to Extra
	// routes only (the registry checks /v2/ itself, with scopes); nil
	// without TokenAuth.
	bearer auth.AccessController
}

func newGuard(opts Options) (*guard, error) {
	g := &guard{readOnly: opts.ReadOnly, anonRead: opts.AnonymousRead}
	if opts.Htpasswd != "" {
		if err := checkHtpasswd(opts.Htpasswd); err != nil {
			return nil, err
		}
		realm := opts.Realm
		if realm == "" {
			realm = DefaultRealm
		}
		ac, err := auth.GetAccessController("htpasswd", map[string]any{"realm": realm, "path": opts.Htpasswd})
		if err != nil {
			return nil, fmt.Errorf("serve: htpasswd authentication: %w", err)
		}
		g.basic = ac
	}
	if opts.TokenAuth != nil {
		p, err := tokenParams(opts.TokenAuth)
		if err != nil {
			return nil, err
		}
		ac, err := auth.GetAccessController("token", p)
		if err != nil {
			return nil, fmt.Errorf("serve: token authentication: %w", err)
		}
		g.bearer = ac
	}
	return g, nil
}

func tokenParams(t *TokenAuth) (configuration.Parameters, error) {
	if t.Realm == "" || t.Service == "" || t.Issuer == "" {
		return nil, errors.New("serve: token authentication needs a realm, a service and an issuer")
	}
	if t.JWKS == "" && t.RootCertBundle == "" {
		return nil, errors.New("serve: token authentication needs a JWKS file or a root certificate bundle to verify tokens with")
	}
	p := configuration.Parameters{"realm": t.Realm, "service": t.Service, "issuer": t.Issuer}
	if t.JWKS != "" {
		p["jwks"] = t.JWKS
	}
	if t.RootCertBundle != "" {
		p["rootcertbundle"] = t.RootCertBundle
	}
	return p, nil
}

// HtpasswdError is an htpasswd file that cannot serve: missing,
// unreadable, an entry that is not USER:HASH or not bcrypt, or no user.
// Err's text starts with the file's path (or is an *fs.PathError naming
// it); a CLI words it with its flag ("--htpasswd " + Err).
type HtpasswdError struct{ Err error }

func (e *HtpasswdError) Error() string { return "serve: htpasswd file " + e.Err.Error() }

// Unwrap returns Err (fs.ErrNotExist for a missing file).
func (e *HtpasswdError) Unwrap() error { return e.Err }

// checkHtpasswd makes sure the file exists (distribution would otherwise
// create one with a random password and log that password) and that every
// entry is a bcrypt one. Errors never quote the file's content.
func checkHtpasswd(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &HtpasswdError{Err: err}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, users := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return &HtpasswdError{Err: fmt.Errorf("%s line %d: not a USER:HASH entry", path, n)}
		}
		if !strings.HasPrefix(hash, "$2") {
			return &HtpasswdError{Err: fmt.Errorf("%s line %d (user %q): only bcrypt entries are supported (htpasswd -B)", path, n, user)}
		}
		users++
	}
	if err := sc.Err(); err != nil {
		return &HtpasswdError{Err: fmt.Errorf("%s: reading: %w", path, err)}
	}
	if users == 0 {
		return &HtpasswdError{Err: fmt.Errorf("%s has no users", path)}
	}
	return nil
}

// isRead reports whether method only reads.
func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	read := isRead(r.Method)
	if g.readOnly && !read {
		w.Header().Set("Allow", "GET, HEAD, OPTIONS")
		writeError(w, http.StatusMethodNotAllowed, "UNSUPPORTED", "the registry is read-only")
		return
	}
	switch {
	case g.basic != nil:
		anonymous := g.anonRead && read && r.URL.Path != "/v2/" && r.Header.Get("Authorization") == ""
		if !anonymous && !g.authorize(w, r, g.basic) {
			return
		}
	case g.bearer != nil && !isRegistryPath(r.URL.Path):
		if !g.authorize(w, r, g.bearer) {
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func isRegistryPath(p string) bool {
	return p == "/v2" || strings.HasPrefix(p, "/v2/")
}

// authorize runs ac on r and answers the request when it is refused.
func (g *guard) authorize(w http.ResponseWriter, r *http.Request, ac auth.AccessController) bool {
	_, err := ac.Authorized(r)
	if err == nil {
		return true
	}
	var ch auth.Challenge
	if errors.As(err, &ch) {
		ch.SetHeaders(r, w)
		writeError(w, http.StatusUnauthorized, "UNAUTHORIZED", "authentication required")
		return false
	}
	// A broken htpasswd file or similar: say nothing more to the client.
	writeError(w, http.StatusInternalServerError, "UNKNOWN", "cannot check credentials")
	return false
}

// writeError answers with a distribution-style JSON error body.
func writeError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Docker-Distribution-API-Version", "registry/2.0")
	w.WriteHeader(status)
	body := map[string]any{"errors": []map[string]string{{"code": code, "message": message}}}
	_ = json.NewEncoder(w).Encode(body)
}
