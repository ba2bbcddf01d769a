package mirrorset

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/trust"
)

// yamlPlaceOf names, in ferry.yaml's terms, where a value of each Go type
// sits, and lists the keys it takes: the decoder's messages name Go types
// ("field x not found in type mirrorset.MirrorSet"), which the user never
// wrote. A switch, not a map, which an initialiser would build at every
// start: only a ferry.yaml that fails to decode needs it.
func yamlPlaceOf(goType string) (yamlPlace, bool) {
	switch goType {
	case "mirrorset.MirrorSet":
		return yamlPlace{"the top level", reflect.TypeFor[MirrorSet]()}, true
	case "mirrorset.Package":
		return yamlPlace{"an entry of packages", reflect.TypeFor[Package]()}, true
	case "[]mirrorset.Package":
		return yamlPlace{"packages", nil}, true
	case "mirrorset.Replace":
		return yamlPlace{"an entry of replace", reflect.TypeFor[Replace]()}, true
	case "[]mirrorset.Replace":
		return yamlPlace{"replace", nil}, true
	case "mirrorset.plain":
		return yamlPlace{"an entry of use", reflect.TypeFor[Use]()}, true
	case "mirrorset.Use":
		return yamlPlace{"an entry of use", reflect.TypeFor[Use]()}, true
	case "map[string]mirrorset.Use":
		return yamlPlace{"use", nil}, true
	case "mirrorset.Mirror":
		return yamlPlace{"mirror", reflect.TypeFor[Mirror]()}, true
	case "mirrorset.LockPolicy":
		return yamlPlace{"lock", reflect.TypeFor[LockPolicy]()}, true
	case "trust.plain":
		return yamlPlace{"trust", reflect.TypeFor[trust.Config]()}, true
	case "trust.RuleConfig":
		return yamlPlace{"a trust rule", reflect.TypeFor[trust.RuleConfig]()}, true
	case "[]trust.RuleConfig":
		return yamlPlace{"trust rules", nil}, true
	}
	return yamlPlace{}, false
}

// yamlPlace is where a Go type sits in ferry.yaml and, for a struct, the
// type whose keys it lists.
type yamlPlace struct {
	where string
	typ   reflect.Type
}

var (
	reUnknownField = lazyregexp.New("^(line \\d+: )?field (\\S+) not found in type (\\S+)$")
	reCannot       = lazyregexp.New("^(line \\d+: )?cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
)

// yamlKind words a YAML tag and the shape a Go type wants ("" for
// another tag).
func yamlKind(tag string) string {
	switch tag {
	case "str":
		return "a string"
	case "seq":
		return "a list"
	case "map":
		return "a mapping"
	case "int", "float":
		return "a number"
	case "bool":
		return "true or false"
	case "null":
		return "nothing"
	}
	return ""
}

// userYAMLError rewrites the decoder's type errors in ferry.yaml's terms:
// the line, the key and where it sits, with the keys that place takes,
// never a Go type. Other errors are returned as they are.
func userYAMLError(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	msgs := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		msgs = append(msgs, userYAMLMessage(e))
	}
	// What wrapped the type error ("trust: ") stays.
	prefix, _ := strings.CutSuffix(err.Error(), te.Error())
	return errors.New(prefix + strings.Join(msgs, "; "))
}

func userYAMLMessage(msg string) string {
	if m := reUnknownField.FindStringSubmatch(msg); m != nil {
		out := fmt.Sprintf("%sunknown key %q", m[1], m[2])
		if p, ok := yamlPlaceOf(m[3]); ok {
			out += " in " + p.where
			if keys := yamlKeys(p.typ); len(keys) > 0 {
				out += " (known keys: " + strings.Join(keys, ", ") + ")"
			}
		}
		return out
	}
	if m := reCannot.FindStringSubmatch(msg); m != nil {
		got := yamlKind(m[2])
		if got == "" {
			got = m[2]
		}
		if m[3] != "" {
			got += fmt.Sprintf(" (%s)", m[3])
		}
		out := fmt.Sprintf("%sgot %s", m[1], got)
		if p, ok := yamlPlaceOf(m[4]); ok {
			out += " for " + p.where
		}
		return out + ", want " + wantKind(m[4])
	}
	return msg
}

// wantKind words the YAML shape a Go type name decodes from.
func wantKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["), strings.Contains(goType, "."):
		return "a mapping"
	case goType == "bool":
		return "true or false"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "a string"
}

// yamlKeys lists the keys a struct type takes, from its yaml tags.
func yamlKeys(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || strings.Contains(opts, "inline") || !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys = append(keys, name)
	}
	sort.Strings(keys)
	return keys
}
