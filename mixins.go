package ferry

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// MixinFeedEnv names the environment variable that replaces the default
// mixin feed (mixin.DefaultFeedURL) for mixins no ferry.yaml entry gives a
// feed for: an internal copy of Porter's feed, or a test feed.
const MixinFeedEnv = "FERRY_MIXIN_FEED"

// DefaultMixinFeed returns $FERRY_MIXIN_FEED, else Porter's feed.
func DefaultMixinFeed() string {
	if f := strings.TrimSpace(os.Getenv(MixinFeedEnv)); f != "" {
		return f
	}
	return mixin.DefaultFeedURL
}

// MixinRequest is one demand for a mixin: a ferry.yaml or porter.yaml
// `mixins` entry, or a mixin a resolved bundle was built with.
type MixinRequest struct {
	// Name is the mixin name.
	Name string
	// Constraint is what selects the version: "" (latest), an exact feed
	// version, or a semver constraint.
	Constraint string
	// Feed is the feed URL the version is chosen from.
	Feed string
	// From says who asked: "ferry.yaml" or a bundle's label.
	From string
}

// MixinRequests collects the mixins to lock, deduplicated, in a stable
// order. The rules:
//
//   - every ferry.yaml (or porter.yaml) `mixins` entry is a request with its
//     own constraint;
//   - every mixin of every resolved bundle (`custom."sh.porter".mixins`) is
//     a request for exactly the version the bundle records, or for the
//     latest version when it records none (the resolver already warned);
//   - the feed of a request is the feed of the ferry.yaml entry of the same
//     name when one sets it, else DefaultMixinFeed(). Two entries of one
//     name that set different feeds are an error.
//
// Requests are not merged into one constraint: each chooses its version on
// its own (see LockMixins), so bundles that were built with different
// versions of one mixin each get theirs.
func MixinRequests(ms *mirrorset.MirrorSet, g *resolve.Graph) ([]MixinRequest, error) {
	feeds := map[string]string{}
	for _, m := range ms.Mixins {
		if err := mixin.CheckName(m.Name); err != nil {
			return nil, exitcode.BadInput("mixins: %q: %w", m.Name, err)
		}
		f := strings.TrimSpace(m.Feed)
		if f == "" {
			continue
		}
		if old, ok := feeds[m.Name]; ok && old != f {
			return nil, exitcode.BadInput("mixin %s is given two feeds, %s and %s: give one", m.Name, old, f)
		}
		feeds[m.Name] = f
	}
	def := DefaultMixinFeed()
	feedOf := func(name string) string {
		if f, ok := feeds[name]; ok {
			return f
		}
		return def
	}
	var out []MixinRequest
	seen := map[string]bool{}
	add := func(r MixinRequest) {
		key := r.Name + "\x00" + r.Constraint + "\x00" + r.Feed
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	for _, m := range ms.Mixins {
		add(MixinRequest{Name: m.Name, Constraint: strings.TrimSpace(m.Version), Feed: feedOf(m.Name), From: "ferry.yaml"})
	}
	if g != nil {
		for _, src := range g.Sources() {
			p := g.Packages[src]
			if p.Meta == nil {
				continue
			}
			for _, m := range p.Meta.Mixins {
				if err := mixin.CheckName(m.Name); err != nil {
					return nil, fmt.Errorf("%s: mixin %q: %w", p.Label(), m.Name, err)
				}
				add(MixinRequest{Name: m.Name, Constraint: m.Version, Feed: feedOf(m.Name), From: p.Label()})
			}
		}
	}
	return out, nil
}

// LockMixins resolves and downloads every mixin ms and the bundles of g
// ask for, and returns the lock entries.
//
// Each request (see MixinRequests) chooses the highest feed version that
// satisfies its constraint; "latest" or none means the highest
// non-prerelease version. A version locked in prev for the same name and
// feed is kept while it satisfies the request, unless update selects the
// mixin's name. Requests that choose the same version share one entry,
// whose `constraint` lists theirs, comma-separated ("latest" for none);
// requests that choose different versions give one entry per version, so
// the lock may hold several versions of one mixin.
//
// Every binary of every chosen version (restricted to ms.Platforms, plus
// the linux/amd64 runtime) is downloaded into a temporary directory,
// hashed on the way, and removed when LockMixins returns: nothing is
// written to the working directory. A binary of a version prev already
// locks must match it, else the error carries exitcode.Mismatch and names
// the file. Mirror locations in prev are kept for entries whose binaries
// did not change.
func (e *Env) LockMixins(ctx context.Context, ms *mirrorset.MirrorSet, g *resolve.Graph, prev *lock.Lock, update Update) ([]lock.Mixin, error) {
	reqs, err := MixinRequests(ms, g)
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	dir, err := e.mixinDir()
	if err != nil {
		return nil, err
	}

	hc := e.Client.HTTPClient()
	feeds := map[string]*mixin.Feed{}
	type group struct {
		name, version, feed string
		constraints         []string
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range reqs {
		f, ok := feeds[r.Feed]
		if !ok {
			if f, err = mixin.LoadFeed(ctx, hc, r.Feed, allowPlainHTTP); err != nil {
				return nil, fmt.Errorf("%s: mixin %s: %w", r.From, r.Name, err)
			}
			feeds[r.Feed] = f
		}
		version := ""
		if prev != nil && !update.Selects(r.Name) {
			version = keptVersion(prev, r)
		}
		if version == "" {
			v, err := f.Choose(r.Name, r.Constraint)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.From, err)
			}
			version = v.Version
		}
		key := r.Name + "@" + version
		gr, ok := groups[key]
		if !ok {
			gr = &group{name: r.Name, version: version, feed: r.Feed}
			groups[key] = gr
			order = append(order, key)
		}
		c := r.Constraint
		if c == "" {
			c = "latest"
		}
		if !contains(gr.constraints, c) {
			gr.constraints = append(gr.constraints, c)
		}
	}
	out := make([]lock.Mixin, 0, len(order))
	for _, key := range order {
		gr := groups[key]
		var old *lock.Mixin
		if prev != nil {
			old = prevMixin(prev, gr.name, gr.version)
		}
		sub, err := mixin.SafeJoin(dir, gr.name, gr.version)
		if err != nil {
			return nil, exitcode.With(exitcode.Usage, fmt.Errorf("mixin %s %s: %w", gr.name, gr.version, err))
		}
		// The version is already chosen: pass it as the constraint.
		l, err := mixin.Fetch(ctx, hc, feeds[gr.feed], gr.name, gr.version, ms.Platforms, old, sub)
		if err != nil {
			return nil, err
		}
		sort.Strings(gr.constraints)
		l.Constraint = strings.Join(gr.constraints, ", ")
		if old != nil && sameBinaries(old, l) {
			l.Mirror = old.Mirror
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Version < out[j].Version
	})
	return out, nil
}

