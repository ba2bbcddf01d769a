package lock

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestSchemaMatchesTypes checks that lock/schema.json describes exactly the
// fields the lock types write, so the two cannot drift apart.
func TestSchemaMatchesTypes(t *testing.T) {
	var s struct {
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]struct {
			Required   []string                   `json:"required"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(Schema, &s); err != nil {
		t.Fatalf("schema.json: %v", err)
	}
	// Sections and attributes belong to formats, which check their own
	// part of the schema: `mixins` (package mixin), `kudo` (package kudo)
	// and a package's `crossplane` attribute.
	// `untrusted` is ferry lock -o json's alone (the packages no trust
	// rule matches); the file never holds it.
	formatOwned := map[string]bool{"mixins": true, "kudo": true, "crossplane": true, "chartDigest": true, "tarballDigest": true, "untrusted": true, "warnings": true}
	without := func(props map[string]json.RawMessage) map[string]json.RawMessage {
		out := map[string]json.RawMessage{}
		for k, v := range props {
			if !formatOwned[k] {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name     string
		typ      reflect.Type
		props    map[string]json.RawMessage
		required []string
	}{
		{"Lock", reflect.TypeOf(Lock{}), without(s.Properties), s.Required},
		{"Package", reflect.TypeOf(Package{}), without(s.Defs["package"].Properties), s.Defs["package"].Required},
		{"Dependency", reflect.TypeOf(Dependency{}), s.Defs["dependency"].Properties, s.Defs["dependency"].Required},
		{"Image", reflect.TypeOf(Image{}), s.Defs["image"].Properties, s.Defs["image"].Required},
		{"Signature", reflect.TypeOf(Signature{}), s.Defs["signature"].Properties, s.Defs["signature"].Required},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields, always := yamlFields(tt.typ)
			var schema []string
			for p := range tt.props {
				schema = append(schema, p)
			}
			sort.Strings(schema)
			if !reflect.DeepEqual(fields, schema) {
				t.Errorf("type fields %v, schema properties %v", fields, schema)
			}
			if tt.required != nil {
				req := append([]string(nil), tt.required...)
				sort.Strings(req)
				for _, r := range req {
					if !contains(always, r) {
						t.Errorf("schema requires %q, which the type may omit", r)
					}
				}
			}
		})
	}
}

// yamlFields returns a struct's YAML field names, and those written even
// when empty.
func yamlFields(t reflect.Type) (all, always []string) {
	for i := 0; i < t.NumField(); i++ {
		tag := t.Field(i).Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || name == "-" {
			continue
		}
		all = append(all, name)
		if !strings.Contains(opts, "omitempty") {
			always = append(always, name)
		}
	}
	sort.Strings(all)
	return all, always
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
