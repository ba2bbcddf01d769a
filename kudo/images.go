package kudo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/internal/lazyregexp"
)

// ImageUse is one image a package's templates deploy.
type ImageUse struct {
	// Template is the template naming it, below templates/.
	Template string
	// Ref is the image reference as rendered.
	Ref string
}

// Images returns the images p's templates deploy, found by rendering
// every template as KUDO's engine renders it (kudobuilder/kudo
// pkg/engine/renderer/engine.go: Go text/template with sprig's text
// functions and toYaml, missingkey=error) with params.yaml's defaults as
// .Params and placeholder instance metadata, then reading every `image:`
// string field of the rendered YAML documents. A template that does not
// render with defaults alone (it reads a parameter without default, or a
// pipe's output) is read instead for its literal `image:` fields (values
// without template actions), and one rendering to invalid YAML for its
// rendered `image:` lines; either fallback is reported as a warning.
func Images(p *Package, instance string) ([]ImageUse, []string) {
	vals := renderValues(p, instance)
	var out []ImageUse
	var warnings []string
	for _, name := range p.templateNames() {
		text := p.Templates[name]
		rendered, err := render(name, text, vals)
		var refs []string
		if err == nil {
			refs, err = imageFields(rendered)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("operator %s: template %s renders to invalid YAML with params.yaml's defaults (%v); its image: lines are read instead", p.Operator.Name, name, err))
				refs = literalImages(rendered)
			}
		} else {
			warnings = append(warnings, fmt.Sprintf("operator %s: template %s does not render with params.yaml's defaults (%v); its literal image: fields are read instead", p.Operator.Name, name, err))
			refs = literalImages(text)
		}
		for _, r := range refs {
			out = append(out, ImageUse{Template: name, Ref: r})
		}
	}
	return out, warnings
}

// renderValues are the variables KUDO's renderer offers a template
// (pkg/engine/renderer/engine.go VariableMap WithDefaults, WithInstance,
// WithParameters), with params.yaml's defaults as KUDO passes them
// (ParamValue).
func renderValues(p *Package, instance string) map[string]any {
	if instance == "" {
		instance = p.Operator.Name
	}
	params := map[string]any{}
	for _, prm := range p.Params.Parameters {
		params[prm.Name] = ParamValue(prm)
	}
	return map[string]any{
		"OperatorName":    p.Operator.Name,
		"Name":            instance,
		"Namespace":       "default",
		"AppVersion":      p.Operator.AppVersion,
		"OperatorVersion": p.Operator.OperatorVersion,
		"PlanName":        "deploy",
		"PhaseName":       "PhaseName",
		"StepName":        "StepName",
		"Params":          params,
		"Pipes":           map[string]any{},
	}
}

// ParamValue is the value a template reads as .Params.NAME for prm's
// default, as KUDO passes it. `kubectl kudo install` stores every default
// as a string (kudobuilder/kudo pkg/kudoctl/packages/convert/parameters.go
// ParametersToCRDType calling pkg/util/convert/convert.go
// WrapParamValue: YAML for an array or map, fmt.Sprintf("%v") of the
// value otherwise, nil for none), the value read from params.yaml by
// sigs.k8s.io/yaml (pkg/kudoctl/packages/reader/parser.go), that is
// through JSON, where every number is a float64: `1000000` becomes
// "1e+06". The controller hands templates each parameter unwrapped by its
// type (pkg/controller/instance/instance_controller.go ParamsMap calling
// UnwrapParamValue): the YAML parsed back for an array or map, the string
// itself for every other type, "" for no default. So `{{ if eq
// .Params.ENABLED "true" }}` is how real operators test a boolean.
func ParamValue(prm Parameter) any {
	v := jsonValue(prm.Default)
	switch prm.Type {
	case "array":
		if v == nil {
			return []any(nil)
		}
		if a, ok := v.([]any); ok {
			return a
		}
		// WrapParamValue marshals the value; ToYAMLArray then fails
		// on a scalar: the controller refuses the instance. Keep the
		// scalar so the template's error is a template error.
		return v
	case "map":
		return v
	}
	if v == nil {
		return ""
	}
	return fmt.Sprintf("%v", v)
}

// jsonValue returns v as JSON would give it back (maps with string keys,
// numbers as float64), as sigs.k8s.io/yaml decodes params.yaml.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float32:
		return float64(x)
	}
	return v
}

// funcMap is KUDO's: sprig's text functions without those that read the
// controller's environment, plus toYaml.
func funcMap() template.FuncMap {
	f := sprig.TxtFuncMap()
	for _, n := range []string{"env", "expandenv", "base", "dir", "clean", "ext", "isAbs"} {
		delete(f, n)
	}
	f["toYaml"] = func(v any) string {
		b, err := yaml.Marshal(v)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return f
}

func render(name, text string, vals map[string]any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcMap()).Parse(text)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, vals); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// imageFields returns the string values of every `image` key of the
// YAML documents in text, in document order.
func imageFields(text string) ([]string, error) {
	dec := yaml.NewDecoder(strings.NewReader(text))
	var out []string
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		walkImages(&n, &out)
	}
	return out, nil
}

func walkImages(n *yaml.Node, out *[]string) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			walkImages(c, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "image" && v.Kind == yaml.ScalarNode && v.Tag == "!!str" && strings.TrimSpace(v.Value) != "" {
				*out = append(*out, strings.TrimSpace(v.Value))
				continue
			}
			walkImages(v, out)
		}
	}
}

// literalImage matches an `image:` field whose value holds no template
// action.
var literalImage = lazyregexp.New(`(?m)^[\s-]*image:\s*["']?([^\s"'{}]+)["']?\s*$`)

func literalImages(text string) []string {
	var out []string
	for _, m := range literalImage.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}
