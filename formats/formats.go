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
