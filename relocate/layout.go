package relocate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
)

// BrokenEdge is a partially qualified dependency reference that, inside a
// mirror layout, no longer resolves to the mirrored copy of its target.
type BrokenEdge struct {
	// Parent is the declaring package's source.
	Parent string `json:"parent"`
	// Ref is the reference as declared.
	Ref string `json:"ref"`
	// Resolves is where Ref points when qualified inside the mirror.
	Resolves string `json:"resolves"`
	// Want is where the target is mirrored.
	Want string `json:"want"`
}

// BrokenEdges returns the partially qualified references of l that a
// mirror laid out by m would break. A reference without a registry is
// qualified relative to its parent, so in the mirror it is qualified
// relative to the parent's mirrored copy and must land on the mirrored copy
// of what it named at the source.
func (m Mapping) BrokenEdges(l *lock.Lock) []BrokenEdge {
	var out []BrokenEdge
	for _, p := range l.Resolved() {
		srcParent, err := ociref.Parse(p.Source)
		if err != nil {
			continue
		}
		dstParent, err := ociref.Parse(m.Repo(p.Source))
		if err != nil {
			continue
		}
		for _, d := range p.Dependencies {
			if d.Ref == "" || !ociref.IsPartial(d.Ref) {
				continue
			}
			atSource, err := ociref.Qualify(d.Ref, srcParent)
			if err != nil {
				continue
			}
			inMirror, err := ociref.Qualify(d.Ref, dstParent)
			if err != nil {
				continue
			}
			if want := m.Repo(atSource.Repo()); inMirror.Repo() != want {
				out = append(out, BrokenEdge{Parent: p.Source, Ref: d.Ref, Resolves: inMirror.Repo(), Want: want})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Parent != out[j].Parent {
			return out[i].Parent < out[j].Parent
		}
		return out[i].Ref < out[j].Ref
	})
	return out
}

// CheckLayout fails, listing the broken edges and proposing a --to that
// works, when the layout would break a partially qualified reference.
func (m Mapping) CheckLayout(l *lock.Lock) error {
	broken := m.BrokenEdges(l)
	if len(broken) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mirror layout %s breaks %d partially qualified references, nothing was copied:", m, len(broken))
	for _, e := range broken {
		fmt.Fprintf(&b, "\n  %s: %q would resolve to %s, not to its mirrored copy %s", e.Parent, e.Ref, e.Resolves, e.Want)
	}
	alt := Mapping{Host: m.Host}
	if len(alt.BrokenEdges(l)) == 0 {
		fmt.Fprintf(&b, "\nuse --to %s: it keeps every reference working", alt)
	} else {
		b.WriteString("\nno mirror prefix keeps them working: mirror these packages to a registry of their own")
	}
	return exitcode.With(exitcode.Usage, fmt.Errorf("%s", b.String()))
}
