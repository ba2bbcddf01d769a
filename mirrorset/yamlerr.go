package mirrorset

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/trust"
)

// yamlPlaces names, in ferry.yaml's terms, where a value of each Go type
// sits, and lists the keys it takes: the decoder's messages name Go types
// ("field x not found in type mirrorset.MirrorSet"), which the user never
// wrote. It is built on first use: only a ferry.yaml that fails to
// decode needs it.
var yamlPlaces = sync.OnceValue(func() map[string]yamlPlace {
	return map[string]yamlPlace{
		"mirrorset.MirrorSet":      {"the top level", reflect.TypeFor[MirrorSet]()},
		"mirrorset.Package":        {"an entry of packages", reflect.TypeFor[Package]()},
		"[]mirrorset.Package":      {"packages", nil},
		"mirrorset.Replace":        {"an entry of replace", reflect.TypeFor[Replace]()},
		"[]mirrorset.Replace":      {"replace", nil},
		"mirrorset.plain":          {"an entry of use", reflect.TypeFor[Use]()},
		"mirrorset.Use":            {"an entry of use", reflect.TypeFor[Use]()},
		"map[string]mirrorset.Use": {"use", nil},
		"mirrorset.Mirror":         {"mirror", reflect.TypeFor[Mirror]()},
		"mirrorset.LockPolicy":     {"lock", reflect.TypeFor[LockPolicy]()},
		"trust.plain":              {"trust", reflect.TypeFor[trust.Config]()},
		"trust.RuleConfig":         {"a trust rule", reflect.TypeFor[trust.RuleConfig]()},
		"[]trust.RuleConfig":       {"trust rules", nil},
	}
})

// yamlPlace is where a Go type sits in ferry.yaml and, for a struct, the
// type whose keys it lists.
type yamlPlace struct {
	where string
	typ   reflect.Type
}

var (
	reUnknownField = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^(line \\d+: )?field (\\S+) not found in type (\\S+)$")
	})
	reCannot = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^(line \\d+: )?cannot unmarshal !!(\\w+)(?: `(.*)`)? into (\\S+)$")
	})
)

// yamlKinds words a YAML tag and the shape a Go type wants.
var yamlKinds = map[string]string{"str": "a string", "seq": "a list", "map": "a mapping", "int": "a number", "float": "a number", "bool": "true or false", "null": "nothing"}

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
	if m := reUnknownField().FindStringSubmatch(msg); m != nil {
		out := fmt.Sprintf("%sunknown key %q", m[1], m[2])
		if p, ok := yamlPlaces()[m[3]]; ok {
			out += " in " + p.where
			if keys := yamlKeys(p.typ); len(keys) > 0 {
				out += " (known keys: " + strings.Join(keys, ", ") + ")"
			}
		}
		return out
	}
	if m := reCannot().FindStringSubmatch(msg); m != nil {
		got := yamlKinds[m[2]]
		if got == "" {
			got = m[2]
		}
		if m[3] != "" {
			got += fmt.Sprintf(" (%s)", m[3])
		}
		out := fmt.Sprintf("%sgot %s", m[1], got)
		if p, ok := yamlPlaces()[m[4]]; ok {
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
