package ferry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"syscall"

	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/sourcemirror"
	"github.com/ferryhq/ferry/trust"
)

// Origin decides where `ferry mirror --to` reads each package of l from.
// With from (--from HOST[/PREFIX]) every package is read from
// from.Repo(source). Without it, every source registry is pinged first;
// the packages of a registry that cannot be reached (connection refused,
// DNS, timeout after the client's retries) are read from the mirror the
// lock records for them, with a warning. The copy is by the locked digest
// either way, so what the other mirror serves is checked as the source's
// content would be. nil means every package comes from its source.
//
// A signed lock records its mirror locations in its sidecar
// LOCK.mirror.yaml (see lock.ReadMirrors), read from beside lockPath.
func (e *Env) Origin(ctx context.Context, l *lock.Lock, lockPath string, from *relocate.Mapping) (func(*lock.Package) string, error) {
	if from != nil {
		return func(p *lock.Package) string { return from.Repo(p.Source) }, nil
	}
	_, table, err := e.sources(nil)
	if err != nil {
		return nil, err
	}
	if table.Offline() {
		return nil, nil // no source is read: Env.Sources reads their mirrors
	}
	recorded := map[string]string{}
	if side, err := lock.ReadMirrors(lockPath, l); err == nil && side != nil {
		for _, p := range side.Packages {
			recorded[p.Source+"@"+p.Digest] = p.Mirror
		}
	}
	hosts := map[string]bool{}
	for _, p := range l.Resolved() {
		if p.Mirror != "" {
			recorded[p.Source+"@"+p.Digest] = p.Mirror
		}
		// A source outside any registry (a chart in a classic Helm
		// repository) has no registry to ping: it is read from its
		// repository, or with --from from the other mirror.
		// A source with mirrors is read from them first (Env.Sources).
		if recorded[p.Source+"@"+p.Digest] != "" && !ociref.IsURLSource(p.Source) && !mirrored(table, p.Source) {
			host, _, _ := strings.Cut(p.Source, "/")
			hosts[host] = true
		}
	}
	down := map[string]bool{}
	for _, host := range slices.Sorted(maps.Keys(hosts)) {
		err := ping(ctx, e.Client, host)
		if err == nil || !Unreachable(err) {
			continue
		}
		down[host] = true
		e.warn(fmt.Sprintf("%s cannot be reached (%v): its packages are copied from the mirror ferry.lock records", host, err))
	}
	if len(down) == 0 {
		return nil, nil
	}
	return func(p *lock.Package) string {
		if host, _, _ := strings.Cut(p.Source, "/"); down[host] {
			if m := recorded[p.Source+"@"+p.Digest]; m != "" {
				return m
			}
		}
		return p.Source
	}, nil
}

// mirrored reports whether table reads source from a mirror first.
func mirrored(table *sourcemirror.Table, source string) bool {
	locs := table.Locations(source)
	return len(locs) > 0 && locs[0] != source
}

// ping checks that a registry answers.
func ping(ctx context.Context, c *client.Client, host string) error {
	reg, err := c.Registry(host)
	if err != nil {
		return err
	}
	return reg.Ping(ctx)
}

// Unreachable reports whether err says a registry or feed could not be
// reached at all (connection refused, DNS, a network error or timeout once
// the client's retries are spent), rather than that it answered with an
// error: a 5xx or 401 is the source speaking, not the gap.
func Unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var to *client.TimeoutError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || errors.As(err, &op) || errors.As(err, &to)
}

// CheckTrustAt checks l's packages against pol, as CheckTrust does for a
// mirror run, reading each package's signatures where origin (see Origin;
// nil: the source) copies it from: a mirror holds the signatures ferry
// copied into it. It returns the signatures a rule verified that l did
// not record and that were added to it (see trust.Policy.Apply).
func (e *Env) CheckTrustAt(ctx context.Context, pol *trust.Policy, l *lock.Lock, origin func(*lock.Package) string) ([]trust.Unrecorded, error) {
	if origin == nil {
		// Read through the source mirrors, as CheckTrust reads.
		regs, _, err := e.sources(nil)
		if err != nil {
			return nil, err
		}
		return pol.Apply(ctx, l, trustSources{Registries: regs, formats: e.Formats}, e.Concurrency, true)
	}
	names := map[string]string{}
	for _, p := range l.Resolved() {
		names[p.Source] = origin(p)
	}
	return pol.Apply(ctx, l, originRepos{c: e.Client, names: names, formats: e.Formats}, e.Concurrency, true)
}

// originRepos opens, for a source repository, the repository its packages
// are copied from.
type originRepos struct {
	c       *client.Client
	names   map[string]string
	formats []format.Format
}

// OpenSource opens what a package of source outside any registry is
// copied from, for the trust rules that read its content (a Helm chart's
// provenance): its origin when that is a registry repository, else the
// source through the format that owns it (trust.SourceOpener).
func (o originRepos) OpenSource(source string) (content.Fetcher, error) {
	if n, ok := o.names[source]; ok && n != source && !ociref.IsURLSource(n) {
		return o.c.Repository(n)
	}
	return format.Open(o.c, o.formats, source)
}

// Repository opens source's origin repository.
func (o originRepos) Repository(source string) (*remote.Repository, error) {
	if n, ok := o.names[source]; ok {
		source = n
	}
	return o.c.Repository(source)
}
