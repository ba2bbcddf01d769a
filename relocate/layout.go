package relocate

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
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

// Qualifier is a format's rule for completing the references its packages
// write; a format whose references may be relative to the declaring
// package (Crossplane's moving-packages rule) constrains mirror layouts.
type Qualifier interface {
	format.Format
	// Kinds lists the package kinds the format reads.
	Kinds() []string
	// Qualify completes ref as written in the package whose source is
	// parent.
	Qualify(ref string, parent ociref.Reference) (ociref.Reference, error)
}

// BrokenEdges returns the dependency references of l that a mirror laid
// out by m would break: a reference whose meaning depends on the package
// that declares it (qualified relative to the parent, by the rules of the
// parent's format) is, in the mirror, qualified relative to the parent's
// mirrored copy, and must land on the mirrored copy of what it named at
// the source. References that name their registry are relocated by digest
// and never break.
func (m Mapping) BrokenEdges(l *lock.Lock, rules []format.Format) []BrokenEdge {
	byKind := map[string]Qualifier{}
	for _, f := range rules {
		if q, ok := f.(Qualifier); ok {
			for _, k := range q.Kinds() {
				byKind[k] = q
			}
		}
	}
	var out []BrokenEdge
	seen := map[string]bool{}
	for _, p := range l.Resolved() {
		q := byKind[p.Kind]
		if q == nil {
			continue
		}
		srcParent, err := ociref.Parse(p.Source)
		if err != nil {
			continue
		}
		dstParent, err := ociref.Parse(m.Repo(p.Source))
		if err != nil {
			continue
		}
		for _, d := range p.Dependencies {
			if d.Ref == "" {
				continue
			}
			atSource, err := q.Qualify(d.Ref, srcParent)
			if err != nil {
				continue
			}
			inMirror, err := q.Qualify(d.Ref, dstParent)
			if err != nil || inMirror.Repo() == atSource.Repo() {
				continue // not relative to the parent
			}
			key := p.Source + "\x00" + d.Ref
			if want := m.Repo(atSource.Repo()); inMirror.Repo() != want && !seen[key] {
				seen[key] = true
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

// ErrBrokenLayout is what CheckLayout's error wraps: a mirror layout that
// breaks partially qualified references (see Options.AllowBrokenReferences
// for installs that pin by digest).
var ErrBrokenLayout = errors.New("mirror layout breaks partially qualified references")

// BrokenLayoutError is CheckLayout's error: its message lists the broken
// edges, and it is ErrBrokenLayout. Alternative, when set, is a layout
// (the mirror's host alone) that keeps every reference working; a caller
// words it as its option ("use --to HOST").
type BrokenLayoutError struct {
	msg         string
	Alternative Mapping
}

func (e *BrokenLayoutError) Error() string { return e.msg }

// Is makes a BrokenLayoutError ErrBrokenLayout.
func (e *BrokenLayoutError) Is(target error) bool { return target == ErrBrokenLayout }

// CheckLayout fails, listing the broken edges and the layout that works
// (BrokenLayoutError.Alternative), when the layout would break a partially
// qualified reference.
func (m Mapping) CheckLayout(l *lock.Lock, rules []format.Format) error {
	broken := m.BrokenEdges(l, rules)
	if len(broken) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "mirror layout %s breaks %d partially qualified references, nothing was copied:", m, len(broken))
	for _, e := range broken {
		fmt.Fprintf(&b, "\n  %s: %q would resolve to %s, not to its mirrored copy %s", e.Parent, e.Ref, e.Resolves, e.Want)
	}
	e := &BrokenLayoutError{}
	if alt := (Mapping{Host: m.Host}); len(alt.BrokenEdges(l, rules)) == 0 {
		e.Alternative = alt
	} else {
		b.WriteString("\nno mirror prefix keeps them working: mirror these packages to a registry of their own")
	}
	e.msg = b.String()
	return errkind.Mark(errkind.BadInput, e)
}
