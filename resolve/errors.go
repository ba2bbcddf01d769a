package resolve

import "github.com/ferryhq/ferry/exitcode"

// badInput marks an error caused by the user's or a package's input.
func badInput(err error) error { return exitcode.With(exitcode.Usage, err) }
