package lock

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
)

// Operations a Change reports.
const (
	// OpReplaced is a digest change under an unchanged version: the
	// content behind a version was swapped (a re-published or moved tag,
	// a re-uploaded feed binary). Legitimate releases change the version;
	// this category is reported first, and loudly.
	OpReplaced = "replaced"
	// OpRollback is a version moved up whose digest stayed: the newer
	// version is the release the older one was (an older release moved
	// under a newer tag). Reported with OpReplaced, first and loudly.
	OpRollback = "rollback"
	// OpChanged is a change of version (and usually of digest), or of the
	// digest of a package locked without a version (a digest pin).
	OpChanged = "changed"
	// OpAdded is an entry only the new lock holds.
	OpAdded = "added"
	// OpRemoved is an entry only the old lock holds.
	OpRemoved = "removed"
)

// Change is one difference between two locks.
type Change struct {
	// Op is OpReplaced, OpRollback, OpChanged, OpAdded or OpRemoved.
	Op string `json:"op"`
	// Kind is "package", "tag" or "mixin". A "tag" change is a tag of a
	// package's digest added or removed (lock.Package.Tags) while the
	// package stays: Name is the package's source, the versions hold the
	// tag, the digests what it points at.
	Kind string `json:"kind"`
	// Name is a package's source or a mixin's name.
	Name       string `json:"name"`
	OldVersion string `json:"oldVersion,omitempty"`
	NewVersion string `json:"newVersion,omitempty"`
	OldDigest  string `json:"oldDigest,omitempty"`
	NewDigest  string `json:"newDigest,omitempty"`
}

// MarshalJSON writes the change with `source`, the name every other
// command's JSON gives a package (mirror, install, resolve, verify), beside
// `name`, kept for one release for the scripts that read it.
func (c Change) MarshalJSON() ([]byte, error) {
	type plain Change
	return json.Marshal(struct {
		plain
		Source string `json:"source"`
	}{plain(c), c.Name})
}

func (c Change) String() string {
	switch c.Op {
	case OpAdded:
		return fmt.Sprintf("+ %s %s %s %s", c.Kind, c.Name, c.NewVersion, c.NewDigest)
	case OpRemoved:
		return fmt.Sprintf("- %s %s %s %s", c.Kind, c.Name, c.OldVersion, c.OldDigest)
	case OpRollback:
		return fmt.Sprintf("! ROLLBACK %s %s %s -> %s: the newer version is the same digest as the older (%s): an older release under a newer tag", c.Kind, c.Name, c.OldVersion, c.NewVersion, c.NewDigest)
	case OpReplaced:
		return fmt.Sprintf("! REPLACED %s %s %s: digest changed under an unchanged version (%s -> %s)", c.Kind, c.Name, c.NewVersion, c.OldDigest, c.NewDigest)
	}
	return fmt.Sprintf("~ %s %s %s -> %s (%s -> %s)", c.Kind, c.Name, c.OldVersion, c.NewVersion, c.OldDigest, c.NewDigest)
}

// versionBelow reports whether a and b are semantic versions (a leading
// "v" allowed, "_" for "+" as in tags) and a is below b.
func versionBelow(a, b string) bool {
	parse := func(s string) *semver.Version {
		v, err := semver.NewVersion(strings.ReplaceAll(strings.TrimPrefix(s, "v"), "_", "+"))
		if err != nil {
			return nil
		}
		return v
	}
	av, bv := parse(a), parse(b)
	return av != nil && bv != nil && av.LessThan(bv)
}

// Replaced returns the changes of changes that are OpReplaced or
// OpRollback, and the others, each in their order.
func Replaced(changes []Change) (replaced, others []Change) {
	replaced, others = []Change{}, []Change{}
	for _, c := range changes {
		if c.Op == OpReplaced || c.Op == OpRollback {
			replaced = append(replaced, c)
		} else {
			others = append(others, c)
		}
	}
	return replaced, others
}

type entry struct{ version, digest string }

