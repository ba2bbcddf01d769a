// Package helm is the Helm chart format: OCI charts as `helm push` writes
// them, charts in classic HTTP repositories (index.yaml plus .tgz), and
// local charts (Chart.yaml, a chart directory or a .tgz) as roots. It
// follows Chart.yaml's dependencies as `helm dependency build` does, and
// finds the images a chart deploys by rendering it with Helm's engine.
package helm

import (
	"helm.sh/helm/v4/pkg/registry"
)

// Media types of an OCI chart, Helm's own constants
// (helm.sh/helm/v4/pkg/registry/constants.go).
const (
	// ConfigMediaType is the config of a chart manifest: Chart.yaml's
	// metadata as JSON.
	ConfigMediaType = registry.ConfigMediaType
	// ChartLayerMediaType is the layer holding the chart's .tgz bytes.
	ChartLayerMediaType = registry.ChartLayerMediaType
	// ProvLayerMediaType is the optional provenance (.prov) layer.
	ProvLayerMediaType = registry.ProvLayerMediaType
	// LegacyChartLayerMediaType is the chart layer media type of Helm
	// before 3.8, still read by Helm.
	LegacyChartLayerMediaType = registry.LegacyChartLayerMediaType
)
