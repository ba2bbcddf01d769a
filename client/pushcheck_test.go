package client

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/errcode"
)

// TestIsTagRefused pins which registry answers to a manifest PUT are an
// immutable tag (Harbor, ECR, Docker Hub, distribution's 409) and which
// are not.
func TestIsTagRefused(t *testing.T) {
	u := &url.URL{Scheme: "https", Host: "reg.example", Path: "/v2/m/app/manifests/v1"}
	resp := func(method string, status int, code, msg string) error {
		return fmt.Errorf("push: %w", &errcode.ErrorResponse{Method: method, URL: u, StatusCode: status, Errors: errcode.Errors{{Code: code, Message: msg}}})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"ECR 400 TAG_INVALID", resp(http.MethodPut, 400, "TAG_INVALID", "The image tag 'v1' already exists in the 'm/app' repository and cannot be overwritten because the repository is immutable."), true},
		{"Harbor 412", resp(http.MethodPut, 412, "DENIED", "The tag:m/app:v1 is immutable, cannot be overwrite."), true},
		{"409 Conflict", resp(http.MethodPut, 409, "", ""), true},
		{"Docker Hub 403 as an AuthError", &AuthError{Host: "reg.example", Method: http.MethodPut, Path: u.Path, StatusCode: 403,
			Err: resp(http.MethodPut, 403, "DENIED", "This tag is already assigned to an image in this repository and cannot be updated due to immutability settings.")}, true},
		{"403 without immutability", &AuthError{Host: "reg.example", Method: http.MethodPut, Path: u.Path, StatusCode: 403, Err: resp(http.MethodPut, 403, "DENIED", "requested access to the resource is denied")}, false},
		{"400 MANIFEST_INVALID", resp(http.MethodPut, 400, "MANIFEST_INVALID", "manifest invalid"), false},
		{"500 immutable", resp(http.MethodPut, 500, "UNKNOWN", "immutable storage failed"), false},
		{"GET", resp(http.MethodGet, 409, "", ""), false},
		{"not a registry answer", errors.New("immutable"), false},
	}
	for _, tt := range tests {
		if got := IsTagRefused(tt.err); got != tt.want {
			t.Errorf("%s: IsTagRefused = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestExplainRepositoryRefused pins which write refusals name the
// repository to create or the depth registries allow.
func TestExplainRepositoryRefused(t *testing.T) {
	post := &url.URL{Scheme: "https", Host: "reg.example", Path: "/v2/m/a/b/blobs/uploads/"}
	resp := func(method string, status int, code string) error {
		return fmt.Errorf("push: %w", &errcode.ErrorResponse{Method: method, URL: post, StatusCode: status, Errors: errcode.Errors{{Code: code, Message: "msg"}}})
	}
	tests := []struct {
		name string
		err  error
		want []string // empty: returned unchanged
	}{
		{"ECR 404 NAME_UNKNOWN", resp(http.MethodPost, 404, "NAME_UNKNOWN"), []string{"reg.example/m/a/b does not exist", "aws ecr create-repository --repository-name m/a/b", `project "m"`}},
		{"Harbor 404 NOT_FOUND", resp(http.MethodPost, 404, "NOT_FOUND"), []string{"reg.example/m/a/b does not exist"}},
		{"Quay 400 NAME_INVALID", resp(http.MethodPost, 400, "NAME_INVALID"), []string{"refuses the repository name reg.example/m/a/b", "has 3", "flatten"}},
		{"403 on upload", &AuthError{Host: "reg.example", Method: http.MethodPost, Path: post.Path, StatusCode: 403}, []string{"check that reg.example/m/a/b exists"}},
		{"404 NAME_UNKNOWN on a read", resp(http.MethodGet, 404, "NAME_UNKNOWN"), nil},
		{"400 on a write, other code", resp(http.MethodPost, 400, "BLOB_UPLOAD_INVALID"), nil},
	}
	for _, tt := range tests {
		if refused := IsRepositoryRefused(tt.err); refused != (len(tt.want) > 0) {
			t.Errorf("%s: IsRepositoryRefused %v", tt.name, refused)
		}
		got := ExplainRepositoryRefused(tt.err)
		if len(tt.want) == 0 {
			if got != tt.err {
				t.Errorf("%s: changed to %v", tt.name, got)
			}
			continue
		}
		if !errors.Is(got, errors.Unwrap(tt.err)) && !errors.Is(got, tt.err) {
			t.Errorf("%s: %v does not wrap the registry's answer", tt.name, got)
		}
		for _, w := range tt.want {
			if !strings.Contains(got.Error(), w) {
				t.Errorf("%s: %q does not say %q", tt.name, got, w)
			}
		}
	}
}
