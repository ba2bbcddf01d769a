// Package helm is the Helm chart format: OCI charts as `helm push` writes
// them, charts in classic HTTP repositories (index.yaml plus .tgz), and
// local charts (Chart.yaml, a chart directory or a .tgz) as roots. It
// follows Chart.yaml's dependencies as `helm dependency build` does, and
// finds the images a chart deploys by rendering it with Helm's engine.
//
// Helm's chart loader, values and engine come from internal/forked/helm,
// Helm v4.3.1's packages without the Kubernetes client libraries they
// import (its UPSTREAM.md; its tests render every vendored chart with it
// and with Helm and require the same output). Only pkg/provenance and
// pkg/strvals are imported from helm.sh/helm/v4 itself.
package helm

// Media types of an OCI chart, copied from Helm's own constants
// (helm.sh/helm/v4/pkg/registry/constants.go, v4.3.1): importing that
// package would link Helm's registry client. TestMediaTypesAreHelms
// pins them to Helm's.
const (
	// ConfigMediaType is the config of a chart manifest: Chart.yaml's
	// metadata as JSON.
	ConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	// ChartLayerMediaType is the layer holding the chart's .tgz bytes.
	ChartLayerMediaType = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// ProvLayerMediaType is the optional provenance (.prov) layer.
	ProvLayerMediaType = "application/vnd.cncf.helm.chart.provenance.v1.prov"
	// LegacyChartLayerMediaType is the chart layer media type of Helm
	// before 3.8, still read by Helm.
	LegacyChartLayerMediaType = "application/tar+gzip"
)
