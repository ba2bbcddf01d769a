// Package formats is the one list of the package formats ferry speaks.
// Adding a format is one folder plus one line here; the pipeline finds
// what a format does through the interfaces it implements (see package
// format).
package formats

import (
	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/helm"
	"github.com/ferryhq/ferry/images"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/porter"
)

// init registers what each format adds to the lock, trust and mirror-set
// packages: lock fields and sections, provenance checks, lock inputs.
// One initialiser here rather than one in each format's folder: every
// initialiser reads the page of machine code around it from the binary
// at each start of every command, which `ferry version`'s peak RSS
// counted (issue 29). The one-call Registers (crossplane, images,
// porter) are inlined here; helm's, kudo's and mixin's are called.
func init() {
	crossplane.Register()
	helm.Register()
	images.Register()
	kudo.Register()
	mixin.Register()
	porter.Register()
}

// All returns every format, in the order their readers are tried on a
// manifest.
func All() []format.Format {
	return []format.Format{
		porter.Reader{},
		crossplane.Format{},
		kudo.New(), // before helm: both read .tgz roots; kudo claims only those with operator.yaml
		helm.New(),
		mixin.Format{},
		images.Format{}, // no reader: a section of plain images
	}
}
