package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// Destinations that refuse a push into a repository before any content
// moves, as registries other than CNCF distribution do:
//   - repositories must exist first: ECR answers a push into a repository
//     nobody created with 404 NAME_UNKNOWN ("The repository with name 'x'
//     does not exist in the registry"), Harbor one into a project that
//     does not exist with 404 NOT_FOUND ("project x not found");
//   - a repository name of more than two components: Quay and Docker Hub
//     take NAMESPACE/NAME only and answer a deeper name with 400
//     NAME_INVALID (or Docker Hub's 403/404 DENIED before that).
//
// RepositoryRefusedError names the repository and what the user must do.

// RepositoryRefusedError is a registry refusing writes into a repository
// because of the repository itself: it does not exist and the registry does
// not create repositories on push, or its name is one the registry does
// not take.
type RepositoryRefusedError struct {
	// Repository is HOST/PATH.
	Repository string
	// StatusCode and Code are the registry's answer (Code the first
	// error code of its body, such as NAME_UNKNOWN or NAME_INVALID).
	StatusCode int
	Code       string
	// Message is the registry's own message, if any.
	Message string
}

// Missing reports whether the registry said the repository does not exist.
func (e *RepositoryRefusedError) Missing() bool {
	return e.Code == errcode.ErrorCodeNameUnknown || e.Code == "NOT_FOUND"
}

func (e *RepositoryRefusedError) Error() string {
	said := fmt.Sprintf("%d %s", e.StatusCode, e.Code)
	if e.Message != "" {
		said += ": " + e.Message
	}
	host, path, _ := strings.Cut(e.Repository, "/")
	if e.Missing() {
		project, _, _ := strings.Cut(path, "/")
		return fmt.Sprintf("mirror repository %s does not exist, and %s does not create repositories on push (registry said %s): "+
			"create it first (ECR: aws ecr create-repository --repository-name %s; Harbor: create the project %q), then run again",
			e.Repository, host, said, path, project)
	}
	depth := strings.Count(path, "/") + 1
	hint := ""
	if depth > 2 {
		hint = fmt.Sprintf("; registries such as Quay and Docker Hub take NAMESPACE/NAME only (two path components) and %s has %d: "+
			"mirror with repository paths flattened into one component below a namespace (the mirror's flatten option), which the lock records", path, depth)
	}
	return fmt.Sprintf("%s refuses the repository name %s (registry said %s)%s", host, e.Repository, said, hint)
}

// repositoryRefused returns a *RepositoryRefusedError for err when it is a
// registry's answer to a write (a blob upload's start or a manifest PUT)
// that refuses the repository itself, naming repository (HOST/PATH).
func repositoryRefused(repository string, err error) (*RepositoryRefusedError, bool) {
	var er *errcode.ErrorResponse
	if !errors.As(err, &er) {
		return nil, false
	}
	if er.Method != http.MethodPost && er.Method != http.MethodPut && er.Method != http.MethodPatch {
		return nil, false
	}
	code, msg := "", ""
	if len(er.Errors) > 0 {
		code, msg = er.Errors[0].Code, er.Errors[0].Message
	}
	switch {
	case er.StatusCode == http.StatusNotFound && (code == errcode.ErrorCodeNameUnknown || code == "NOT_FOUND"):
	case er.StatusCode == http.StatusBadRequest && code == errcode.ErrorCodeNameInvalid:
	default:
		return nil, false
	}
	if repository == "" && er.URL != nil {
		repository = repoOfURL(er.URL)
	}
	return &RepositoryRefusedError{Repository: repository, StatusCode: er.StatusCode, Code: code, Message: msg}, true
}

// repoOfURL returns HOST/NAME of a /v2/NAME/(blobs|manifests)/... URL.
func repoOfURL(u *url.URL) string {
	p := strings.TrimPrefix(u.Path, "/v2/")
	for _, sep := range []string{"/blobs/", "/manifests/", "/tags/"} {
		if i := strings.LastIndex(p, sep); i >= 0 {
			return u.Host + "/" + p[:i]
		}
	}
	return u.Host + "/" + p
}

