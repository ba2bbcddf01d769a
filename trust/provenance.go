package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/lock"
)

// ProvenanceConfig asks a rule's packages for a format's own provenance
// file, verified against an OpenPGP keyring (a Helm chart's .prov, as
// `helm verify --keyring` and `helm install --verify` check it):
//
//	rules:
//	  - match: https://charts.acme.example/
//	    provenance: {keyring: keys/acme.gpg}
type ProvenanceConfig struct {
	// Keyring is an OpenPGP keyring file (binary, armored, or a GnuPG
	// keybox), relative to ferry.yaml; a provenance signed by any of its
	// keys passes.
	Keyring string `yaml:"keyring" json:"keyring"`
}

// ErrNoProvenance is what a ProvenanceChecker returns for a package that
// carries no provenance file.
var ErrNoProvenance = errors.New("no provenance file")

// ProvenanceChecker checks the provenance of the package whose root
// manifest is root, read through f, against the keyring file at keyring.
// It returns ErrNoProvenance (wrapped) when the package has none, an
// error marked errkind.BadInput when the keyring cannot be read, and any
// other error when the provenance does not verify.
type ProvenanceChecker func(ctx context.Context, f content.Fetcher, root ocispec.Descriptor, keyring string) error

var (
	provenanceMu       sync.RWMutex
	provenanceCheckers map[string]ProvenanceChecker // made by the first registration
)

// RegisterProvenance registers the provenance check of the packages whose
// root manifest has config media type configMediaType. A format calls it
// from init (package helm for Helm charts), so that trust, which imports
// no format, can check what a rule's `provenance:` asks for.
func RegisterProvenance(configMediaType string, check ProvenanceChecker) {
	provenanceMu.Lock()
	defer provenanceMu.Unlock()
	if provenanceCheckers == nil {
		provenanceCheckers = map[string]ProvenanceChecker{}
	}
	provenanceCheckers[configMediaType] = check
}

func provenanceChecker(configMediaType string) ProvenanceChecker {
	provenanceMu.RLock()
	defer provenanceMu.RUnlock()
	return provenanceCheckers[configMediaType]
}

// SourceOpener is what a Repositories offers when it also opens sources
// outside any registry (a chart in a classic Helm repository, through the
// format that owns it): the root package passes one, so that such a
// package's provenance is checked at its source too.
type SourceOpener interface {
	OpenSource(source string) (content.Fetcher, error)
}

// newProvenance resolves a rule's provenance section; a keyring that
// cannot be read is bad input.
func newProvenance(pc *ProvenanceConfig, rel func(string) string) (string, error) {
	if pc == nil {
		return "", nil
	}
	if pc.Keyring == "" {
		return "", errkind.Markf(errkind.BadInput, "provenance: keyring is required")
	}
	path := rel(pc.Keyring)
	if _, err := os.Stat(path); err != nil {
		return "", errkind.Markf(errkind.BadInput, "provenance: keyring: %w", err)
	}
	return path, nil
}

// maxProvenanceManifest bounds the root manifest read for a provenance
// check.
const maxProvenanceManifest = 4 << 20

// checkProvenance checks pkg's provenance, read through f, against the
// rule's keyring. It returns why it fails (empty when it passes); an
// error is a failure to look or a keyring that cannot be read.
func (r *Rule) checkProvenance(ctx context.Context, f content.Fetcher, pkg *lock.Package) (string, error) {
	root := pkg.Descriptor()
	if root.Size > maxProvenanceManifest {
		return fmt.Sprintf("provenance: manifest %s is %d bytes", root.Digest, root.Size), nil
	}
	raw, err := content.FetchAll(ctx, f, root)
	if err != nil {
		return "", fmt.Errorf("reading manifest %s: %w", root.Digest, err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil || m.Config.MediaType == "" {
		return fmt.Sprintf("provenance required (keyring %s): %s is not a package with a provenance file (not an image manifest with a config)", r.Keyring, root.Digest), nil
	}
	check := provenanceChecker(m.Config.MediaType)
	if check == nil {
		return fmt.Sprintf("provenance required (keyring %s): no provenance format for packages of config media type %s (Helm charts have one)", r.Keyring, m.Config.MediaType), nil
	}
	err = check(ctx, f, root, r.Keyring)
	switch {
	case err == nil:
		return "", nil
	case errors.Is(err, errkind.BadInput):
		return "", err
	case errors.Is(err, ErrNoProvenance):
		return fmt.Sprintf("provenance required (keyring %s): %v", r.Keyring, err), nil
	}
	return fmt.Sprintf("provenance does not verify with keyring %s: %v", r.Keyring, err), nil
}

// checkSourceProvenance checks the provenance of pkg, whose source is
// outside any registry, read through repos when it opens such sources
// (SourceOpener).
func (r *Rule) checkSourceProvenance(ctx context.Context, repos Repositories, pkg *lock.Package) (string, error) {
	o, ok := repos.(SourceOpener)
	if !ok {
		return fmt.Sprintf("provenance required (keyring %s): %s cannot be read here to check it", r.Keyring, pkg.Source), nil
	}
	f, err := o.OpenSource(pkg.Source)
	if err != nil {
		return "", err
	}
	return r.checkProvenance(ctx, f, pkg)
}
