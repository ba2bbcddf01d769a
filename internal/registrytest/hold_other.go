//go:build !unix

package registrytest

import (
	"errors"
	"io"
)

// holdPort is not available here: a stopped registry's port is freed.
func holdPort(string) (io.Closer, error) {
	return nil, errors.New("holding a port needs a Unix socket API")
}
