package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
)

// InstallDir is the install directory's folder of chart archives.
const InstallDir = "charts"

var _ install.Writer = Format{}

// WriteInstall writes, for every chart of the plan, charts/NAME-VERSION.tgz,
// the chart layer's exact bytes (what `helm pull` saves), read from the
// install's OCI layout, where every blob was checked against its digest as
// it was fetched, and checked again here: `helm install
// ./charts/NAME-VERSION.tgz` then needs no registry. It also writes
// helm/NAME-VERSION/ (writeHandOff), the chart unpacked with its
// dependencies pointed at the mirror and a Chart.lock to match, so that
// `helm dependency build` fetches them from the mirror alone.
func (Format) WriteInstall(dir string, l *lock.Lock, plan *install.Plan) error {
	var store *oci.ReadOnlyStore
	type loaded struct {
		p        *lock.Package
		name, vv string
	}
	byStep := map[string]loaded{}
	read := func(st install.Step) (string, string, error) {
		if store == nil {
			s, err := oci.NewFromFS(context.Background(), os.DirFS(dir))
			if err != nil {
				return "", "", fmt.Errorf("reading the install's layout: %w", err)
			}
			store = s
		}
		p := l.PackageAt(st.Source, st.Digest)
		if p == nil {
			return "", "", fmt.Errorf("not in the lock")
		}
		_, name, version, err := readChart(store, p.Descriptor())
		if err != nil {
			return "", "", err
		}
		byStep[st.Source+"@"+st.Digest] = loaded{p, name, version}
		return name, version, nil
	}
	charts, err := handOffCharts(plan, read)
	if err != nil {
		return err
	}
	taken := map[string]bool{}
	for _, st := range plan.Steps {
		c, ok := byStep[st.Source+"@"+st.Digest]
		if !ok {
			continue
		}
		// One chart archive in memory at a time.
		data, _, _, err := readChart(store, c.p.Descriptor())
		if err != nil {
			return fmt.Errorf("chart %s@%s: %w", st.Source, st.Digest, err)
		}
		// helm package and helm pull name an archive NAME-VERSION.tgz
		// (helm's pkg/chart/v2/util/save.go Save).
		name := filepath.Base(c.name) + "-" + filepath.Base(c.vv) + ".tgz"
		if err := install.WriteFile(dir, InstallDir+"/"+name, data, 0o644); err != nil {
			return fmt.Errorf("chart %s@%s: %w", st.Source, st.Digest, err)
		}
		if err := writeHandOff(dir, c.p, data, charts, taken); err != nil {
			return fmt.Errorf("chart %s@%s: %s/: %w", st.Source, st.Digest, HandOffDir, err)
		}
	}
	return nil
}

// readChart reads one chart's archive, name and version.
func readChart(store *oci.ReadOnlyStore, desc ocispec.Descriptor) ([]byte, string, string, error) {
	ctx := context.Background()
	raw, err := fetchCapped(ctx, store, desc, 4<<20)
	if err != nil {
		return nil, "", "", fmt.Errorf("manifest: %w", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", "", fmt.Errorf("manifest: %w", err)
	}
	layer, ok := chartLayer(m)
	if !ok {
		return nil, "", "", fmt.Errorf("manifest has no chart layer")
	}
	data, err := fetchCapped(ctx, store, layer, MaxChartSize)
	if err != nil {
		return nil, "", "", fmt.Errorf("chart layer: %w", err)
	}
	var cfg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	cfgData, err := fetchCapped(ctx, store, m.Config, 4<<20)
	if err != nil {
		return nil, "", "", fmt.Errorf("chart config: %w", err)
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil || cfg.Name == "" || cfg.Version == "" {
		return nil, "", "", fmt.Errorf("chart config names no chart and version")
	}
	return data, cfg.Name, cfg.Version, nil
}
