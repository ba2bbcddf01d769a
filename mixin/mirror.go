package mixin

import (
	"net/http"
	"sync/atomic"

	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/serve/formatrepo"
)

// MirrorHandler answers Porter's mirror protocol (/mixins/atom.xml and
// /mixins/VERSION/NAME-OS-ARCH[.exe]) from the mixin artifacts a registry
// stores under any prefix (repositories ending in porter-mixins/NAME). It
// is mounted in `ferry serve` before the registry starts, and bound to the
// registry's handler once it runs; it reads that handler in process, so it
// needs neither the network nor credentials of its own (the request that
// reached it has already passed the server's authentication).
type MirrorHandler struct {
	h atomic.Pointer[http.Handler]
}

// NewMirrorHandler returns an unbound MirrorHandler, for `ferry serve` to
// mount at /mixins/; it answers 503 until Bind.
func NewMirrorHandler() *MirrorHandler { return &MirrorHandler{} }

// Bind serves the mixins stored in the registry that registry (an OCI
// distribution handler such as serve.Server.Registry) answers for.
func (m *MirrorHandler) Bind(registry http.Handler) error {
	reg, err := remote.NewRegistry("ferry.local")
	if err != nil {
		return err
	}
	reg.PlainHTTP = true
	reg.Client = &http.Client{Transport: formatrepo.HandlerTransport(registry)}
	var h http.Handler = NewHandler(&RegistryStore{Registry: reg, AnyPrefix: true})
	m.h.Store(&h)
	return nil
}

// ServeHTTP implements http.Handler.
func (m *MirrorHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := m.h.Load()
	if h == nil {
		http.Error(w, "the registry is starting", http.StatusServiceUnavailable)
		return
	}
	(*h).ServeHTTP(w, r)
}
