package client

import (
	"context"
	"errors"
	"fmt"

	"oras.land/oras-go/v2/registry"
)

// Bounds of ListTags: a tag list longer than this is refused rather than
// read for ever.
var (
	// MaxTagPages is the most pages ListTags reads.
	MaxTagPages = 10_000
	// MaxTags is the most tags ListTags returns.
	MaxTags = 1_000_000
)

// ErrTagListLoop is returned (wrapped) when a registry's tag list does not
// end: a next page repeats the last tag of the page before (a Link that
// points back to itself) or follows an empty page, or the list exceeds MaxTagPages or MaxTags.
var ErrTagListLoop = errors.New("tag list does not end")

// ListTags returns all tags of repo, following the registry's next-page
// links (oras-go's Repository.Tags), and stops with an error wrapping
// ErrTagListLoop when the pages do not end.
func ListTags(ctx context.Context, repo registry.TagLister) ([]string, error) {
	var (
		tags  []string
		pages int
		last  string
		empty bool
	)
	err := repo.Tags(ctx, "", func(page []string) error {
		pages++
		if pages > MaxTagPages {
			return fmt.Errorf("%w: more than %d pages", ErrTagListLoop, MaxTagPages)
		}
		if pages > 1 && empty {
			return fmt.Errorf("%w: page %d follows an empty page", ErrTagListLoop, pages)
		}
		empty = len(page) == 0
		if len(page) > 0 {
			if pages > 1 && page[len(page)-1] == last {
				return fmt.Errorf("%w: page %d repeats the page before (its next link points back)", ErrTagListLoop, pages)
			}
			last = page[len(page)-1]
		}
		if len(tags)+len(page) > MaxTags {
			return fmt.Errorf("%w: more than %d tags", ErrTagListLoop, MaxTags)
		}
		tags = append(tags, page...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tags, nil
}
