package helm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"helm.sh/helm/v4/pkg/provenance"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/trust"
)

// Register declares what the format adds to the pipeline's packages
// (package formats' one initialiser calls it: an initialiser here would
// read in one more page of machine code at every start of every
// command). Calling it again changes nothing.
// For a Helm chart: its lock field chartDigest and its provenance check.
func Register() {
	lock.RegisterAttribute(AttributeChartDigest)
	trust.RegisterProvenance(ConfigMediaType, VerifyProvenance)
}

// VerifyProvenance checks the provenance file (.prov) of the OCI chart
// whose manifest is root, read through f, against the OpenPGP keyring at
// keyring, with Helm's own code: helm.sh/helm/v4/pkg/downloader
// chart_downloader.go VerifyChart (v4.3.1), which `helm verify`, `helm
// pull --verify` and `helm install --verify` run: provenance.NewFromKeyring
// reads the keyring (binary, armored or a GnuPG keybox), and
// Signatory.Verify checks the clearsigned message's OpenPGP signature by
// a key of the keyring, then that the message's files section gives the
// sha256 of the chart archive under its file name.
//
// The chart archive is the chart layer; the provenance, the
// application/vnd.cncf.helm.chart.provenance.v1.prov layer `helm push`
// writes beside it (helm.sh/helm/v4/pkg/registry/client.go Push) and
// ferry builds from a classic repository's CHART.tgz.prov
// (chartManifest). The file name is NAME-VERSION.tgz from the chart's
// metadata (the config): the name `helm package` gives the archive it
// signs (pkg/action/package.go Clearsign: filepath.Base of the archive)
// and the one `helm pull` of an OCI chart writes before verifying it
// (chart_downloader.go DownloadTo: REPO-TAG.tgz).
//
// A chart without a provenance layer is trust.ErrNoProvenance; a keyring
// that cannot be read is bad input; anything else that does not verify is
// an error saying why.
func VerifyProvenance(ctx context.Context, f content.Fetcher, root ocispec.Descriptor, keyring string) error {
	raw, err := content.FetchAll(ctx, f, root)
	if err != nil {
		return fmt.Errorf("reading chart manifest %s: %w", root.Digest, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("chart manifest %s: %w", root.Digest, err)
	}
	var chartLayer, provLayer *ocispec.Descriptor
	for i, l := range m.Layers {
		switch l.MediaType {
		case ChartLayerMediaType, LegacyChartLayerMediaType:
			chartLayer = &m.Layers[i]
		case ProvLayerMediaType:
			provLayer = &m.Layers[i]
		}
	}
	if chartLayer == nil {
		return fmt.Errorf("chart manifest %s has no chart layer", root.Digest)
	}
	if provLayer == nil {
		return fmt.Errorf("%w: chart manifest %s has no %s layer (the chart was published without `helm package --sign`)", trust.ErrNoProvenance, root.Digest, ProvLayerMediaType)
	}
	if chartLayer.Size > maxChartSize || provLayer.Size > maxProvSize || m.Config.Size > maxProvSize {
		return fmt.Errorf("chart manifest %s: a layer is over the size limit", root.Digest)
	}
	var meta struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	config, err := content.FetchAll(ctx, f, m.Config)
	if err != nil {
		return fmt.Errorf("reading chart config %s: %w", m.Config.Digest, err)
	}
	if err := json.Unmarshal(config, &meta); err != nil || meta.Name == "" || meta.Version == "" {
		return fmt.Errorf("chart config %s names no chart and version", m.Config.Digest)
	}
	archive, err := content.FetchAll(ctx, f, *chartLayer)
	if err != nil {
		return fmt.Errorf("reading chart archive %s: %w", chartLayer.Digest, err)
	}
	prov, err := content.FetchAll(ctx, f, *provLayer)
	if err != nil {
		return fmt.Errorf("reading provenance %s: %w", provLayer.Digest, err)
	}
	sig, err := provenance.NewFromKeyring(keyring, "")
	if err != nil {
		return errkind.Markf(errkind.BadInput, "keyring %s: %w", keyring, err)
	}
	filename := meta.Name + "-" + meta.Version + ".tgz"
	ver, err := sig.Verify(archive, prov, filename)
	if err != nil {
		return fmt.Errorf("%s (provenance %s): %w", filename, provLayer.Digest, err)
	}
	if ver.SignedBy == nil {
		return errors.New("provenance verified with no signer")
	}
	return nil
}
