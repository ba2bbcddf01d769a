package resolve

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/ociref"
)

// Tag selections. A root may name a selection of its repository's tags
// instead of one tag (ferry.yaml's `images:` entries with ranges, regular
// expressions and "newest N", as `skopeo sync` and regsync select tags):
// Resolve lists the tags once, before the first round, and every tag the
// selection keeps becomes a root of its own, locked by its digest. A
// later resolution with an earlier lock keeps the tags the selection
// locked (those whose package records the selection's Ref, Locked.Ref)
// that it still accepts, as a range keeps its locked version; where
// Options.Update selects the source, or none of those tags is accepted,
// the tags are selected again from the repository.

// TagSelection chooses tags of one repository. A tag is kept when it
// satisfies one of Ranges (when there are any), matches one of Match (when
// there are any) and matches none of Exclude; Newest, when positive, then
// keeps the newest Newest of them.
type TagSelection struct {
	// Ranges are semver constraints (Masterminds syntax); a tag that is
	// not a full semantic version (ParseTag) satisfies none. Prereleases
	// only when a range names one.
	Ranges []string
	// Match are regular expressions (Go's RE2 syntax, as skopeo sync and
	// regsync use) a tag must match one of, unanchored as written.
	Match []string
	// Exclude are regular expressions no kept tag matches.
	Exclude []string
	// Newest keeps the newest N tags that matched: semantic versions by
	// version, highest first, then the other tags in reverse name order.
	Newest int
}

// Check reports a range or regular expression that does not parse.
func (s *TagSelection) Check() error {
	for _, r := range s.Ranges {
		if _, err := semver.NewConstraint(strings.TrimSpace(r)); err != nil {
			return fmt.Errorf("version range %q: %w", r, err)
		}
	}
	for _, list := range [][]string{s.Match, s.Exclude} {
		for _, m := range list {
			if _, err := regexp.Compile(m); err != nil {
				return fmt.Errorf("regular expression %q: %w", m, err)
			}
		}
	}
	if s.Newest < 0 {
		return fmt.Errorf("newest: %d is negative", s.Newest)
	}
	return nil
}

// Select returns the tags of tags the selection keeps, newest first.
func (s *TagSelection) Select(tags []string) ([]string, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	var ranges []*semver.Constraints
	for _, r := range s.Ranges {
		c, _ := semver.NewConstraint(strings.TrimSpace(r))
		ranges = append(ranges, c)
	}
	compile := func(list []string) []*regexp.Regexp {
		var out []*regexp.Regexp
		for _, m := range list {
			out = append(out, regexp.MustCompile(m))
		}
		return out
	}
	match, exclude := compile(s.Match), compile(s.Exclude)
	anyMatch := func(res []*regexp.Regexp, tag string) bool {
		for _, re := range res {
			if re.MatchString(tag) {
				return true
			}
		}
		return false
	}
	var kept []string
	for _, t := range tags {
		if len(ranges) > 0 {
			v := ParseTag(t)
			ok := false
			for _, c := range ranges {
				if v != nil && c.Check(v) {
					ok = true
					break
				}
			}
			if !ok {
				continue
			}
		}
		if len(match) > 0 && !anyMatch(match, t) {
			continue
		}
		if anyMatch(exclude, t) {
			continue
		}
		kept = append(kept, t)
	}
	kept = newestFirst(kept)
	if s.Newest > 0 && len(kept) > s.Newest {
		kept = kept[:s.Newest]
	}
	return kept, nil
}