// ExplainRepositoryRefused returns err, or in its place (wrapping it) a
// *RepositoryRefusedError when err is a registry refusing a write because
// of the repository (see RepositoryRefusedError).
func ExplainRepositoryRefused(err error) error {
	var already *RepositoryRefusedError
	if err == nil || errors.As(err, &already) || IsTagRefused(err) {
		return err
	}
	if re, ok := repositoryRefused("", err); ok {
		return fmt.Errorf("%w: %w", re, err)
	}
	if ae, ok := writeForbidden(err); ok {
		repo := repoOfURL(&url.URL{Host: ae.Host, Path: ae.Path})
		_, path, _ := strings.Cut(repo, "/")
		project, _, _ := strings.Cut(path, "/")
		return fmt.Errorf("%w; registries that create no repository on push answer 403 too (Harbor for a project that does not exist, ECR for a repository): "+
			"check that %s exists (ECR: aws ecr create-repository --repository-name %s; Harbor: create the project %q) and that the credentials may push to it", err, repo, path, project)
	}
	return err
}

// writeForbidden returns err's *AuthError when it is a 403 answering the
// start of a blob upload or a manifest PUT: what registries that create
// no repository on push answer for one that does not exist (Harbor for a
// missing project, ECR for a missing repository), as well as for
// credentials that may not push.
func writeForbidden(err error) (*AuthError, bool) {
	var ae *AuthError
	if errors.As(err, &ae) && ae.StatusCode == http.StatusForbidden && (ae.Method == http.MethodPost || ae.Method == http.MethodPut) &&
		(strings.Contains(ae.Path, "/blobs/uploads/") || strings.Contains(ae.Path, "/manifests/")) {
		return ae, true
	}
	return nil, false
}

// IsRepositoryRefused reports whether err is a registry refusing writes
// into a repository because of the repository (see
// ExplainRepositoryRefused): a *RepositoryRefusedError, or a 403 to the
// start of a blob upload or a manifest PUT that is not an immutable tag.
func IsRepositoryRefused(err error) bool {
	if err == nil || IsTagRefused(err) {
		return false
	}
	var re *RepositoryRefusedError
	if errors.As(err, &re) {
		return true
	}
	if _, ok := repositoryRefused("", err); ok {
		return true
	}
	_, ok := writeForbidden(err)
	return ok
}

// ProbePush asks whether repo takes pushes without writing anything: it
// opens a blob upload session (POST /v2/NAME/blobs/uploads/) and cancels
// it at once (DELETE), two requests. It returns nil when the registry
// opened the session, the refusal explained (ExplainRepositoryRefused)
// when the registry refuses the repository itself, and any other error
// as it came.
func ProbePush(ctx context.Context, repo *remote.Repository) error {
	up, err := StartUpload(ctx, repo)
	if err != nil {
		return ExplainRepositoryRefused(err)
	}
	up.Cancel(ctx)
	return nil
}

// IsTagRefused reports whether err is a registry refusing to move a tag
// that already exists: an immutable tag. Registries answer a manifest PUT
// over one with 409 Conflict (distribution's own tag-immutability
// setting, Angos), 400 TAG_INVALID (ECR: "The image tag 'x' already
// exists in the 'y' repository and cannot be overwritten because the
// repository is immutable"), 412 or 403 with a message naming the
// immutability (Harbor's "configured as immutable", Docker Hub's DENIED
// "cannot be updated due to immutability settings").
func IsTagRefused(err error) bool {
	var (
		method, path string
		status       int
		errs         errcode.Errors
	)
	var ae *AuthError
	var er *errcode.ErrorResponse
	switch {
	case errors.As(err, &ae):
		// 401 and 403 come back as an *AuthError, carrying the body.
		method, path, status = ae.Method, ae.Path, ae.StatusCode
		if errors.As(ae.Err, &er) {
			errs = er.Errors
		}
	case errors.As(err, &er):
		method, status, errs = er.Method, er.StatusCode, er.Errors
		if er.URL != nil {
			path = er.URL.Path
		}
	default:
		return false
	}
	if method != http.MethodPut || !strings.Contains(path, "/manifests/") {
		return false
	}
	if status == http.StatusConflict {
		return true
	}
	if status < 400 || status >= 500 {
		return false
	}
	for _, e := range errs {
		if e.Code == "TAG_INVALID" || strings.Contains(strings.ToLower(e.Message), "immutab") {
			return true
		}
	}
	return false
}
