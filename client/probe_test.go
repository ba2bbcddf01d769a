package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/quirkproxy"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestProbePush asks repositories whether they take pushes: one that
// exists answers with an upload session, which the probe cancels (two
// requests, nothing left); one that must be created first is a
// RepositoryRefusedError (404 NAME_UNKNOWN) or a refusal that
// IsRepositoryRefused tells (403).
func TestProbePush(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	tests := []struct {
		name    string
		opts    quirkproxy.Options
		create  bool
		refused bool
		missing bool
	}{
		{name: "created", opts: quirkproxy.Options{MustCreate: true}, create: true},
		{name: "registry creating on push", opts: quirkproxy.Options{}},
		{name: "404 NAME_UNKNOWN", opts: quirkproxy.Options{MustCreate: true}, refused: true, missing: true},
		{name: "403", opts: quirkproxy.Options{MustCreate: true, Forbidden: true}, refused: true},
		{name: "too deep", opts: quirkproxy.Options{MaxDepth: 2}, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := quirkproxy.New(tt.opts)
			var mu sync.Mutex
			var reqs []string
			reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
				return q.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.Contains(r.URL.Path, "/blobs/uploads/") {
						mu.Lock()
						reqs = append(reqs, r.Method)
						mu.Unlock()
					}
					next.ServeHTTP(w, r)
				}))
			}))
			if tt.create {
				q.Create("m/a/b")
			}
			repo := registrytest.Repository(t, c, reg.Host+"/m/a/b")
			err := client.ProbePush(ctx, repo)
			if got := client.IsRepositoryRefused(err); got != tt.refused {
				t.Fatalf("refused %v, want %v: %v", got, tt.refused, err)
			}
			var re *client.RepositoryRefusedError
			if tt.missing && (!errors.As(err, &re) || !re.Missing()) {
				t.Errorf("not a missing repository: %v", err)
			}
			if !tt.refused {
				if strings.Join(reqs, " ") != "POST DELETE" {
					t.Errorf("requests reaching the registry %v, want POST DELETE", reqs)
				}
				// Nothing was written: the repository holds no tag.
				if tags, err := client.ListTags(ctx, repo); err == nil && len(tags) > 0 {
					t.Errorf("tags %v after a probe", tags)
				}
			}
		})
	}
}
