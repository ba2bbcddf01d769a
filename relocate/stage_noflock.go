//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package relocate

import "os"

// lockFile does nothing where the system has no flock: two runs on one
// staging directory are not kept apart there.
func lockFile(*os.File) error { return nil }
