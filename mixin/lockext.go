package mixin

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/resolve"
)

// Request is one demand for a mixin: a ferry.yaml (or porter.yaml)
// `mixins` entry, or a mixin a resolved bundle records.
type Request struct {
	// Name is the mixin name.
	Name string
	// Constraint selects the version: "" (latest), an exact feed version,
	// or a semver constraint.
	Constraint string
	// Feed is the Atom feed the version is chosen from, or, when Base is
	// set, the download location of Porter's `--url` layout
	// (FEED/VERSION/NAME-OS-ARCH[.exe]).
	Feed string
	// Base reports that Feed is a download location, not a feed.
	Base bool
	// From says who asked: "ferry.yaml" or a bundle's label.
	From string
	// Recorded lists what the asking bundles record of the binaries
	// (file name to digest), to check the downloads against.
	Recorded []Recorded
}

// Recorded is what one bundle records of a mixin version's binaries
// (bundle.json `custom."sh.porter".mixins.NAME.binaries`).
type Recorded struct {
	// From is the bundle's label.
	From string
	// In names where the digests are recorded, for messages; empty:
	// "the bundle".
	In string
	// Binaries maps a file name (NAME-OS-ARCH[.exe]) to its digest.
	Binaries map[string]string
}

// Requests collects the mixins to lock, deduplicated, in a stable order:
// first ferry.yaml's (or porter.yaml's) `mixins` entries, then the
// mixins of resolved bundles, by bundle source.
//
// A bundle's recorded mixin (`custom."sh.porter".mixins`, which Porter's
// "Mixin Versioning" proposal extends with `url`, `version` and
// `binaries`: getporter/proposals pep/002-mixin-versioning.md, "Build") is
// a request only when the user asks for it: ferry.yaml's `mixins` names
// the mixin, or `bundleMixins: true` (the --bundle-mixins flag) asks for
// every bundle's mixins. Otherwise a bundle's mixins are ignored and no
// feed is contacted for them. A bundle's request is for exactly the
// version it records, or the latest when it records none.
//
// The source of a bundle's request is, in order: the `url` the bundle
// records (the proposal: "the URL from which it was downloaded"); else
// the feed of the ferry.yaml entry of the same name when it sets one; else
// defaultFeed. A ferry.yaml entry's own request uses its feed, else
// defaultFeed. A source is read as an Atom feed when its path ends in
// .xml, or when the request is for a range; otherwise it is the download
// location Porter's `porter mixins install --url` takes
// (URL/VERSION/NAME-OS-ARCH[.exe]), for one exact version (see isBase). A
// bundle's `url` that is not a feed is used only for the exact version
// the bundle records. Whatever the source, the
// digests a bundle records must match what is downloaded (see
// Format.Lock).
func Requests(in *mirrorset.MirrorSet, g *resolve.Graph, defaultFeed string) ([]Request, error) {
	s, err := readSettings(in)
	if err != nil {
		return nil, err
	}
	reqs, _, err := requests(s, g, defaultFeed)
	return reqs, err
}