// String describes the selection in messages.
func (s *TagSelection) String() string {
	var parts []string
	if len(s.Ranges) > 0 {
		parts = append(parts, "tags "+strings.Join(quoteAll(s.Ranges), " or "))
	}
	if len(s.Match) > 0 {
		parts = append(parts, "matching "+strings.Join(quoteAll(s.Match), " or "))
	}
	if len(s.Exclude) > 0 {
		parts = append(parts, "not matching "+strings.Join(quoteAll(s.Exclude), " nor "))
	}
	if s.Newest > 0 {
		parts = append(parts, fmt.Sprintf("the newest %d", s.Newest))
	}
	if len(parts) == 0 {
		return "every tag"
	}
	return strings.Join(parts, ", ")
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// newestFirst orders tags newest first: semantic versions by version,
// highest first, then the other tags in reverse name order (date stamps
// and build numbers sort that way).
func newestFirst(tags []string) []string {
	out := append([]string(nil), tags...)
	sort.SliceStable(out, func(i, j int) bool {
		vi, vj := ParseTag(out[i]), ParseTag(out[j])
		switch {
		case vi != nil && vj != nil:
			if c := vi.Compare(vj); c != 0 {
				return c > 0
			}
			return out[i] > out[j]
		case vi != nil:
			return true
		case vj != nil:
			return false
		}
		return out[i] > out[j]
	})
	return out
}

// NoTagSelectedError reports a selection that keeps no tag of its
// repository.
type NoTagSelectedError struct {
	// Source is the repository, HOST/PATH.
	Source string
	// Selection is the selection, as its String gives it.
	Selection string
	// Tags are every tag of the repository.
	Tags []string
}

func (e *NoTagSelectedError) Error() string {
	sorted := sortedTags(e.Tags)
	list := "it has no tags"
	switch {
	case len(sorted) > maxNearestTags:
		list = fmt.Sprintf("%d tags, the last of them: %s", len(sorted), strings.Join(lastVersions(sorted, maxNearestTags), " "))
	case len(sorted) > 0:
		list = "tags: " + strings.Join(sorted, " ")
	}
	return fmt.Sprintf("%s: no tag is selected by %s (%s)", e.Source, e.Selection, list)
}

// selectTags replaces every root with a Select by a root per tag it
// keeps (see TagSelection), in order, each once.
func (r *resolver) selectTags(ctx context.Context, roots []Root) ([]Root, error) {
	var out []Root
	seen := map[Root]bool{}
	add := func(root Root) {
		if !seen[root] {
			seen[root] = true
			out = append(out, root)
		}
	}
	for _, root := range roots {
		if root.Select == nil {
			add(root)
			continue
		}
		ref, err := ociref.Parse(root.Ref)
		if err != nil {
			return nil, badInput(err)
		}
		if ref.Tag != "" || ref.Digest != "" || root.Constraint != "" {
			return nil, badInput(fmt.Errorf("%s: a tag selection names a repository, without tag, digest or version", root.Ref))
		}
		src := ref.Repo()
		if to, ok := r.opts.Replace[src]; ok {
			src = to
		}
		var tags []string
		if r.opts.Update == nil || !r.opts.Update(src) {
			var locked []string
			for _, l := range r.opts.Locked[src] {
				if l.Digest != "" && l.Ref == root.Ref {
					locked = append(locked, l.Version)
				}
			}
			if tags, err = root.Select.Select(locked); err != nil {
				return nil, badInput(fmt.Errorf("%s: %w", root.Ref, err))
			}
		}
		if len(tags) == 0 {
			all, err := r.listTags(ctx, src)
			if err != nil {
				return nil, err
			}
			if tags, err = root.Select.Select(all); err != nil {
				return nil, badInput(fmt.Errorf("%s: %w", root.Ref, err))
			}
			if len(tags) == 0 {
				return nil, &NoTagSelectedError{Source: src, Selection: root.Select.String(), Tags: all}
			}
		}
		r.mu.Lock()
		for _, t := range tags {
			r.selected[src+"@"+t] = true
		}
		r.mu.Unlock()
		for _, t := range tags {
			add(Root{Ref: ref.Repo() + ":" + t, Format: root.Format, Kind: root.Kind, Platform: root.Platform, selected: root.Ref})
		}
	}
	return out, nil
}
