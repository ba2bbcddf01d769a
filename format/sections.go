package format

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

// Sections are the top-level YAML keys formats own in ferry.yaml and
// ferry.lock (`mixins:`, `porter:`, `crossplane:`), kept as YAML nodes by
// the file that holds them and read and written by their format alone.
type Sections map[string]yaml.Node

// Decode decodes the section key into v. It reports false, leaving v
// alone, when there is no such section.
func (s Sections) Decode(key string, v any) (bool, error) {
	n, ok := s[key]
	if !ok {
		return false, nil
	}
	return true, n.Decode(v)
}

// Set sets the section key to v in *s, creating the map when needed; a
// nil v, or an empty slice or map, removes it.
func (s *Sections) Set(key string, v any) error {
	if isEmpty(v) {
		delete(*s, key)
		return nil
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return err
	}
	if *s == nil {
		*s = Sections{}
	}
	(*s)[key] = n
	return nil
}

// Merge sets every section of from in *s, over what *s holds.
func (s *Sections) Merge(from Sections) {
	for k, n := range from {
		if *s == nil {
			*s = Sections{}
		}
		(*s)[k] = n
	}
}

func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map:
		return rv.Len() == 0
	case reflect.Pointer, reflect.Interface:
		return rv.IsNil()
	}
	return false
}
