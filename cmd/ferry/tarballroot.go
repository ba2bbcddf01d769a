package main

import (
	"fmt"
	"io"
	"net/http"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/redact"
)

// tarballRoots reads each ROOT that is the URL of a .tgz (no format
// named) and gives it to the format whose files it holds
// (kudo.RecognizeTarball): a KUDO operator tarball becomes the KUDO
// package at that URL, as a KudoOperator task's tarball URL is;
// a Helm chart archive, which ferry reads from its repository or as a
// local file, and anything else are bad input saying so. Without this, a
// URL ROOT is a chart repository URL (REPOURL/NAME).
func (g *globalFlags) tarballRoots(ms *mirrorset.MirrorSet, input string) error {
	if input != "" {
		return nil
	}
	var hc *http.Client
	for i, p := range ms.Packages {
		if p.Format != "" || !kudo.IsTarballURL(p.Ref) {
			continue
		}
		if hc == nil {
			c, err := g.client()
			if err != nil {
				return err
			}
			hc = c.HTTPClient()
		}
		shown := redact.String(p.Ref)
		resp, err := hc.Get(p.Ref)
		if err != nil {
			return fmt.Errorf("ROOT %s: %w", shown, err)
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, kudo.MaxPackageSize+1))
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("ROOT %s: %w", shown, err)
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("ROOT %s: %s", shown, resp.Status)
		}
		if len(data) > kudo.MaxPackageSize {
			return exitcode.BadInput("ROOT %s: larger than %d bytes", shown, kudo.MaxPackageSize)
		}
		switch kudo.RecognizeTarball(data) {
		case kudo.TarballOperator:
			ms.Packages[i].Ref, ms.Packages[i].Format = kudo.SourcePrefix+p.Ref, "kudo"
		case kudo.TarballChart:
			return exitcode.BadInput("ROOT %s is a Helm chart archive: give its repository and name (REPOURL/NAME or oci://…, with --version), or download it and give the .tgz file", shown)
		default:
			return exitcode.BadInput("ROOT %s is neither a KUDO operator package (operator.yaml at its root) nor a Helm chart archive (CHART/Chart.yaml)", shown)
		}
	}
	return nil
}
