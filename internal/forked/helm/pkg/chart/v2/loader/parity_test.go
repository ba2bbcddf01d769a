package loader_test

// ferry: this file is not Helm's. It holds LoadValues, whose document
// reader the fork copies from k8s.io/apimachinery (yamlreader.go), to the
// real helm.sh/helm/v4.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	helmloader "helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
)

// TestLoadValuesMatchesHelm: LoadValues reads and merges the same
// documents as Helm's, and refuses the same input with the same error.
func TestLoadValuesMatchesHelm(t *testing.T) {
	long := "a: " + strings.Repeat("x", 4093) // a final unterminated line of 4096 bytes (helm#32506)
	for _, in := range []string{
		"",
		"a: 1",
		"a: 1\n",
		"a: 1\nb:\n  c: [1, 2]\n",
		"---\na: 1\n---\nb: 2\n",
		"a: {x: 1, y: 2}\n---\na: {y: 3}\n--- # comment\nc: 4",
		"a: 1\n--- not a comment\nb: 2\n",
		"---\n---\n",
		"a: [\n",
		"- 1\n- 2\n",
		"a: 1\n...\n",
		"a: 1\r\n---\r\nb: 2\r\n",
		long,
		long + "\n---\nb: 1",
		"key: |\n  ---\n  text\n",
		"---a: 1\n",
	} {
		fork, ferr := loader.LoadValues(strings.NewReader(in))
		helm, herr := helmloader.LoadValues(strings.NewReader(in))
		if got, want := describe(fork, ferr), describe(helm, herr); got != want {
			t.Errorf("LoadValues(%.60q):\n  fork %.300s\n  helm %.300s", in, got, want)
		}
	}
}

func describe(v map[string]any, err error) string {
	if err != nil {
		return fmt.Sprintf("error %T: %v", err, err)
	}
	data, jerr := json.Marshal(v)
	if jerr != nil {
		return "json: " + jerr.Error()
	}
	return string(data)
}
