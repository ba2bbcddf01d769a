// Package redact removes credentials from text ferry prints: the userinfo
// of URLs (https://user:pass@host) and of registry references
// (user:pass@host/repo), Authorization header values, bearer tokens and
// credential query parameters. Messages may quote a lock's `source`, a
// ferry.yaml reference or a flag value verbatim, so cmd/ferry passes every
// error, warning and log line through it before printing.
package redact

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// Placeholder replaces each credential removed.
const Placeholder = "REDACTED"

var (
	// authHdrRE, jwtRE and secretKVRE are the patterns client.Redact
	// removes from registry errors; they are repeated here so that text
	// that never went through the client is cleaned the same way.
	authHdrRE  = lazyregexp.New(`(?i)(authorization:?\s*(?:basic|bearer)\s+)[^\s"]+`)
	jwtRE      = lazyregexp.New(`eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+`)
	secretKVRE = lazyregexp.New(`(?i)\b(password|passwd|secret|token|access_token|refresh_token|identitytoken|x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|signature|sig|_state)=[^&\s"]+`)
	// schemeRE finds a URL scheme inside a word.
	schemeRE = lazyregexp.New(`[a-zA-Z][a-zA-Z0-9+.-]*://`)
	// hostRE matches what follows userinfo: a host name or address with
	// an optional port, then '/', '?', '#' or the end of the word.
	hostRE = lazyregexp.New(`^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?(?:[/?#]|$)`)
	// digestRE matches ALGORITHM:ENCODED, what may follow the '@' of a
	// digest-pinned reference.
	digestRE = lazyregexp.New(`^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]{32,}`)
)

// String returns s without credentials.
func String(s string) string {
	if strings.Contains(s, "@") {
		s = userinfo(s)
	}
	s = authHdrRE.ReplaceAllString(s, "${1}"+Placeholder)
	s = jwtRE.ReplaceAllString(s, Placeholder+"-TOKEN")
	s = secretKVRE.ReplaceAllString(s, "${1}="+Placeholder)
	return s
}

// isDelim reports whether r ends a word that may hold a reference: space
// and the quotes and brackets messages put around references.
func isDelim(r byte) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '"', '\'', '`', '(', ')', '[', ']', '<', '>', '{', '}', ',', ';':
		return true
	}
	return false
}

// userinfo redacts the userinfo of every word of s that is a URL or a
// reference with credentials.
func userinfo(s string) string {
	var out strings.Builder
	out.Grow(len(s))
	i := 0
	for i < len(s) {
		if isDelim(s[i]) {
			out.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for j < len(s) && !isDelim(s[j]) {
			j++
		}
		out.WriteString(word(s[i:j]))
		i = j
	}
	return out.String()
}

// word redacts the userinfo of one word. The userinfo ends at the last
// '@' that is not a digest's (ociref's userinfoAt rule: a password may
// hold '/' or '@'), provided a host follows it; it starts after a URL
// scheme, else after a leading flag or key ("--to=", "source:"), else at
// the word's start. Words such as "repo@sha256:…" or "ref@^1.2" are left
// alone: no host, or a digest, follows their '@'.
func word(w string) string {
	// Punctuation a message puts after a URL ("… in repository
	// https://u:p@host: …") is not part of it.
	if t := strings.TrimRight(w, ":.!?"); t != w && t != "" {
		return word(t) + w[len(t):]
	}
	at := strings.LastIndexByte(w, '@')
	for at >= 0 && digestRE.MatchString(w[at+1:]) {
		at = strings.LastIndexByte(w[:at], '@')
	}
	if at < 0 {
		return w
	}
	rest := w[at+1:]
	start := 0
	if loc := schemeRE.FindStringIndex(w[:at]); loc != nil {
		start = loc[1]
	} else {
		// A reference: the host must be followed by a path, so that a
		// version constraint (ref@1.2.x) is not taken for a host.
		if !strings.Contains(rest, "/") {
			return w
		}
		if k := strings.IndexByte(w[:at], '='); k >= 0 && strings.HasPrefix(w, "-") {
			start = k + 1
		}
	}
	if !hostRE.MatchString(rest) || start >= at {
		return w
	}
	return w[:start] + Placeholder + w[at:]
}

// redacted is an error whose message had credentials removed; errors.Is
// and errors.As still see the original chain.
type redacted struct {
	msg string
	err error
}

func (e *redacted) Error() string { return e.msg }
func (e *redacted) Unwrap() error { return e.err }

// Error returns err with credentials removed from its message, keeping
// its chain for errors.Is, errors.As and exit codes. It returns err itself
// when there is nothing to remove.
func Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if r := String(msg); r != msg {
		return &redacted{msg: r, err: err}
	}
	return err
}

// Writer redacts what is written to it line by line before passing it on;
// a partial line is held until its newline, or until Flush.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer writing to w, for log handlers and other
// writers of messages that may quote references.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write implements io.Writer. It reports len(p) written once the
// complete lines of p are passed on.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	k := bytes.LastIndexByte(w.buf, '\n')
	if k < 0 {
		return len(p), nil
	}
	lines := w.buf[:k+1]
	_, err := io.WriteString(w.w, String(string(lines)))
	w.buf = append(w.buf[:0], w.buf[k+1:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush passes on a held partial line.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(w.w, String(string(w.buf)))
	w.buf = w.buf[:0]
	return err
}
