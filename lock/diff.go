package lock

import (
	"fmt"
	"sort"
	"strings"

	"github.com/opencontainers/go-digest"
)

// Change is one difference between two locks.
type Change struct {
	// Op is "added", "removed" or "changed".
	Op string `json:"op"`
	// Kind is "package" or "mixin".
	Kind string `json:"kind"`
	// Name is a package's source or a mixin's name.
	Name       string `json:"name"`
	OldVersion string `json:"oldVersion,omitempty"`
	NewVersion string `json:"newVersion,omitempty"`
	OldDigest  string `json:"oldDigest,omitempty"`
	NewDigest  string `json:"newDigest,omitempty"`
}

func (c Change) String() string {
	switch c.Op {
	case "added":
		return fmt.Sprintf("+ %s %s %s %s", c.Kind, c.Name, c.NewVersion, c.NewDigest)
	case "removed":
		return fmt.Sprintf("- %s %s %s %s", c.Kind, c.Name, c.OldVersion, c.OldDigest)
	}
	return fmt.Sprintf("~ %s %s %s -> %s (%s -> %s)", c.Kind, c.Name, c.OldVersion, c.NewVersion, c.OldDigest, c.NewDigest)
}

// Diff lists what changed from a to b, packages first, each sorted by name.
func Diff(a, b *Lock) []Change {
	out := []Change{}
	type entry struct{ version, digest string }
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
	mx := func(l *Lock) (map[string]entry, []string) {
		m := map[string]entry{}
		var names []string
		count := map[string]int{}
		for _, x := range l.Mixins {
			count[x.Name]++
		}
		for _, x := range l.Mixins {
			// A lock may hold several versions of one mixin: then each
			// version is its own entry.
			key := x.Name
			if count[x.Name] > 1 {
				key = x.Name + "@" + x.Version
			}
			m[key] = entry{x.Version, binariesDigest(x.Binaries)}
			names = append(names, key)
		}
		return m, names
	}
	compare := func(kind string, am, bm map[string]entry, an, bn []string) {
		for _, n := range an {
			old := am[n]
			nw, ok := bm[n]
			switch {
			case !ok:
				out = append(out, Change{Op: "removed", Kind: kind, Name: n, OldVersion: old.version, OldDigest: old.digest})
			case old != nw:
				out = append(out, Change{Op: "changed", Kind: kind, Name: n, OldVersion: old.version, NewVersion: nw.version, OldDigest: old.digest, NewDigest: nw.digest})
			}
		}
		for _, n := range bn {
			if _, ok := am[n]; !ok {
				nw := bm[n]
				out = append(out, Change{Op: "added", Kind: kind, Name: n, NewVersion: nw.version, NewDigest: nw.digest})
			}
		}
	}
	a.sort()
	b.sort()
	am, an := pk(a)
	bm, bn := pk(b)
	compare("package", am, bm, an, bn)
	am, an = mx(a)
	bm, bn = mx(b)
	compare("mixin", am, bm, an, bn)
	return out
}

// binariesDigest fingerprints a mixin version's binaries by file name and
// digest, so that where the mixin was mirrored, or the URL a binary came
// from, is not a change.
func binariesDigest(bins map[string]Binary) string {
	lines := make([]string, 0, len(bins))
	for name, b := range bins {
		lines = append(lines, name+" "+b.Digest)
	}
	sort.Strings(lines)
	return digest.FromString(strings.Join(lines, "\n")).String()
}
