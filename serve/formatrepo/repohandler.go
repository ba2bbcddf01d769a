package formatrepo

import (
	"net/http"

	"github.com/ferryhq/ferry/lock"
)

// RepoConfig describes a format's repository protocol for RepoHandler.
type RepoConfig[E any] struct {
	// Path is the URL path the repository is mounted at ("/charts/").
	Path string
	// Kind is the lock kind of the format's packages, for BindLocked.
	Kind string
	// Noun names an artifact in log lines ("chart", "operator").
	Noun string
	// NotLocked is the error (wrapped) for an artifact `ferry serve
	// --lock` leaves out.
	NotLocked error
	// Format decodes the format's artifacts.
	Format ArtifactFormat[E]
	// Index answers PATH/index.yaml, and File PATH/FILE, from a.
	Index, File func(a *Artifacts[E]) http.HandlerFunc
}

// RepoHandler answers a format's read-only repository (an index.yaml and
// the files it lists: a Helm chart repository, a KUDO repository) from
// the artifacts a registry stores, walked by Artifacts. It is mounted in
// `ferry serve` before the registry starts and bound to the registry's
// handler once it runs; it answers 503 until bound.
type RepoHandler[E any] struct {
	Deferred
	cfg RepoConfig[E]
}

// NewRepoHandler returns an unbound RepoHandler for cfg.
func NewRepoHandler[E any](cfg RepoConfig[E]) *RepoHandler[E] {
	return &RepoHandler[E]{cfg: cfg}
}

// Path is the URL path the handler answers below.
func (h *RepoHandler[E]) Path() string { return h.cfg.Path }

// Bind serves every artifact stored in the registry that registry (an OCI
// distribution handler such as Server.Registry) answers for.
func (h *RepoHandler[E]) Bind(registry http.Handler) error {
	return h.bind(registry, ArtifactOptions{})
}

// BindLocked is Bind for `ferry serve --lock`: it serves only the
// artifacts whose manifest digest l holds among its packages of the
// format's kind. The manifest digest pins the artifact's config and
// layers, and every file is checked against its digest while it is sent,
// so where in the registry a locked artifact is stored does not matter.
// An artifact left out is answered 404 saying why, and log receives a
// line.
func (h *RepoHandler[E]) BindLocked(registry http.Handler, l *lock.Lock, log func(format string, args ...any)) error {
	locked, err := LockedDigests(l, h.cfg.Kind)
	if err != nil {
		return err
	}
	return h.bind(registry, ArtifactOptions{Locked: locked, Log: log})
}

func (h *RepoHandler[E]) bind(registry http.Handler, opts ArtifactOptions) error {
	opts.Noun, opts.NotLocked = h.cfg.Noun, h.cfg.NotLocked
	a, err := NewArtifacts(registry, h.cfg.Format, opts)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+h.cfg.Path+"index.yaml", h.cfg.Index(a))
	mux.HandleFunc("GET "+h.cfg.Path+"{file}", h.cfg.File(a))
	h.Set(mux)
	return nil
}