// requests returns the requests, and the names of the mixins bundles
// record that nobody asked to lock.
func requests(s *settings, g *resolve.Graph, defaultFeed string) ([]Request, []string, error) {
	feeds := map[string]string{}
	named := map[string]bool{}
	for _, e := range s.entries {
		named[e.Name] = true
		if f := strings.TrimSpace(e.Feed); f != "" {
			feeds[e.Name] = f
		}
	}
	var out []Request
	index := map[string]int{}
	add := func(r Request) {
		key := r.Name + "\x00" + r.Constraint + "\x00" + r.Feed
		if i, ok := index[key]; ok {
			out[i].Recorded = append(out[i].Recorded, r.Recorded...)
			return
		}
		index[key] = len(out)
		out = append(out, r)
	}
	for _, e := range s.entries {
		r := Request{Name: e.Name, Constraint: strings.TrimSpace(e.Version), Feed: defaultFeed, From: "ferry.yaml"}
		if f, ok := feeds[e.Name]; ok {
			r.Feed, r.Base = f, isBase(f, r.Constraint)
		}
		add(r)
	}
	if g == nil {
		return out, nil, nil
	}
	var skipped []string
	for _, src := range g.Sources() {
		p := g.Packages[src]
		if p == nil || p.Meta == nil {
			continue
		}
		for _, m := range p.Meta.Mixins {
			if !s.bundles && !named[m.Name] {
				if !slices.Contains(skipped, m.Name) {
					skipped = append(skipped, m.Name)
				}
				continue
			}
			if err := CheckName(m.Name); err != nil {
				return nil, nil, fmt.Errorf("%s: mixin %q: %w", p.Label(), m.Name, err)
			}
			r := Request{Name: m.Name, Constraint: strings.TrimSpace(m.Version), From: p.Label()}
			if len(m.Binaries) > 0 {
				r.Recorded = []Recorded{{From: p.Label(), Binaries: m.Binaries}}
			}
			u := strings.TrimSpace(m.URL)
			switch f, ok := feeds[m.Name]; {
			case u != "" && (isFeedURL(u) || isExact(r.Constraint)):
				r.Feed, r.Base = u, isBase(u, r.Constraint)
			case ok:
				r.Feed, r.Base = f, isBase(f, r.Constraint)
			default:
				r.Feed = defaultFeed
			}
			if u != "" && r.Feed == u {
				if err := checkFeedURL(u); err != nil {
					return nil, nil, fmt.Errorf("%s: mixin %s: url: %w", p.Label(), m.Name, err)
				}
			}
			add(r)
		}
	}
	sort.Strings(skipped)
	return out, skipped, nil
}

// isBase reports whether a request for constraint from the source u
// downloads from u in Porter's `--url` layout rather than reading u as a
// feed: u does not name an Atom feed (see isFeedURL), and constraint names
// one version, since a download location lists none to choose from. The
// proposal's `source` may be either ("https://example.com/feed.xml or
// https://github.com/getporter/terraform-mixins/downloads").
func isBase(u, constraint string) bool {
	return !isFeedURL(u) && isExact(constraint)
}

// isExact reports whether a constraint names one version ("v1.2.3")
// rather than a range, "latest" or nothing.
func isExact(c string) bool {
	if c == "" || c == "latest" || strings.ContainsAny(c, " <>=~^*|,") {
		return false
	}
	_, err := semver.StrictNewVersion(strings.TrimPrefix(c, "v"))
	return err == nil
}

// isFeedURL reports whether a recorded mixin url names an Atom feed
// (atom.xml) rather than a download location.
func isFeedURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	return strings.HasSuffix(strings.ToLower(u.Path), ".xml")
}

