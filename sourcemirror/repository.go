package sourcemirror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/manifest"
)

// Registries opens sources at the locations a Table gives them. It is a
// format.Registries and a format.SourceOpener: format.Open, which
// resolution and every copy go through, opens a source through it as a
// Repository that reads from each location in turn, while the source
// keeps its name everywhere else.
type Registries struct {
	// Inner opens the registry repositories of the locations
	// (*client.Client).
	Inner format.Registries
	// Table maps sources to locations.
	Table *Table
}

var (
	_ format.Registries   = Registries{}
	_ format.SourceOpener = Registries{}
)

// Repository opens the first registry location of source: what reads a
// source's own registry API directly (its signatures) reads there. A
// source with no location (offline, no mirror) is an error.
func (r Registries) Repository(source string) (*remote.Repository, error) {
	locs := r.Table.Locations(source)
	if len(locs) == 0 {
		return nil, r.noLocation(source)
	}
	return r.Inner.Repository(locs[0])
}

// HTTPClient returns Inner's HTTP client, when it has one (see
// format.Open).
func (r Registries) HTTPClient() *http.Client {
	if c, ok := r.Inner.(interface{ HTTPClient() *http.Client }); ok {
		return c.HTTPClient()
	}
	return http.DefaultClient
}

// OpenSource opens source for reading: at each of its locations in turn
// (see Table.Locations), each through the format that owns it when it is
// not a registry (format.OpenMirror with Inner: a format whose artifacts
// name their repository builds them as source's).
func (r Registries) OpenSource(formats []format.Format, source string) (format.Repository, error) {
	locs := r.Table.Locations(source)
	if len(locs) == 0 {
		return nil, r.noLocation(source)
	}
	if len(locs) == 1 && locs[0] == source {
		return format.Open(r.Inner, formats, source)
	}
	return &Repository{source: source, locations: locs, table: r.Table,
		open: func(loc string) (format.Repository, error) { return format.OpenMirror(r.Inner, formats, source, loc) }}, nil
}

// ErrNoLocation is a source that offline resolution finds no mirror for;
// the error that wraps it names the source and the ferry.yaml key to map
// it with (a CLI adds its flag).
var ErrNoLocation = errors.New("offline, and no mirror serves it")

func (r Registries) noLocation(source string) error {
	return fmt.Errorf("%s: %w: map its registry or repository in ferry.yaml mirrors:", source, ErrNoLocation)
}

// Repository is one source read from its locations in order: every
// request goes to the first location that answers it, as containerd's
// resolver and fetcher go through a namespace's hosts and
// containers/image through a registry's mirrors. Content is addressed by
// digest, so a blob or manifest is the same wherever it is read; a tag or
// a tag list is the first location's that has it.
type Repository struct {
	source    string
	locations []string
	table     *Table
	open      func(location string) (format.Repository, error)

	mu    sync.Mutex
	repos map[string]format.Repository
}

var (
	_ format.Repository       = (*Repository)(nil)
	_ registry.ReferrerLister = (*Repository)(nil)
)

// repo opens location once.
func (r *Repository) repo(loc string) (format.Repository, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rr, ok := r.repos[loc]; ok {
		return rr, nil
	}
	rr, err := r.open(loc)
	if err != nil {
		return nil, err
	}
	if r.repos == nil {
		r.repos = map[string]format.Repository{}
	}
	r.repos[loc] = rr
	return rr, nil
}

// try calls fn on each location in order until one succeeds. The error,
// when all fail, is the last location's, naming the others'.
func (r *Repository) try(ctx context.Context, fn func(loc string, repo format.Repository) error) error {
	var others []string
	var last error
	for _, loc := range r.locations {
		if last != nil {
			others = append(others, last.Error())
		}
		if err := r.table.isDown(loc); err != nil {
			last = fmt.Errorf("%s cannot be reached: %w", loc, err)
			continue
		}
		repo, err := r.repo(loc)
		if err == nil {
			err = fn(loc, repo)
		}
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		if unreachable(err) {
			r.table.markDown(loc, err)
		}
		last = err
	}
	if len(others) == 0 {
		return last
	}
	return fmt.Errorf("%w (tried before: %s)", last, strings.Join(others, "; "))
}

