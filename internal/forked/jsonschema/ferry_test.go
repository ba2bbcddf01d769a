package jsonschema_test

// ferry's tests of its copy of santhosh-tekuri/jsonschema v6.0.3 (see
// UPSTREAM.md): the copy compiles and validates exactly as the real module
// does, and compiles no meta-schema before the first Compile.

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	upstream "github.com/santhosh-tekuri/jsonschema/v6"

	fork "github.com/ferryhq/ferry/internal/forked/jsonschema"
)

// validate runs what Helm's ValidateAgainstSingleSchema
// (helm.sh/helm/v4 pkg/chart/common/util/jsonschema.go) runs, with one
// library or the other: unmarshal with UseNumber, add the schema as
// file:///values.schema.json, compile, validate. It returns the stage that
// failed and the error's text.
func validate(useFork bool, schemaJSON []byte, values any) string {
	if useFork {
		doc, err := fork.UnmarshalJSON(bytes.NewReader(schemaJSON))
		if err != nil {
			return "unmarshal: " + err.Error()
		}
		c := fork.NewCompiler()
		if err := c.AddResource("file:///values.schema.json", doc); err != nil {
			return "add: " + err.Error()
		}
		sch, err := c.Compile("file:///values.schema.json")
		if err != nil {
			return "compile: " + err.Error()
		}
		if err := sch.Validate(values); err != nil {
			var ve *fork.ValidationError
			if errors.As(err, &ve) {
				return fmt.Sprintf("validate: %v\n%s", err, jsonOf(ve.DetailedOutput()))
			}
			return "validate: " + err.Error()
		}
		return "ok"
	}
	doc, err := upstream.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return "unmarshal: " + err.Error()
	}
	c := upstream.NewCompiler()
	if err := c.AddResource("file:///values.schema.json", doc); err != nil {
		return "add: " + err.Error()
	}
	sch, err := c.Compile("file:///values.schema.json")
	if err != nil {
		return "compile: " + err.Error()
	}
	if err := sch.Validate(values); err != nil {
		var ve *upstream.ValidationError
		if errors.As(err, &ve) {
			return fmt.Sprintf("validate: %v\n%s", err, jsonOf(ve.DetailedOutput()))
		}
		return "validate: " + err.Error()
	}
	return "ok"
}

// jsonOf is v as JSON, the form in which a validation's detailed output
// is compared.
func jsonOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "unmarshalable: " + err.Error()
	}
	return string(b)
}

// TestParity validates the same values against the same schemas, one per
// draft and feature, with the copy and with the real module, and wants the
// same verdict and the same error text.
func TestParity(t *testing.T) {
	type tc struct {
		name   string
		schema string
		values []string // JSON documents
	}
	cases := []tc{
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"replicas":{"type":"integer","minimum":1}},"required":["replicas"]}`,
			[]string{`{"replicas":3}`, `{"replicas":0}`, `{}`, `{"replicas":"3"}`}},
		{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","properties":{"tags":{"type":"array","contains":{"const":"x"}}}}`,
			[]string{`{"tags":["x"]}`, `{"tags":["y"]}`}},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","if":{"properties":{"enabled":{"const":true}}},"then":{"required":["host"]},"properties":{"host":{"type":"string","format":"hostname"}}}`,
			[]string{`{"enabled":true,"host":"a.example"}`, `{"enabled":true}`, `{"enabled":false}`}},
		{"draft-2019-09", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"a":{"type":"string"}},"unevaluatedProperties":false}`,
			[]string{`{"a":"x"}`, `{"a":"x","b":1}`}},
		{"draft-2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"port":{"type":"integer","maximum":65535}},"type":"object","properties":{"ports":{"type":"array","prefixItems":[{"$ref":"#/$defs/port"}],"items":{"type":"string"}}}}`,
			[]string{`{"ports":[80,"x"]}`, `{"ports":[70000]}`, `{"ports":[80,81]}`}},
		{"no $schema (latest draft)", `{"type":"object","additionalProperties":{"type":"boolean"}}`,
			[]string{`{"a":true}`, `{"a":1}`}},
		{"invalid schema (fails the meta-schema)", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"objekt"}`,
			[]string{`{}`}},
		{"invalid schema, latest draft", `{"minimum":"one"}`, []string{`{}`}},
		{"unknown $ref", `{"$ref":"#/definitions/missing"}`, []string{`{}`}},
		{"not JSON", `{"type":`, []string{`{}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range c.values {
				var doc any
				if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
					t.Fatal(err)
				}
				got, want := validate(true, []byte(c.schema), doc), validate(false, []byte(c.schema), doc)
				if got != want {
					t.Errorf("values %s:\n copy: %s\n real: %s", v, got, want)
				}
			}
		})
	}
}

// TestParityRealCharts validates each real chart's values.yaml against its
// own values.schema.json (testdata/realworld/helm, every chart and
// subchart that has one), as helm template would, and the same values
// with each top-level key's type changed, with both libraries.
func TestParityRealCharts(t *testing.T) {
	charts, err := filepath.Glob("../../../testdata/realworld/helm/*.tgz")
	if err != nil || len(charts) == 0 {
		t.Fatalf("no real charts: %v", err)
	}
	schemas := 0
	for _, archive := range charts {
		files := untar(t, archive)
		for name, schema := range files {
			if path.Base(name) != "values.schema.json" {
				continue
			}
			schemas++
			var values map[string]any
			if err := yaml.Unmarshal(files[path.Join(path.Dir(name), "values.yaml")], &values); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			variants := []map[string]any{values}
			for k, v := range values {
				bad := map[string]any{}
				for k2, v2 := range values {
					bad[k2] = v2
				}
				switch v.(type) {
				case string:
					bad[k] = 1
				default:
					bad[k] = "not-" + k
				}
				variants = append(variants, bad)
			}
			for i, v := range variants {
				got, want := validate(true, schema, v), validate(false, schema, v)
				if got != want {
					t.Errorf("%s %s variant %d:\n copy: %.400s\n real: %.400s", filepath.Base(archive), name, i, got, want)
				}
			}
		}
	}
	t.Logf("%d values.schema.json files from %d charts", schemas, len(charts))
}