// Lock resolves and downloads every mixin in and the bundles of g ask for
// (see Requests) and writes them into l's `mixins` section.
//
// Each request chooses the highest feed version that satisfies its
// constraint; "latest" or none means the highest non-prerelease version.
// A version locked in prev for the same name and source is kept while it
// satisfies the request, unless run.Update selects the mixin's name.
// Requests that choose the same version share one entry, whose
// `constraint` lists theirs, comma-separated ("latest" for none), and
// whose source is the first request's; requests that choose different
// versions give one entry per version, so the lock may hold several
// versions of one mixin.
//
// Every binary of every chosen version (restricted to ferry.yaml's
// `platforms`, plus the linux/amd64 runtime) is downloaded into the run's
// download directory, hashed on the way: nothing is written to the working
// directory. A binary of a version prev already locks must match it, and
// a binary a requesting bundle records a digest for must match that
// digest; otherwise the error carries errkind.Mismatch and names the
// file (and the bundle). Mirror locations in prev are kept for entries
// whose binaries did not change.
func (f Format) Lock(ctx context.Context, run *ferry.Run, in *mirrorset.MirrorSet, g *resolve.Graph, l, prev *lock.Lock) error {
	s, err := readSettings(in)
	if err != nil {
		return err
	}
	reqs, skipped, err := requests(s, g, f.feed())
	if err != nil {
		return err
	}
	if len(skipped) > 0 && run != nil && run.Warn != nil {
		run.Warn(fmt.Sprintf("bundles record mixins %s, which are not locked: name them in ferry.yaml `%s`, or set `%s: true`",
			strings.Join(skipped, ", "), KeyMixins, KeyBundleMixins))
	}
	if len(reqs) == 0 {
		return SetLock(l, nil)
	}
	prevLocked, err := FromLock(prev)
	if err != nil {
		return fmt.Errorf("previous lock: %w", err)
	}
	dir, err := runDir(run)
	if err != nil {
		return err
	}
	ctx = progress.NewContext(ctx, run.Reporter) // the downloads' bars
	feeds, err := loadFeeds(ctx, run, reqs)
	if err != nil {
		return err
	}

	type group struct {
		name, version, feed string
		constraints         []string
		recorded            []Recorded
		porterLock          bool
	}
	groups := map[string]*group{}
	var order []string
	for _, r := range reqs {
		version := ""
		updating := run.Update != nil && run.Update(r.Name)
		// A porter.yaml's porter.lock.yaml comes first: Porter installs
		// what it locks (the Mixin Versioning proposal, "Porter
		// Lockfile").
		if pe, ok := porterLocked(s.porterLock, r); ok && !updating {
			version = pe.Version
		}
		if version == "" && prevLocked != nil && !updating {
			version = keptVersion(prevLocked, r)
		}
		if version == "" {
			v, err := feeds[r.Feed].Choose(r.Name, r.Constraint)
			if err != nil {
				return fmt.Errorf("%s: %w", r.From, err)
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
		if !slices.Contains(gr.constraints, c) {
			gr.constraints = append(gr.constraints, c)
		}
		gr.recorded = append(gr.recorded, r.Recorded...)
		if pe, ok := porterLocked(s.porterLock, r); ok && pe.Version == version && !gr.porterLock {
			gr.porterLock = true
			rec := Recorded{From: fmt.Sprintf("%s of bundle %s", s.porterLock.Path, s.porterLock.Bundle), In: PorterLockFile, Binaries: map[string]string{}}
			for f, b := range pe.Binaries {
				rec.Binaries[f] = b.Digest
			}
			gr.recorded = append(gr.recorded, rec)
		}
	}
	hc := run.Client.HTTPClient()
	out := make([]Locked, 0, len(order))
	for _, key := range order {
		gr := groups[key]
		old := findLocked(prevLocked, gr.name, gr.version)
		sub, err := SafeJoin(dir, gr.name, gr.version)
		if err != nil {
			return errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %s %s: %w", gr.name, gr.version, err))
		}
		// The version is already chosen: pass it as the constraint.
		locked, err := Fetch(ctx, hc, feeds[gr.feed], gr.name, gr.version, s.platforms, old, sub)
		if err != nil {
			return err
		}
		for _, rec := range gr.recorded {
			if err := checkRecorded(locked, rec); err != nil {
				return err
			}
		}
		sort.Strings(gr.constraints)
		locked.Constraint = strings.Join(gr.constraints, ", ")
		if old != nil && sameBinaries(old, locked) {
			locked.Mirror = old.Mirror
		}
		out = append(out, *locked)
	}
	return SetLock(l, out)
}

// loadFeeds loads every feed the requests name, once each, and builds an
// in-memory feed for every download location (Request.Base) from the
// versions and binaries the bundles record.
func loadFeeds(ctx context.Context, run *ferry.Run, reqs []Request) (map[string]*Feed, error) {
	feeds := map[string]*Feed{}
	hc := run.Client.HTTPClient()
	for _, r := range reqs {
		if r.Base {
			f, ok := feeds[r.Feed]
			if !ok {
				f = &Feed{URL: r.Feed, index: map[string]map[string]*Version{}, allowPlain: allowPlainHTTP}
				feeds[r.Feed] = f
			}
			if err := f.addBase(r); err != nil {
				return nil, err
			}
			continue
		}
		if _, ok := feeds[r.Feed]; ok {
			continue
		}
		f, err := LoadFeed(ctx, hc, r.Feed, allowPlainHTTP)
		if err != nil {
			return nil, fmt.Errorf("%s: mixin %s: %w", r.From, r.Name, err)
		}
		feeds[r.Feed] = f
	}
	return feeds, nil
}

// porterPlatforms are the platforms Porter's mixins are published for
// (porter.sh, "Distributing Mixins"), assumed for a download location
// whose bundle records no binaries.
var porterPlatforms = []string{"darwin/amd64", "linux/amd64", "windows/amd64"}

// addBase adds r's version to a download location's in-memory feed: the
// binaries the bundle records, and the linux/amd64 runtime, each at
// FEED/VERSION/FILE; when the bundle records none, Porter's platforms.
func (f *Feed) addBase(r Request) error {
	v := &Version{Mixin: r.Name, Version: r.Constraint}
	if old := f.index[r.Name][r.Constraint]; old != nil {
		v = old
	}
	files := map[string]bool{BinaryName(r.Name, RuntimeOS, RuntimeArch): true}
	for _, rec := range r.Recorded {
		for k := range rec.Binaries {
			if _, _, err := ParseBinaryName(r.Name, k); err != nil {
				return fmt.Errorf("%s: mixin %s: recorded binary: %w", rec.From, r.Name, err)
			}
			files[k] = true
		}
	}
	if len(r.Recorded) == 0 {
		for _, p := range porterPlatforms {
			goos, goarch, _ := strings.Cut(p, "/")
			files[BinaryName(r.Name, goos, goarch)] = true
		}
	}
	for _, have := range v.Files {
		delete(files, have.Name)
	}
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		goos, goarch, _ := ParseBinaryName(r.Name, k)
		u, err := url.JoinPath(r.Feed, r.Constraint, k)
		if err != nil {
			return errkind.Markf(errkind.BadInput, "%s: mixin %s: url %q: %w", r.From, r.Name, r.Feed, err)
		}
		v.Files = append(v.Files, File{Name: k, OS: goos, Arch: goarch, URL: u})
	}
	if f.index[r.Name] == nil {
		f.index[r.Name] = map[string]*Version{}
	}
	f.index[r.Name][r.Constraint] = v
	return nil
}

// checkRecorded fails closed when a downloaded binary differs from the
// digest a bundle records for it. Recorded binaries that were not
// downloaded (other platforms) are not checked.
func checkRecorded(l *Locked, rec Recorded) error {
	keys := make([]string, 0, len(rec.Binaries))
	for k := range rec.Binaries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		got, ok := l.Binaries[k]
		if !ok {
			continue
		}
		want := normalDigest(rec.Binaries[k])
		if got.Digest != want {
			in := rec.In
			if in == "" {
				in = "the bundle"
			}
			return errkind.Markf(errkind.Mismatch, "%s: mixin %s %s: binary %s is %s in %s, but %s downloads as %s",
				rec.From, l.Name, l.Version, k, want, in, got.URL, got.Digest)
		}
	}
	return nil
}