// Resolve resolves reference (a tag or digest) at the first location that
// has it, and records that location as where the manifest was read.
func (r *Repository) Resolve(ctx context.Context, reference string) (ocispec.Descriptor, error) {
	var out ocispec.Descriptor
	err := r.try(ctx, func(loc string, repo format.Repository) error {
		d, err := repo.Resolve(ctx, reference)
		if err == nil {
			out = d
			r.table.record(r.source, d.Digest.String(), loc)
		}
		return err
	})
	return out, err
}

// FetchReference fetches the manifest reference names at the first
// location that has it.
func (r *Repository) FetchReference(ctx context.Context, reference string) (ocispec.Descriptor, io.ReadCloser, error) {
	var out ocispec.Descriptor
	var rc io.ReadCloser
	err := r.try(ctx, func(loc string, repo format.Repository) error {
		d, body, err := repo.FetchReference(ctx, reference)
		if err == nil {
			out, rc = d, body
			r.table.record(r.source, d.Digest.String(), loc)
		}
		return err
	})
	return out, rc, err
}

// Fetch fetches desc's content at the first location that has it.
func (r *Repository) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	var rc io.ReadCloser
	err := r.try(ctx, func(loc string, repo format.Repository) error {
		body, err := repo.Fetch(ctx, desc)
		if err == nil {
			rc = body
			if manifest.IsManifest(desc.MediaType) {
				r.table.record(r.source, desc.Digest.String(), loc)
			}
		}
		return err
	})
	return rc, err
}

// Exists reports whether any location has desc.
func (r *Repository) Exists(ctx context.Context, desc ocispec.Descriptor) (bool, error) {
	found := false
	err := r.try(ctx, func(_ string, repo format.Repository) error {
		ok, err := repo.Exists(ctx, desc)
		if err != nil {
			return err
		}
		if !ok {
			return errNotHere
		}
		found = true
		return nil
	})
	if errors.Is(err, errNotHere) {
		return false, nil
	}
	return found, err
}

var errNotHere = errors.New("not here")

// Tags lists the tags of the first location that lists them, in one call
// of fn.
func (r *Repository) Tags(ctx context.Context, last string, fn func(tags []string) error) error {
	var all []string
	err := r.try(ctx, func(_ string, repo format.Repository) error {
		var got []string
		if err := repo.Tags(ctx, last, func(tags []string) error {
			got = append(got, tags...)
			return nil
		}); err != nil {
			return err
		}
		all = got
		return nil
	})
	if err != nil {
		return err
	}
	return fn(all)
}

// Referrers lists desc's referrers at the first location that lists
// them.
func (r *Repository) Referrers(ctx context.Context, desc ocispec.Descriptor, artifactType string, fn func(referrers []ocispec.Descriptor) error) error {
	var all []ocispec.Descriptor
	err := r.try(ctx, func(_ string, repo format.Repository) error {
		rl, ok := repo.(registry.ReferrerLister)
		if !ok {
			return fmt.Errorf("%w: no referrers API", errNotHere)
		}
		var got []ocispec.Descriptor
		if err := rl.Referrers(ctx, desc, artifactType, func(refs []ocispec.Descriptor) error {
			got = append(got, refs...)
			return nil
		}); err != nil {
			return err
		}
		all = got
		return nil
	})
	if errors.Is(err, errNotHere) {
		// No location has a referrers API (a KUDO or chart repository
		// served over HTTP): nothing refers to its packages there, as
		// for the source itself, which is no ReferrerLister.
		return fn(nil)
	}
	if err != nil {
		return err
	}
	return fn(all)
}
