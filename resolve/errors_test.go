package resolve

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"oras.land/oras-go/v2/errdef"
)

// TestNearestTags: every tag when there are few; else those around where a
// version would sort, or those closest in spelling.
func TestNearestTags(t *testing.T) {
	many := []string{"v1.0.0", "v1.1.0", "v1.2.0", "v1.3.0", "v1.4.0", "v2.0.0", "v2.1.0", "v3.0.0", "latest", "edge"}
	tests := []struct {
		name string
		tag  string
		tags []string
		n    int
		want []string
	}{
		{"few: all, in version order", "v9", []string{"v1.1.0", "v1.0.0"}, 8, []string{"v1.0.0", "v1.1.0"}},
		{"a version between", "v2.0.5", many, 3, []string{"v2.0.0", "v2.1.0", "v3.0.0"}},
		{"a version past the last", "v9.9.9", many, 3, []string{"v3.0.0", "edge", "latest"}},
		{"a version before the first", "v0.1.0", many, 2, []string{"v1.0.0", "v1.1.0"}},
		{"a misspelt name", "lates", many, 1, []string{"latest"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearestTags(tt.tag, tt.tags, tt.n); !slices.Equal(got, tt.want) {
				t.Errorf("NearestTags(%q, n=%d) = %q, want %q", tt.tag, tt.n, got, tt.want)
			}
		})
	}
}

// TestTagNotFoundError: said once, with the tags, and still ErrNotFound.
func TestTagNotFoundError(t *testing.T) {
	tests := []struct {
		name string
		err  *TagNotFoundError
		want string
	}{
		{"no tags", &TagNotFoundError{Source: "r.io/app", Tag: "v1"}, "r.io/app:v1: tag v1 not found: the repository has no tags"},
		{"few tags", &TagNotFoundError{Source: "r.io/app", Tag: "v9", Tags: []string{"v1.1.0", "v1.0.0"}}, "r.io/app:v9: tag v9 not found (tags: v1.0.0 v1.1.0)"},
		{"many tags", &TagNotFoundError{Source: "r.io/app", Tag: "v1.0.5", Tags: []string{"v1.0.0", "v1.0.1", "v1.0.2", "v1.0.3", "v1.0.4", "v1.0.6", "v1.0.7", "v1.0.8", "v1.0.9", "v1.1.0"}},
			"r.io/app:v1.0.5: tag v1.0.5 not found (nearest of its 10 tags: v1.0.1 v1.0.2 v1.0.3 v1.0.4 v1.0.6 v1.0.7 v1.0.8 v1.0.9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := tt.err.Error()
			if msg != tt.want {
				t.Errorf("Error() = %q\nwant      %q", msg, tt.want)
			}
			if strings.Count(msg, "not found") != 1 {
				t.Errorf("%q says not found more than once", msg)
			}
			if !errors.Is(tt.err, errdef.ErrNotFound) {
				t.Error("not errdef.ErrNotFound")
			}
		})
	}
}
