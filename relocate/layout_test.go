package relocate

import (
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/ociref"
)

// parentRelative qualifies references as Crossplane's format does
// (crossplane/qualify.go: the "partially qualified dependencies" rule of
// crossplane/crossplane design/one-pager-moving-packages.md, PR #6014):
// ociref.Qualify, relative to the declaring package.
type parentRelative struct{}

func (parentRelative) Name() string    { return "crossplane" }
func (parentRelative) Kinds() []string { return []string{"crossplane.configuration"} }
func (parentRelative) Qualify(ref string, parent ociref.Reference) (ociref.Reference, error) {
	return ociref.Qualify(ref, parent)
}

// TestCheckDestinationBrokenReferences: a layout that breaks a
// partially qualified reference is refused (ErrBrokenLayout) unless
// Options.AllowBrokenReferences, the install pinning by digest, lets it
// through with the broken references returned. An org/name reference
// breaks under HOST/PREFIX; a bare name keeps working under any prefix;
// a fully qualified one never breaks.
func TestCheckDestinationBrokenReferences(t *testing.T) {
	l := &lock.Lock{Packages: []lock.Package{
		{Source: "xpkg.example.io/acme/platform", Kind: "crossplane.configuration", Dependencies: []lock.Dependency{
			{Name: "acme/provider-sql", Ref: "acme/provider-sql"},
			{Name: "provider-nop", Ref: "provider-nop"},
			{Name: "xpkg.example.io/acme/function-x", Ref: "xpkg.example.io/acme/function-x"},
		}},
		{Source: "xpkg.example.io/acme/provider-sql", Kind: "crossplane.provider"},
		{Source: "xpkg.example.io/acme/provider-nop", Kind: "crossplane.provider"},
		{Source: "xpkg.example.io/acme/function-x", Kind: "crossplane.function"},
	}}
	formats := []format.Format{parentRelative{}}
	for _, tc := range []struct {
		name   string
		to     string
		allow  bool
		broken []string // Ref -> Resolves
		err    bool
	}{
		{name: "host keeps every reference", to: "mirror.internal"},
		{name: "prefix breaks org/name", to: "mirror.internal/m", err: true},
		{name: "prefix allowed by digest pins", to: "mirror.internal/m", allow: true,
			broken: []string{"acme/provider-sql -> mirror.internal/acme/provider-sql (want mirror.internal/m/acme/provider-sql)"}},
		{name: "host, allowed: nothing broken", to: "mirror.internal", allow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to, err := ParseMapping(tc.to)
			if err != nil {
				t.Fatal(err)
			}
			got, err := checkDestination(l, l.Resolved(), Options{To: to, Formats: formats, AllowBrokenReferences: tc.allow})
			if tc.err {
				if !errors.Is(err, ErrBrokenLayout) || !strings.Contains(err.Error(), `"acme/provider-sql"`) {
					t.Fatalf("error %v, want ErrBrokenLayout naming acme/provider-sql", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, e := range got {
				lines = append(lines, e.Ref+" -> "+e.Resolves+" (want "+e.Want+")")
			}
			if strings.Join(lines, "\n") != strings.Join(tc.broken, "\n") {
				t.Errorf("broken = %q, want %q", lines, tc.broken)
			}
		})
	}
}
