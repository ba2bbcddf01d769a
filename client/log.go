package client

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/ferryhq/ferry/redact"
)

// logTransport logs every HTTP request at debug level: method, scheme,
// host, path, status and duration. It never logs headers, query strings,
// bodies or URL userinfo, so no credential or token reaches the log.
type logTransport struct {
	next http.RoundTripper
	log  *slog.Logger
}

func (t *logTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !t.log.Enabled(req.Context(), slog.LevelDebug) {
		return t.next.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	attrs := []slog.Attr{
		slog.String("method", req.Method),
		slog.String("url", req.URL.Scheme+"://"+req.URL.Host+req.URL.EscapedPath()),
		slog.Duration("took", time.Since(start).Round(time.Millisecond)),
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", redact.Error(err).Error()))
	} else {
		attrs = append(attrs, slog.Int("status", resp.StatusCode))
		if c := challengeScheme(resp); c != "" {
			attrs = append(attrs, slog.String("challenge", c))
		}
	}
	t.log.LogAttrs(context.Background(), slog.LevelDebug, "registry request", attrs...)
	return resp, err
}

// challengeScheme returns the auth scheme a 401 asks for ("Basic",
// "Bearer"), without its parameters.
func challengeScheme(resp *http.Response) string {
	if resp.StatusCode != http.StatusUnauthorized {
		return ""
	}
	h := resp.Header.Get("WWW-Authenticate")
	for i, r := range h {
		if r == ' ' {
			return h[:i]
		}
	}
	return h
}