// normalDigest writes a recorded digest as "sha256:hex"; the proposal's
// examples give bare hex.
func normalDigest(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	if !strings.Contains(d, ":") {
		d = "sha256:" + d
	}
	return d
}

// allowPlainHTTP lets mixin downloads use plain HTTP to any host: the
// registry client's transport still refuses hosts that are neither
// loopback nor named with --plain-http.
func allowPlainHTTP(string) bool { return true }

// porterLocked returns pl's entry for r's mixin when r is a porter.yaml
// entry's own request (not a bundle's), its source is r's feed, and its
// version still satisfies r's constraint: a porter.lock.yaml made for
// another feed or range is stale, as a previous lock is (keptVersion).
func porterLocked(pl *PorterLockInput, r Request) (PorterLockMixin, bool) {
	if pl == nil || r.From != "ferry.yaml" {
		return PorterLockMixin{}, false
	}
	pe, ok := pl.Lock.Mixins[r.Name]
	if !ok || pe.Source != r.Feed || !satisfies(pe.Version, r.Constraint) {
		return PorterLockMixin{}, false
	}
	return pe, true
}

// keptVersion returns the highest version prev locks for r's mixin from
// r's source that still satisfies r's constraint, or "".
func keptVersion(prev []Locked, r Request) string {
	var best string
	var bestV *semver.Version
	for _, m := range prev {
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
// constraint, with the rules of Feed.Choose.
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

// findLocked returns the entry of ls for name and version, or nil.
func findLocked(ls []Locked, name, version string) *Locked {
	for i := range ls {
		if ls[i].Name == name && ls[i].Version == version {
			return &ls[i]
		}
	}
	return nil
}

func sameBinaries(a, b *Locked) bool {
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
