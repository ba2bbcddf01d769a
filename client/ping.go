package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// NotRegistryError is a host that answered the distribution API's base
// endpoint (GET /v2/) as no registry does: 404, 405 or 501.
type NotRegistryError struct {
	// Host is the host asked.
	Host string
	// StatusCode is what it answered.
	StatusCode int
}

func (e *NotRegistryError) Error() string {
	return fmt.Sprintf("%s is not an OCI registry: GET /v2/ answered %d %s (a registry answers 200 or 401)", e.Host, e.StatusCode, http.StatusText(e.StatusCode))
}

// CheckRegistry asks host's base endpoint (GET /v2/, as crane's and
// skopeo's ping do, and oras-go's Registry.Ping) once, before a copy
// writes anything, and returns a *NotRegistryError when the answer is one
// no registry gives, so that a destination that is a web server fails at
// once instead of every write being retried for the whole retry budget.
// Any other outcome (200; 401 the copy's own requests will meet with
// credentials; a network failure or 5xx, retried as always) is nil: the
// copy then reports it on its own.
func (c *Client) CheckRegistry(ctx context.Context, host string) error {
	reg, err := c.Registry(host)
	if err != nil {
		return err
	}
	err = reg.Ping(ctx)
	var er *errcode.ErrorResponse
	switch {
	case errors.Is(err, errdef.ErrNotFound):
		return &NotRegistryError{Host: host, StatusCode: http.StatusNotFound}
	case errors.As(err, &er) && (er.StatusCode == http.StatusMethodNotAllowed || er.StatusCode == http.StatusNotImplemented || er.StatusCode == http.StatusNotFound):
		return &NotRegistryError{Host: host, StatusCode: er.StatusCode}
	}
	return nil
}
