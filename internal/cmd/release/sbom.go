package main

import (
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// spdxDocument is the subset of SPDX 2.3 (JSON) an SBOM of a Go binary
// needs: the binary, the Go modules linked into it, and DEPENDS_ON edges
// from the main module to each (as syft and `bom` write for Go binaries).
type spdxDocument struct {
	SPDXVersion       string             `json:"spdxVersion"`
	DataLicense       string             `json:"dataLicense"`
	SPDXID            string             `json:"SPDXID"`
	Name              string             `json:"name"`
	DocumentNamespace string             `json:"documentNamespace"`
	CreationInfo      spdxCreationInfo   `json:"creationInfo"`
	Packages          []spdxPackage      `json:"packages"`
	Files             []spdxFile         `json:"files"`
	Relationships     []spdxRelationship `json:"relationships"`
}

type spdxCreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

type spdxPackage struct {
	SPDXID           string            `json:"SPDXID"`
	Name             string            `json:"name"`
	VersionInfo      string            `json:"versionInfo,omitempty"`
	DownloadLocation string            `json:"downloadLocation"`
	FilesAnalyzed    bool              `json:"filesAnalyzed"`
	Checksums        []spdxChecksum    `json:"checksums,omitempty"`
	ExternalRefs     []spdxExternalRef `json:"externalRefs,omitempty"`
	Supplier         string            `json:"supplier,omitempty"`
}

type spdxChecksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

type spdxExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

type spdxFile struct {
	SPDXID    string         `json:"SPDXID"`
	Name      string         `json:"fileName"`
	Checksums []spdxChecksum `json:"checksums"`
}

type spdxRelationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

var spdxIDUnsafe = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// spdxID is an SPDX identifier for name: letters, digits, '.' and '-'.
func spdxID(kind, name string) string {
	return "SPDXRef-" + kind + "-" + strings.Trim(spdxIDUnsafe.ReplaceAllString(name, "-"), "-")
}

// purl is the package URL of a Go module (purl-spec's golang type).
func purl(path, version string) string {
	p := "pkg:golang/" + path
	if version != "" && version != "(devel)" {
		p += "@" + version
	}
	return p
}

// writeSBOM writes the SPDX SBOM of the Go binary bin to out. The document
// is reproducible: its creation time is the build's vcs.time when the
// binary records one, else SOURCE_DATE_EPOCH's, else the Unix epoch.
func writeSBOM(bin, out string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("%s: reading Go build information: %w", bin, err)
	}
	f, err := os.Open(bin)
	if err != nil {
		return err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return err
	}
	sum := hex.EncodeToString(h.Sum(nil))
	created := "1970-01-01T00:00:00Z"
	for _, s := range info.Settings {
		if s.Key == "vcs.time" {
			created = s.Value
		}
	}
	name := filepath.Base(bin)
	mainID := spdxID("Package", info.Main.Path)
	doc := spdxDocument{
		SPDXVersion:       "SPDX-2.3",
		DataLicense:       "CC0-1.0",
		SPDXID:            "SPDXRef-DOCUMENT",
		Name:              name,
		DocumentNamespace: "https://ferry.dev/spdx/" + name + "-" + sum,
		CreationInfo:      spdxCreationInfo{Created: created, Creators: []string{"Tool: ferry-release", "Organization: ferry"}},
		Files: []spdxFile{{
			SPDXID: spdxID("File", name), Name: name,
			Checksums: []spdxChecksum{{Algorithm: "SHA256", Value: sum}},
		}},
	}
	doc.Packages = append(doc.Packages, spdxPackage{
		SPDXID: mainID, Name: info.Main.Path, VersionInfo: info.Main.Version,
		DownloadLocation: "https://" + info.Main.Path, FilesAnalyzed: false,
		ExternalRefs: []spdxExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl(info.Main.Path, info.Main.Version)}},
	}, spdxPackage{
		SPDXID: spdxID("Package", "go-stdlib"), Name: "stdlib", VersionInfo: info.GoVersion,
		DownloadLocation: "https://go.dev/dl/", FilesAnalyzed: false,
		ExternalRefs: []spdxExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/stdlib@" + info.GoVersion}},
	})
	doc.Relationships = append(doc.Relationships,
		spdxRelationship{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: spdxID("File", name)},
		spdxRelationship{Element: spdxID("File", name), Type: "GENERATED_FROM", Related: mainID},
		spdxRelationship{Element: mainID, Type: "DEPENDS_ON", Related: spdxID("Package", "go-stdlib")},
	)
	deps := info.Deps
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	for _, d := range deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		p := spdxPackage{
			SPDXID: spdxID("Package", m.Path+"-"+m.Version), Name: m.Path, VersionInfo: m.Version,
			DownloadLocation: "https://proxy.golang.org/" + strings.ToLower(m.Path) + "/@v/" + m.Version + ".zip",
			ExternalRefs:     []spdxExternalRef{{Category: "PACKAGE-MANAGER", Type: "purl", Locator: purl(m.Path, m.Version)}},
		}
		// The go.sum hash of the module zip (h1:, base64 SHA-256 of the
		// dirhash) is recorded as a comment-free checksum only when SPDX
		// can name it; it cannot (h1 is not a plain SHA-256 of a file), so
		// the purl and the version identify the module.
		doc.Packages = append(doc.Packages, p)
		doc.Relationships = append(doc.Relationships, spdxRelationship{Element: mainID, Type: "DEPENDS_ON", Related: p.SPDXID})
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, append(b, '\n'), 0o644)
}