// allowPlainHTTP lets mixin downloads use plain HTTP to any host: the
// registry client's transport still refuses hosts that are neither
// loopback nor named with --plain-http.
func allowPlainHTTP(string) bool { return true }

// keptVersion returns the highest version prev locks for r's mixin from
// r's feed that still satisfies r's constraint, or "".
func keptVersion(prev *lock.Lock, r MixinRequest) string {
	var best string
	var bestV *semver.Version
	for _, m := range prev.Mixins {
		if m.Name != r.Name || m.Feed != r.Feed || !satisfies(m.Version, r.Constraint) {
			continue
		}
		v, err := semver.NewVersion(m.Version)
		if best == "" || (err == nil && (bestV == nil || v.GreaterThan(bestV))) {
			best, bestV = m.Version, v
		}
	}
	return best
}

// satisfies reports whether a locked version meets a request's
// constraint, with the rules of mixin.Feed.Choose.
func satisfies(version, constraint string) bool {
	c := strings.TrimSpace(constraint)
	if c == version {
		return true
	}
	v, err := semver.NewVersion(version)
	if err != nil {
		return false
	}
	if c == "" || c == "latest" {
		return v.Prerelease() == ""
	}
	sc, err := semver.NewConstraint(c)
	return err == nil && sc.Check(v)
}

