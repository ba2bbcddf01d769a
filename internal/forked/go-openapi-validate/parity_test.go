package validate_test

import (
	"context"
	"fmt"
	"testing"

	realstrfmt "github.com/go-openapi/strfmt"
	realvalidate "github.com/go-openapi/validate"

	"github.com/ferryhq/ferry/internal/forked/go-openapi-validate"
	"github.com/ferryhq/ferry/internal/forked/strfmt"
)

// TestParity holds the copy's value checks (those the rekor models call) to
// the real go-openapi/validate's: the same result, error text included, on
// the same inputs.
func TestParity(t *testing.T) {
	str := func(v any) string { return fmt.Sprintf("%#v", v) }
	req := validate.WithOperationRequest(context.Background())
	realReq := realvalidate.WithOperationRequest(context.Background())
	resp := validate.WithOperationResponse(context.Background())
	realResp := realvalidate.WithOperationResponse(context.Background())
	var nilPtr *string
	s := "x"
	for _, c := range []struct {
		name       string
		fork, real any
	}{
		{"Required nil", validate.Required("a", "body", nil), realvalidate.Required("a", "body", nil)},
		{"Required nil pointer", validate.Required("a", "body", nilPtr), realvalidate.Required("a", "body", nilPtr)},
		{"Required zero string", validate.Required("a", "body", ""), realvalidate.Required("a", "body", "")},
		{"Required value", validate.Required("a", "body", &s), realvalidate.Required("a", "body", &s)},
		{"Required zero int", validate.Required("a", "body", 0), realvalidate.Required("a", "body", 0)},
		{"RequiredString empty", validate.RequiredString("kind", "body", ""), realvalidate.RequiredString("kind", "body", "")},
		{"RequiredString", validate.RequiredString("kind", "body", "dsse"), realvalidate.RequiredString("kind", "body", "dsse")},
		{"Pattern match", validate.Pattern("h", "body", "abcdef", "^[0-9a-f]{6}$"), realvalidate.Pattern("h", "body", "abcdef", "^[0-9a-f]{6}$")},
		{"Pattern no match", validate.Pattern("h", "body", "xyz", "^[0-9a-f]{6}$"), realvalidate.Pattern("h", "body", "xyz", "^[0-9a-f]{6}$")},
		{"Pattern bad", validate.Pattern("h", "body", "x", "("), realvalidate.Pattern("h", "body", "x", "(")},
		{"EnumCase in", validate.EnumCase("alg", "body", "sha256", []any{"sha256", "sha384"}, true), realvalidate.EnumCase("alg", "body", "sha256", []any{"sha256", "sha384"}, true)},
		{"EnumCase out", validate.EnumCase("alg", "body", "md5", []any{"sha256", "sha384"}, true), realvalidate.EnumCase("alg", "body", "md5", []any{"sha256", "sha384"}, true)},
		{"EnumCase case", validate.EnumCase("alg", "body", "SHA256", []any{"sha256"}, false), realvalidate.EnumCase("alg", "body", "SHA256", []any{"sha256"}, false)},
		{"EnumCase case-sensitive", validate.EnumCase("alg", "body", "SHA256", []any{"sha256"}, true), realvalidate.EnumCase("alg", "body", "SHA256", []any{"sha256"}, true)},
		{"MinItems under", validate.MinItems("sigs", "body", 0, 1), realvalidate.MinItems("sigs", "body", 0, 1)},
		{"MinItems", validate.MinItems("sigs", "body", 1, 1), realvalidate.MinItems("sigs", "body", 1, 1)},
		{"MaxItems over", validate.MaxItems("sigs", "body", 3, 2), realvalidate.MaxItems("sigs", "body", 3, 2)},
		{"MaxItems", validate.MaxItems("sigs", "body", 2, 2), realvalidate.MaxItems("sigs", "body", 2, 2)},
		{"MinimumInt under", validate.MinimumInt("i", "body", -1, 0, false), realvalidate.MinimumInt("i", "body", -1, 0, false)},
		{"MinimumInt exclusive", validate.MinimumInt("i", "body", 0, 0, true), realvalidate.MinimumInt("i", "body", 0, 0, true)},
		{"MinimumInt", validate.MinimumInt("i", "body", 5, 0, false), realvalidate.MinimumInt("i", "body", 5, 0, false)},
		{"ReadOnly request set", validate.ReadOnly(req, "id", "body", "x"), realvalidate.ReadOnly(realReq, "id", "body", "x")},
		{"ReadOnly request zero", validate.ReadOnly(req, "id", "body", ""), realvalidate.ReadOnly(realReq, "id", "body", "")},
		{"ReadOnly response", validate.ReadOnly(resp, "id", "body", "x"), realvalidate.ReadOnly(realResp, "id", "body", "x")},
		{"ReadOnly none", validate.ReadOnly(context.Background(), "id", "body", "x"), realvalidate.ReadOnly(context.Background(), "id", "body", "x")},
		{"FormatOf uri", validate.FormatOf("u", "body", "uri", "https://example.com", strfmt.Default), realvalidate.FormatOf("u", "body", "uri", "https://example.com", realstrfmt.Default)},
		{"FormatOf bad date-time", validate.FormatOf("t", "body", "date-time", "yesterday", strfmt.Default), realvalidate.FormatOf("t", "body", "date-time", "yesterday", realstrfmt.Default)},
		{"FormatOf unknown", validate.FormatOf("t", "body", "no-such-format", "x", nil), realvalidate.FormatOf("t", "body", "no-such-format", "x", nil)},
	} {
		if got, want := str(c.fork), str(c.real); got != want {
			t.Errorf("%s: copy %s, real %s", c.name, got, want)
		}
	}
}
