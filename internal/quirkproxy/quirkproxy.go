// Package quirkproxy makes a real registry (internal/registrytest's
// distribution) answer as registries other than distribution do, for the
// requests where they differ, so that ferry's behaviour against them is
// pinned by tests:
//   - MaxDepth: Quay and Docker Hub take NAMESPACE/NAME only; a write
//     into a deeper repository name is refused with 400 NAME_INVALID, and
//     a read finds nothing (404 NAME_UNKNOWN);
//   - MustCreate: ECR (and Harbor, per project) create no repository on
//     push; a write into one not made with Create is refused with 404
//     NAME_UNKNOWN, as ECR answers;
//   - Immutable: Harbor's and ECR's immutable tags; a manifest PUT by tag
//     over a tag that exists is refused, whatever the digest, with the
//     answer of the registry named (Answer).
//
// Everything else is forwarded unchanged. Proxy.Wrap is used with
// registrytest.WithWrap.
package quirkproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
)

// Answer is how a registry refuses to move an immutable tag.
type Answer string

// The immutable-tag answers emulated.
const (
	// ECR answers 400 TAG_INVALID ("The image tag '%s' already exists in
	// the '%s' repository and cannot be overwritten because the
	// repository is immutable.").
	ECR Answer = "ecr"
	// Harbor answers 412 Precondition Failed, DENIED "The tag:%s:%s is
	// immutable, cannot be overwrite." (goharbor/harbor pull request 9427,
	// src/core/middlewares/immutable/handler.go).
	Harbor Answer = "harbor"
	// DockerHub answers 403 DENIED "This tag is already assigned to an
	// image in this repository and cannot be updated due to immutability
	// settings." (docker/hub-feedback issue 2466).
	DockerHub Answer = "dockerhub"
)

// Options selects the quirks.
type Options struct {
	// MaxDepth, when positive, refuses every request naming a repository
	// of more path components with 400 NAME_INVALID.
	MaxDepth int
	// MustCreate refuses writes (blob uploads, manifest PUTs) into a
	// repository not made with Proxy.Create with 404 NAME_UNKNOWN.
	MustCreate bool
	// Forbidden makes MustCreate answer 403 DENIED instead, as registries
	// do that tell no repository that does not exist from one the
	// credentials may not push to.
	Forbidden bool
	// Immutable, when set, refuses a manifest PUT by tag over an existing
	// tag with that registry's answer.
	Immutable Answer
}

// Proxy applies Options in front of a registry handler.
type Proxy struct {
	opts Options

	mu      sync.Mutex
	created map[string]bool
	refused int
}

// New returns a Proxy applying opts.
func New(opts Options) *Proxy { return &Proxy{opts: opts, created: map[string]bool{}} }

// Create makes repository name (PATH, without the host) exist for
// MustCreate.
func (p *Proxy) Create(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.created[name] = true
}

// Refused returns how many requests the proxy refused.
func (p *Proxy) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// v2Path splits /v2/NAME/(blobs|manifests|tags|referrers)/REST.
var v2Path = regexp.MustCompile(`^/v2/(.+?)/(blobs|manifests|tags|referrers)/(.*)$`)

// Wrap returns next with the quirks in front of it.
func (p *Proxy) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := v2Path.FindStringSubmatch(r.URL.Path)
		if m == nil {
			next.ServeHTTP(w, r)
			return
		}
		name, kind, rest := m[1], m[2], m[3]
		write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
		if p.opts.MaxDepth > 0 && strings.Count(name, "/")+1 > p.opts.MaxDepth {
			if write {
				p.refuse(w, http.StatusBadRequest, "NAME_INVALID", fmt.Sprintf("invalid repository name %q: at most %d path components", name, p.opts.MaxDepth))
			} else {
				// No such repository can exist.
				p.refuse(w, http.StatusNotFound, "NAME_UNKNOWN", fmt.Sprintf("repository %q not found", name))
			}
			return
		}
		if write && p.opts.MustCreate {
			p.mu.Lock()
			ok := p.created[name]
			p.mu.Unlock()
			if !ok && p.opts.Forbidden {
				p.refuse(w, http.StatusForbidden, "DENIED", "requested access to the resource is denied")
				return
			}
			if !ok {
				p.refuse(w, http.StatusNotFound, "NAME_UNKNOWN", fmt.Sprintf("The repository with name '%s' does not exist in the registry with id '000000000000'", name))
				return
			}
		}
		if p.opts.Immutable != "" && r.Method == http.MethodPut && kind == "manifests" && !strings.Contains(rest, ":") && p.tagExists(next, r, name, rest) {
			switch p.opts.Immutable {
			case Harbor:
				p.refuse(w, http.StatusPreconditionFailed, "DENIED", fmt.Sprintf("The tag:%s:%s is immutable, cannot be overwrite.", name, rest))
			case DockerHub:
				p.refuse(w, http.StatusForbidden, "DENIED", "requested access to the resource is denied - This tag is already assigned to an image in this repository and cannot be updated due to immutability settings.")
			default:
				p.refuse(w, http.StatusBadRequest, "TAG_INVALID", fmt.Sprintf("The image tag '%s' already exists in the '%s' repository and cannot be overwritten because the repository is immutable.", rest, name))
			}
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tagExists asks next whether tag exists in repository name, with r's
// credentials.
func (p *Proxy) tagExists(next http.Handler, r *http.Request, name, tag string) bool {
	head, err := http.NewRequestWithContext(r.Context(), http.MethodHead, "/v2/"+name+"/manifests/"+tag, nil)
	if err != nil {
		return false
	}
	head.Host = r.Host
	if a := r.Header.Get("Authorization"); a != "" {
		head.Header.Set("Authorization", a)
	}
	head.Header.Set("Accept", strings.Join([]string{
		"application/vnd.oci.image.manifest.v1+json", "application/vnd.oci.image.index.v1+json",
		"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.distribution.manifest.list.v2+json",
	}, ", "))
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, head)
	return rec.Code == http.StatusOK
}

func (p *Proxy) refuse(w http.ResponseWriter, status int, code, msg string) {
	p.mu.Lock()
	p.refused++
	p.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"errors": []map[string]string{{"code": code, "message": msg}}})
}
