package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content/oci"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
)

// InstallDir is the install directory's folder of chart archives.
const InstallDir = "charts"

var _ install.Writer = Format{}

// WriteInstall writes charts/NAME-VERSION.tgz for every chart of the
// plan, the chart layer's exact bytes (what `helm pull` saves), read from
// the install's OCI layout, where every blob was checked against its
// digest as it was fetched, and checked again here. `helm install
// ./charts/NAME-VERSION.tgz` then needs no registry.
func (Format) WriteInstall(dir string, l *lock.Lock, plan *install.Plan) error {
	var store *oci.ReadOnlyStore
	for _, st := range plan.Steps {
		if st.Kind != format.KindHelmChart {
			continue
		}
		if store == nil {
			s, err := oci.NewFromFS(context.Background(), os.DirFS(dir))
			if err != nil {
				return fmt.Errorf("reading the install's layout: %w", err)
			}
			store = s
		}
		p := l.PackageAt(st.Source, st.Digest)
		if p == nil {
			return fmt.Errorf("chart %s@%s is not in the lock", st.Source, st.Digest)
		}
		if err := writeChart(dir, store, p.Descriptor()); err != nil {
			return fmt.Errorf("chart %s@%s: %w", st.Source, st.Digest, err)
		}
	}
	return nil
}

// writeChart writes one chart's archive.
func writeChart(dir string, store *oci.ReadOnlyStore, desc ocispec.Descriptor) error {
	ctx := context.Background()
	raw, err := fetchCapped(ctx, store, desc, 4<<20)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	layer, ok := chartLayer(m)
	if !ok {
		return fmt.Errorf("manifest has no chart layer")
	}
	data, err := fetchCapped(ctx, store, layer, MaxChartSize)
	if err != nil {
		return fmt.Errorf("chart layer: %w", err)
	}
	var cfg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	cfgData, err := fetchCapped(ctx, store, m.Config, 4<<20)
	if err != nil {
		return fmt.Errorf("chart config: %w", err)
	}
	if err := json.Unmarshal(cfgData, &cfg); err != nil || cfg.Name == "" || cfg.Version == "" {
		return fmt.Errorf("chart config names no chart and version")
	}
	// helm package and helm pull name an archive NAME-VERSION.tgz
	// (helm's pkg/chart/v2/util/save.go Save).
	name := filepath.Base(cfg.Name) + "-" + filepath.Base(cfg.Version) + ".tgz"
	return install.WriteFile(dir, InstallDir+"/"+name, data, 0o644)
}