func prevMixin(l *lock.Lock, name, version string) *lock.Mixin {
	for i := range l.Mixins {
		if l.Mixins[i].Name == name && l.Mixins[i].Version == version {
			return &l.Mixins[i]
		}
	}
	return nil
}

func sameBinaries(a, b *lock.Mixin) bool {
	if len(a.Binaries) != len(b.Binaries) {
		return false
	}
	for k, x := range a.Binaries {
		if y, ok := b.Binaries[k]; !ok || x.Digest != y.Digest || x.Size != y.Size {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// MixinRepo returns the mirror repository of a mixin:
// HOST/PREFIX/porter-mixins/NAME.
func MixinRepo(to relocate.Mapping, name string) string {
	return to.String() + "/" + mixin.RepositoryDir + "/" + name
}

// MixinResult reports one mirrored mixin version.
type MixinResult struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Mirror is "REPO@DIGEST" of the artifact.
	Mirror   string `json:"mirror"`
	Binaries int    `json:"binaries"`
}

// MixinBatch holds the binaries of every mixin of a lock, downloaded and
// verified by FetchMixins, ready to push.
type MixinBatch struct {
	env  *Env
	lock *lock.Lock
	subs []string
}

// FetchMixins downloads every binary of every mixin of l again, from the
// URLs the lock records, into a temporary directory, and checks each
// against the lock: a binary whose digest or size differs fails closed
// (the error carries exitcode.Mismatch and names the file). Nothing is
// pushed yet, so a caller can fetch before it copies anything and push
// after. The binaries live in the run's download directory, which
// Env.Close removes.
func (e *Env) FetchMixins(ctx context.Context, l *lock.Lock) (*MixinBatch, error) {
	b := &MixinBatch{env: e, lock: l}
	if len(l.Mixins) == 0 {
		return b, nil
	}
	dir, err := e.mixinDir()
	if err != nil {
		return nil, err
	}
	hc := e.Client.HTTPClient()
	for i := range l.Mixins {
		m := &l.Mixins[i]
		sub, err := mixin.SafeJoin(dir, m.Name, m.Version)
		if err == nil {
			err = mixin.FetchLocked(ctx, hc, m, sub, allowPlainHTTP)
		} else {
			err = exitcode.With(exitcode.Usage, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err))
		}
		if err != nil {
			return nil, err
		}
		b.subs = append(b.subs, sub)
	}
	return b, nil
}

// Push pushes each mixin version as one OCI artifact to
// HOST/PREFIX/porter-mixins/NAME:VERSION and records REPO@DIGEST in the
// lock's mixins[].mirror once every push succeeded.
func (b *MixinBatch) Push(ctx context.Context, to relocate.Mapping) ([]MixinResult, error) {
	l := b.lock
	out := make([]MixinResult, 0, len(l.Mixins))
	mirrors := make([]string, len(l.Mixins))
	for i := range l.Mixins {
		m := &l.Mixins[i]
		repoName := MixinRepo(to, m.Name)
		repo, err := b.env.Client.Repository(repoName)
		if err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", m.Name, m.Version, err)
		}
		desc, err := mixin.Push(ctx, repo, m, b.subs[i])
		if err != nil {
			return nil, fmt.Errorf("mirroring mixin %s %s to %s: %w", m.Name, m.Version, repoName, err)
		}
		mirrors[i] = repoName + "@" + desc.Digest.String()
		out = append(out, MixinResult{Name: m.Name, Version: m.Version, Mirror: mirrors[i], Binaries: len(m.Binaries)})
	}
	for i := range l.Mixins {
		l.Mixins[i].Mirror = mirrors[i]
	}
	return out, nil
}
