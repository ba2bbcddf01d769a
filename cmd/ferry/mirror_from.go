package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"syscall"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/trust"
)

// mirrorOrigin decides where `ferry mirror --to` reads each package from.
// With from (--from HOST[/PREFIX]) every package is read from
// from.Repo(source). Without it, every source registry is pinged first;
// the packages of a registry that cannot be reached (connection refused,
// DNS, timeout after the client's retries) are read from the mirror the
// lock records for them, with a warning. The copy is by the locked digest
// either way, so what the other mirror serves is checked as the source's
// content would be. nil means every package comes from its source.
//
// A signed lock records its mirror locations in its sidecar
// LOCK.mirror.yaml (see lock.ReadMirrors), read here too.
func mirrorOrigin(ctx context.Context, env *ferry.Env, l *lock.Lock, lockPath string, from *relocate.Mapping) (func(*lock.Package) string, error) {
	if from != nil {
		return func(p *lock.Package) string { return from.Repo(p.Source) }, nil
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
		if recorded[p.Source+"@"+p.Digest] != "" && !ociref.IsURLSource(p.Source) {
			host, _, _ := strings.Cut(p.Source, "/")
			hosts[host] = true
		}
	}
	down := map[string]bool{}
	for _, host := range sortedKeys(hosts) {
		err := ping(ctx, env.Client, host)
		if err == nil || !unreachable(err) {
			continue
		}
		down[host] = true
		warn([]string{fmt.Sprintf("%s cannot be reached (%v): its packages are copied from the mirror ferry.lock records", host, err)})
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

// ping checks that a registry answers.
func ping(ctx context.Context, c *client.Client, host string) error {
	reg, err := c.Registry(host)
	if err != nil {
		return err
	}
	return reg.Ping(ctx)
}

// unreachable reports whether err says a registry or feed could not be
// reached at all (connection refused, DNS, a network error or timeout once
// the client's retries are spent), rather than that it answered with an
// error: a 5xx or 401 is the source speaking, not the gap.
func unreachable(err error) bool {
	var dns *net.DNSError
	var op *net.OpError
	var to *client.TimeoutError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &dns) || errors.As(err, &op) || errors.As(err, &to)
}

// checkTrustAt checks l's packages against pol, as env.CheckTrust does,
// reading each package's signatures where it is copied from (see
// mirrorOrigin): a mirror holds the signatures ferry copied into it.
func checkTrustAt(ctx context.Context, env *ferry.Env, pol *trust.Policy, l *lock.Lock, origin func(*lock.Package) string) error {
	if origin == nil {
		return env.CheckTrust(ctx, pol, l, true)
	}
	names := map[string]string{}
	for _, p := range l.Resolved() {
		names[p.Source] = origin(p)
	}
	return pol.Apply(ctx, l, originRepos{c: env.Client, names: names}, env.Concurrency, true)
}

// originRepos opens, for a source repository, the repository its packages
// are copied from.
type originRepos struct {
	c     *client.Client
	names map[string]string
}

// Repository opens source's origin repository.
func (o originRepos) Repository(source string) (*remote.Repository, error) {
	if n, ok := o.names[source]; ok {
		source = n
	}
	return o.c.Repository(source)
}

// promoteMixins copies every mixin of l from a mirror to the mixin
// repositories of to, without the feed: each artifact is read from
// from's HOST/PREFIX/porter-mixins/NAME (or, without from, the mirror the
// lock records for it) by its recorded digest, every binary is checked
// against the lock (digest and size, see mixin.Pull), and the artifact is
// pushed again and recorded in l's mixins[].mirror.
func promoteMixins(ctx context.Context, env *ferry.Env, l *lock.Lock, from *relocate.Mapping, to relocate.Mapping) ([]ferry.Moved, error) {
	locked, err := mixin.FromLock(l)
	if err != nil || len(locked) == 0 {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ferry-mixins-")
	if err != nil {
		return nil, fmt.Errorf("mixins: %w", err)
	}
	defer os.RemoveAll(dir)
	out := make([]ferry.Moved, 0, len(locked))
	for i := range locked {
		m := &locked[i]
		what := "mixin " + m.Name + " " + m.Version
		srcName, ref, ok := strings.Cut(m.Mirror, "@")
		if !ok {
			return nil, exitcode.BadInput("%s: ferry.lock records no mirror to copy it from (mirror: %q)", what, m.Mirror)
		}
		if from != nil {
			srcName = mixin.Repo(*from, m.Name)
		}
		src, err := env.Client.Repository(srcName)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		sub := fmt.Sprintf("%s/%d", dir, i)
		if err := mixin.Pull(ctx, src, ref, m, sub); err != nil {
			return nil, fmt.Errorf("copying %s from %s: %w", what, srcName, err)
		}
		dstName := mixin.Repo(to, m.Name)
		dst, err := env.Client.Repository(dstName)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		desc, err := mixin.Push(ctx, dst, m, sub)
		if err != nil {
			return nil, fmt.Errorf("mirroring %s to %s: %w", what, dstName, err)
		}
		m.Mirror = dstName + "@" + desc.Digest.String()
		out = append(out, ferry.Moved{Format: "mixin", Name: m.Name, Version: m.Version, Mirror: m.Mirror, Files: len(m.Binaries)})
	}
	if err := mixin.SetLock(l, locked); err != nil {
		return nil, err
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mixinsMirrored reports whether l locks mixins and records a mirror for
// every one of them.
func mixinsMirrored(l *lock.Lock) bool {
	locked, err := mixin.FromLock(l)
	if err != nil || len(locked) == 0 {
		return false
	}
	for _, m := range locked {
		if !strings.Contains(m.Mirror, "@") {
			return false
		}
	}
	return true
}
