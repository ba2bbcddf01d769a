package helm

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/strvals"
)

// Values builds the user-supplied values to render a chart with, as
// `helm template -f FILE… --set KEY=VALUE…` builds them: each values file in
// order, merged over the previous ones, then each set entry applied with
// Helm's --set syntax (strvals: "image.tag", "a.b[0].c", "{x,y}" lists,
// typed scalars). It follows MergeValues in Helm's
// pkg/cli/values/options.go: loader.LoadValues and loader.MergeMaps for
// files, strvals.ParseInto for --set.
//
// The chart's own defaults are not part of the result: Images coalesces the
// result over them (and over each subchart's defaults) as Helm does at
// render time (pkg/chart/common/util/values.go ToRenderValues), so a value
// given here overrides the default of the same key.
//
// A set entry is applied as `--set KEY=VALUE` would be, so VALUE keeps
// Helm's meaning of commas and braces. The entries of a map have no order;
// they are applied sorted by key, so that "a" comes before "a.b" and the
// result does not depend on map iteration.
func Values(files [][]byte, set map[string]string) (map[string]any, error) {
	base := map[string]any{}
	for i, raw := range files {
		cur, err := loader.LoadValues(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("values file %d: %w", i+1, err)
		}
		base = loader.MergeMaps(base, cur)
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == "" {
			return nil, fmt.Errorf("set: empty key")
		}
		if err := strvals.ParseInto(k+"="+set[k], base); err != nil {
			return nil, fmt.Errorf("set %s: %w", k, err)
		}
	}
	return base, nil
}