// Diff lists what changed from a to b: digests replaced under an
// unchanged version first, then every other change; in each, packages
// first, each kind sorted by name.
func Diff(a, b *Lock) []Change {
	out := []Change{}
	pk := func(l *Lock) (map[string]entry, []string) {
		m := map[string]entry{}
		var names []string
		for _, p := range l.Packages {
			d := p.Digest
			if p.ReplacedBy != "" {
				d = "replaced by " + p.ReplacedBy
			}
			m[p.Source] = entry{p.Version, d}
			names = append(names, p.Source)
		}
		return m, names
	}
	compare := func(kind string, am, bm map[string]entry, an, bn []string) {
		for _, n := range an {
			old := am[n]
			nw, ok := bm[n]
			switch {
			case !ok:
				out = append(out, Change{Op: OpRemoved, Kind: kind, Name: n, OldVersion: old.version, OldDigest: old.digest})
			case old != nw:
				op := OpChanged
				if old.version != "" && old.version == nw.version && isDigest(old.digest) && isDigest(nw.digest) {
					op = OpReplaced
				}
				if old.digest == nw.digest && isDigest(nw.digest) && versionBelow(old.version, nw.version) {
					op = OpRollback
				}
				out = append(out, Change{Op: op, Kind: kind, Name: n, OldVersion: old.version, NewVersion: nw.version, OldDigest: old.digest, NewDigest: nw.digest})
			}
		}
		for _, n := range bn {
			if _, ok := am[n]; !ok {
				nw := bm[n]
				out = append(out, Change{Op: OpAdded, Kind: kind, Name: n, NewVersion: nw.version, NewDigest: nw.digest})
			}
		}
	}
	a.sort()
	b.sort()
	am, an := pk(a)
	bm, bn := pk(b)
	compare("package", am, bm, an, bn)
	out = append(out, tagChanges(a, b, am, bm)...)
	for _, key := range sectionKeys(a, b) {
		am, an = sectionEntries(a, key)
		bm, bn = sectionEntries(b, key)
		compare(sectionKind(key), am, bm, an, bn)
	}
	replaced, others := Replaced(out)
	return append(replaced, others...)
}

// tagChanges lists the tags of packages both locks hold (one source at
// one digest) that one lock has and the other lacks, sorted by source and
// tag. When each lock holds one package of the source, a version that
// changed is reported as the package's change, not again as a tag; the
// tags of a package added or removed go with it.
func tagChanges(a, b *Lock, am, bm map[string]entry) []Change {
	type tagged struct {
		source, digest string
		tags           map[string]string
	}
	tags := func(l *Lock) (map[string]tagged, map[string]int) {
		m, n := map[string]tagged{}, map[string]int{}
		for _, p := range l.Resolved() {
			ts := map[string]string{}
			for _, t := range p.AllTags() {
				ts[t] = p.Digest
			}
			m[p.Source+"@"+p.Digest] = tagged{p.Source, p.Digest, ts}
			n[p.Source]++
		}
		return m, n
	}
	at, an := tags(a)
	bt, bn := tags(b)
	var keys []string
	for k := range at {
		if _, ok := bt[k]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		src := at[k].source
		old, nw := am[src], bm[src]
		moved := an[src] == 1 && bn[src] == 1 && old.version != nw.version
		for _, t := range sortedKeys(at[k].tags) {
			if _, ok := bt[k].tags[t]; !ok && !(moved && t == old.version) {
				out = append(out, Change{Op: OpRemoved, Kind: "tag", Name: src, OldVersion: t, OldDigest: at[k].digest})
			}
		}
		for _, t := range sortedKeys(bt[k].tags) {
			if _, ok := at[k].tags[t]; !ok && !(moved && t == nw.version) {
				out = append(out, Change{Op: OpAdded, Kind: "tag", Name: src, NewVersion: t, NewDigest: bt[k].digest})
			}
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// isDigest reports whether s is a digest, not a package's "replaced by
// SOURCE" (a replacement the package declared, not swapped content).
func isDigest(s string) bool { return digest.Digest(s).Validate() == nil }

// sectionKeys returns the sections either lock holds, sorted.
func sectionKeys(a, b *Lock) []string {
	var keys []string
	for _, l := range []*Lock{a, b} {
		for k := range l.Sections {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// sectionKind names one entry of a section in a Change: "mixin" for
// `mixins`.
func sectionKind(key string) string { return strings.TrimSuffix(key, "s") }

// sectionEntries reads a format's section the way every format writes
// one: a list of entries, each with a `name` and a `version`. An entry is
// identified by its name, or by name@version when the section holds
// several versions of one name, and fingerprinted by every `digest` it
// holds: where it was mirrored, or the URL a file came from, is not a
// change.
func sectionEntries(l *Lock, key string) (map[string]entry, []string) {
	m := map[string]entry{}
	var names []string
	var list []map[string]any
	if _, err := l.Section(key, &list); err != nil {
		return m, names
	}
	count := map[string]int{}
	for _, x := range list {
		count[fmt.Sprint(x["name"])]++
	}
	for _, x := range list {
		name, version := fmt.Sprint(x["name"]), fmt.Sprint(x["version"])
		if count[name] > 1 {
			name += "@" + version
		}
		m[name] = entry{version, fingerprint(x)}
		names = append(names, name)
	}
	return m, names
}

// fingerprint digests every `digest` value inside v, with its path.
func fingerprint(v any) string {
	var lines []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, y := range x {
				if k == "digest" {
					lines = append(lines, path+" "+fmt.Sprint(y))
					continue
				}
				walk(path+"/"+k, y)
			}
		case []any:
			for i, y := range x {
				walk(fmt.Sprintf("%s/%d", path, i), y)
			}
		}
	}
	walk("", v)
	sort.Strings(lines)
	return digest.FromString(strings.Join(lines, "\n")).String()
}