func untar(t *testing.T, archive string) map[string][]byte {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = b
	}
}

// TestMetaSchemasLazy checks the one patch: linking the package compiles
// nothing, the first Compile compiles the meta-schemas. It runs in a fresh
// test process (this binary again), where no test has compiled yet.
func TestMetaSchemasLazy(t *testing.T) {
	if os.Getenv("FERRY_JSONSCHEMA_CHILD") == "1" {
		if fork.MetaSchemasCompiled() {
			t.Fatal("meta-schemas compiled before the first Compile")
		}
		if _, err := fork.NewCompiler().Compile("http://json-schema.org/draft-07/schema"); err != nil {
			t.Fatal(err)
		}
		if !fork.MetaSchemasCompiled() {
			t.Fatal("meta-schemas not compiled by the first Compile")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMetaSchemasLazy$", "-test.count=1")
	cmd.Env = append(os.Environ(), "FERRY_JSONSCHEMA_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestParityNumbers covers every message that prints a number, with
// numbers of four digits and more (x/text's English printer, which
// upstream prints with, groups digits and writes large and small floats
// with a superscript exponent; the copy prints with a stand-in, see
// UPSTREAM.md), in the schema and in the values.
func TestParityNumbers(t *testing.T) {
	seq := func(n int, f func(i int) string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = f(i)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	obj := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	cases := []struct {
		name   string
		schema string
		values []string
	}{
		{"minimum", `{"minimum":1000000}`, []string{`5`, `1234.5`, `-0.00001`, `999999.5`}},
		{"maximum", `{"maximum":1500}`, []string{`2000000.25`, `1e21`, `1234567890123`, `1500.0001`}},
		{"maximum small", `{"maximum":0.00001}`, []string{`0.0001`, `0.000012345`}},
		{"exclusiveMinimum", `{"exclusiveMinimum":1000.5}`, []string{`1000.5`, `-12345.678`}},
		{"exclusiveMaximum", `{"exclusiveMaximum":999.5}`, []string{`1234567`, `1e300`}},
		{"exclusive draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","minimum":5000,"exclusiveMinimum":true,"maximum":6000,"exclusiveMaximum":true}`, []string{`5000`, `6000`, `1e7`}},
		{"multipleOf", `{"multipleOf":1000}`, []string{`12345.5`, `1000001`}},
		{"multipleOf small", `{"multipleOf":0.00001}`, []string{`0.000015`}},
		{"minLength", `{"minLength":1000}`, []string{`"abc"`}},
		{"maxLength", `{"maxLength":2}`, []string{`"` + strings.Repeat("x", 1500) + `"`}},
		{"minItems", `{"minItems":1000}`, []string{`[1]`}},
		{"maxItems", `{"maxItems":1}`, []string{seq(1200, strconv.Itoa)}},
		{"minProperties", `{"minProperties":1000}`, []string{`{}`}},
		{"maxProperties", `{"maxProperties":1}`, []string{obj(1001)}},
		{"additionalItems", `{` + d7 + `"items":[{}],"additionalItems":false}`, []string{seq(1200, strconv.Itoa)}},
		{"minContains", `{"contains":{"const":1},"minContains":1000}`, []string{`[1,1]`, `[2]`}},
		{"maxContains", `{"contains":{"const":1},"maxContains":1}`, []string{seq(1500, func(int) string { return "1" })}},
		{"uniqueItems", `{"uniqueItems":true}`, []string{seq(1002, func(i int) string { return strconv.Itoa(min(i, 1000)) })}},
		{"oneOf", `{"oneOf":` + seq(1002, func(i int) string { return strconv.FormatBool(i >= 1000) }) + `}`, []string{`1`}},
		{"oneOf none", `{"oneOf":[false,false]}`, []string{`1`}},
		{"enum", `{"enum":[1000,2000.5,1e21]}`, []string{`3`}},
		{"const", `{"const":1234567}`, []string{`1`}},
		{"format uuid", `{` + d7 + `"format":"uuid"}`, []string{`"1234"`, `"12345678-1234-1234-1234-1234567890"`, `"12345678-1234-1234-1234-12345678901z"`}},
		{"format ipv4", `{` + d7 + `"format":"ipv4"}`, []string{`"1000.1.1.1"`}},
		{"format duration", `{` + d7 + `"format":"duration"}`, []string{`"P1000X"`}},
		{"format date-time", `{` + d7 + `"format":"date-time"}`, []string{`"2020-13-01T00:00:00Z"`}},
		{"type", `{"properties":{"n":{"type":"integer"}}}`, []string{`{"n":1234.5}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range c.values {
				var doc any
				if err := yaml.Unmarshal([]byte(v), &doc); err != nil {
					t.Fatal(err)
				}
				got, want := validate(true, []byte(c.schema), doc), validate(false, []byte(c.schema), doc)
				if got != want {
					t.Errorf("values %.80s:\n copy: %.600s\n real: %.600s", v, got, want)
				}
				if got == "ok" {
					t.Errorf("values %.80s: valid, want an error that prints a number", v)
				}
			}
		})
	}
}
