// Package charttest builds Helm charts, pushes them and writes repository
// indexes with Helm's own library, for tests.
package charttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/provenance"
	"helm.sh/helm/v4/pkg/registry"
	repo "helm.sh/helm/v4/pkg/repo/v1"
	"sigs.k8s.io/yaml"
)

// ChartSpec describes a chart built with Helm's own library.
type ChartSpec struct {
	Name, Version string
	// AppVersion is Chart.yaml's appVersion, if any.
	AppVersion string
	// Dependencies are Chart.yaml's dependencies.
	Dependencies []*chart.Dependency
	// Templates maps a file name below templates/ to its text.
	Templates map[string]string
	// Values are the chart's default values (values.yaml).
	Values map[string]any
	// Annotations are Chart.yaml's annotations.
	Annotations map[string]string
	// Vendored are subcharts carried in charts/.
	Vendored []*chart.Chart
}

// Chart returns the chart spec describes.
func Chart(spec ChartSpec) *chart.Chart {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{
			APIVersion:   chart.APIVersionV2,
			Name:         spec.Name,
			Version:      spec.Version,
			AppVersion:   spec.AppVersion,
			Type:         "application",
			Dependencies: spec.Dependencies,
			Annotations:  spec.Annotations,
		},
		Values: spec.Values,
	}
	for name, text := range spec.Templates {
		ch.Templates = append(ch.Templates, &common.File{Name: "templates/" + name, Data: []byte(text)})
	}
	if spec.Values != nil {
		// chartutil.Save writes values.yaml from the chart's raw files.
		data, err := yaml.Marshal(spec.Values)
		if err != nil {
			panic(err)
		}
		ch.Raw = append(ch.Raw, &common.File{Name: chartutil.ValuesfileName, Data: data})
	}
	for _, sub := range spec.Vendored {
		ch.AddDependency(sub)
	}
	return ch
}

// ChartArchive packages a chart as `helm package` does (Helm's
// chartutil.Save) and returns the .tgz bytes.
func ChartArchive(ch *chart.Chart) ([]byte, error) {
	dir, err := os.MkdirTemp("", "ferry-chart-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path, err := chartutil.Save(ch, dir)
	if err != nil {
		return nil, fmt.Errorf("packaging chart %s: %w", ch.Name(), err)
	}
	return os.ReadFile(path)
}

// SaveChartDir writes a chart as a directory under dir (what `helm
// create` leaves for a chart being built) and returns its path.
func SaveChartDir(ch *chart.Chart, dir string) (string, error) {
	if err := chartutil.SaveDir(ch, dir); err != nil {
		return "", err
	}
	return filepath.Join(dir, ch.Name()), nil
}

// PushChart pushes a chart archive to HOST/REPO/NAME:VERSION with Helm's
// own registry client, over plain HTTP, as `helm push` does, and returns
// the manifest digest. created fixes the creation annotation.
func PushChart(tgz []byte, repoRef string, created time.Time) (string, error) {
	ch, err := loadArchive(tgz)
	if err != nil {
		return "", err
	}
	c, err := helmClient()
	if err != nil {
		return "", err
	}
	// Helm writes "+" as "_" itself (pkg/registry/reference.go).
	ref := fmt.Sprintf("%s/%s:%s", repoRef, ch.Name(), ch.Metadata.Version)
	res, err := c.Push(tgz, ref, registry.PushOptCreationTime(created.UTC().Format(time.RFC3339)))
	if err != nil {
		return "", fmt.Errorf("helm push %s: %w", ref, err)
	}
	return res.Manifest.Digest, nil
}

// HelmClient returns Helm's registry client for loopback registries, with
// a credentials file of its own.
func HelmClient() (*registry.Client, error) { return helmClient() }

func helmClient() (*registry.Client, error) {
	dir, err := os.MkdirTemp("", "ferry-helm-")
	if err != nil {
		return nil, err
	}
	return registry.NewClient(
		registry.ClientOptPlainHTTP(),
		registry.ClientOptWriter(io.Discard),
		registry.ClientOptCredentialsFile(filepath.Join(dir, "config.json")),
	)
}

// ChartIndex writes a classic repository's index.yaml for archives (file
// name -> .tgz bytes) served at baseURL, with Helm's repo package, and
// returns its bytes; created fixes every entry's creation time.
func ChartIndex(archives map[string][]byte, baseURL string, created time.Time) ([]byte, error) {
	idx := repo.NewIndexFile()
	for name, data := range archives {
		ch, err := loadArchive(data)
		if err != nil {
			return nil, err
		}
		if err := idx.MustAdd(ch.Metadata, name, baseURL, sha256Hex(data)); err != nil {
			return nil, err
		}
	}
	idx.SortEntries()
	for _, vs := range idx.Entries {
		for _, v := range vs {
			v.Created = created
		}
	}
	dir, err := os.MkdirTemp("", "ferry-index-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "index.yaml")
	if err := idx.WriteFile(path, 0o644); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func loadArchive(tgz []byte) (*chart.Chart, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("loading chart archive: %w", err)
	}
	return ch, nil
}

// sha256Hex is the digest `helm repo index` records: hex, no algorithm
// (helm's pkg/provenance DigestFile).
func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Provenance returns the .prov `helm package --sign` writes for archive
// (filename) with signer: Helm's own provenance.Signatory.ClearSign over
// the chart's metadata as YAML and the archive's sha256
// (helm.sh/helm/v4/pkg/action/package.go Clearsign).
func Provenance(signer *openpgp.Entity, archive []byte, filename string) ([]byte, error) {
	ch, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		return nil, err
	}
	meta, err := yaml.Marshal(ch.Metadata)
	if err != nil {
		return nil, err
	}
	out, err := (&provenance.Signatory{Entity: signer, KeyRing: openpgp.EntityList{signer}}).ClearSign(archive, filename, meta)
	if err != nil {
		return nil, err
	}
	return []byte(out), nil
}
