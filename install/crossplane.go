package install

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
)

// CrossplaneDir is the install directory's folder of Crossplane manifests.
const CrossplaneDir = "crossplane"

// isCrossplane reports whether a lock kind is a Crossplane package.
func isCrossplane(kind string) bool {
	switch kind {
	case format.KindCrossplaneConfiguration, format.KindCrossplaneProvider, format.KindCrossplaneFunction:
		return true
	}
	return false
}

// writeCrossplane writes crossplane/: an ImageConfig rewriting each source
// prefix to the mirror, and one package manifest per Crossplane package in
// plan order, pinned by digest with dependency resolution off.
func writeCrossplane(dir string, l *lock.Lock, plan *Plan) error {
	var pkgs []crossplane.InstallPackage
	for _, st := range plan.Steps {
		if !isCrossplane(st.Kind) {
			continue
		}
		mirror, _, _ := strings.Cut(st.Mirror, "@")
		pkgs = append(pkgs, crossplane.InstallPackage{
			Kind: st.Kind, Name: filepath.Base(st.Source), Source: st.Source, Mirror: mirror, Digest: st.Digest,
		})
	}
	if len(pkgs) == 0 {
		return nil
	}
	files, err := crossplane.RenderInstall(pkgs, nil)
	if err != nil {
		return fmt.Errorf("rendering Crossplane manifests: %w", err)
	}
	for name, data := range files {
		if err := WriteFile(dir, CrossplaneDir+"/"+name, data, 0o644); err != nil {
			return fmt.Errorf("writing Crossplane manifest: %w", err)
		}
	}
	return nil
}
