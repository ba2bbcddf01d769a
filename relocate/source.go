package relocate

import (
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
)

// openSource opens p's origin (its source, or the repository Origin
// names) for reading, through the format that owns it when it is not a
// registry repository (see format.Open).
func (o Options) openSource(p *lock.Package) (format.Repository, error) {
	return format.Open(o.Source, o.Formats, o.origin(p))
}
