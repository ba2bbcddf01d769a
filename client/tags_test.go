package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestListTags pages through a tag list and stops on one that does not
// end: a next link pointing back to its own page, or more pages than
// MaxTagPages.
func TestListTags(t *testing.T) {
	ctx := context.Background()
	var selfLink atomic.Bool
	reg := registrytest.New(t, registrytest.WithWrap(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if selfLink.Load() && strings.HasSuffix(r.URL.Path, "/tags/list") {
				w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"next\"", r.URL.RequestURI()))
			}
			next.ServeHTTP(w, r)
		})
	}))
	c := registrytest.Client(t)
	repo := registrytest.Repository(t, c, reg.Host+"/t/app")
	desc := pushManifest(t, repo, []byte("tags"))
	var want []string
	for i := range 7 {
		tag := fmt.Sprintf("v1.0.%d", i)
		if err := repo.Tag(ctx, desc, tag); err != nil {
			t.Fatal(err)
		}
		want = append(want, tag)
	}
	tests := []struct {
		name     string
		pageSize int
		maxPages int
		selfLink bool
		loop     bool
	}{
		{name: "one page", pageSize: 1000},
		{name: "pages of 2", pageSize: 2},
		{name: "next link points to itself", pageSize: 2, selfLink: true, loop: true},
		{name: "more pages than MaxTagPages", pageSize: 2, maxPages: 3, loop: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			selfLink.Store(tt.selfLink)
			defer selfLink.Store(false)
			if tt.maxPages > 0 {
				defer func(n int) { client.MaxTagPages = n }(client.MaxTagPages)
				client.MaxTagPages = tt.maxPages
			}
			reg.Reset()
			// A client of its own: a client keeps the tag lists it
			// read (readcache.go), and each case changes the answers.
			repo := registrytest.Repository(t, registrytest.Client(t), reg.Host+"/t/app")
			repo.TagListPageSize = tt.pageSize
			got, err := client.ListTags(ctx, repo)
			if tt.loop {
				if !errors.Is(err, client.ErrTagListLoop) {
					t.Fatalf("ListTags: %v, want ErrTagListLoop", err)
				}
				if n := len(reg.Requests()); n > 10 {
					t.Errorf("%d requests before giving up", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("tags %v, want %v", got, want)
			}
		})
	}
}
