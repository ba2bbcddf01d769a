package kudo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"path"
	"strings"
)

// TarballKind is what a package tarball holds, told by its content.
type TarballKind int

// Kinds of tarball RecognizeTarball tells apart.
const (
	// TarballUnknown is neither a KUDO operator nor a Helm chart (or no
	// gzipped tar at all).
	TarballUnknown TarballKind = iota
	// TarballOperator is a KUDO operator package: operator.yaml at its
	// root ("operator.yaml" or "./operator.yaml"), as KUDO's tarball
	// reader takes it (kudobuilder/kudo
	// pkg/kudoctl/packages/reader/reader_tar.go, ExtractTar: each file
	// at its path below "/"; pkg/kudoctl/packages/reader/parser.go,
	// parsePackageFile: isOperatorFile is operator.yaml in ".").
	TarballOperator
	// TarballChart is a Helm chart archive: CHART/Chart.yaml in its one
	// top folder, as `helm package` writes it (helm
	// pkg/chart/loader/archive.go LoadArchiveFiles strips the first
	// folder and pkg/chart/loader/load.go reads Chart.yaml).
	TarballChart
)

// RecognizeTarball tells a KUDO operator tarball from a Helm chart
// archive by its content: a tarball URL given as ROOT is read by the
// tool whose files it holds, whatever its name or host. It reads at
// most MaxPackageSize bytes of tar content.
func RecognizeTarball(data []byte) TarballKind {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return TarballUnknown
	}
	tr := tar.NewReader(io.LimitReader(zr, MaxPackageSize))
	operator, chart := false, false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			break
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		parts := strings.Split(name, "/")
		base := parts[len(parts)-1]
		switch {
		case base == OperatorFileName && len(parts) == 1:
			operator = true
		case base == "Chart.yaml" && len(parts) == 2:
			chart = true
		}
	}
	switch {
	case operator:
		return TarballOperator
	case chart:
		return TarballChart
	}
	return TarballUnknown
}

// IsTarballURL reports whether ref is an http(s) URL of a .tgz or
// .tar.gz file, a ROOT whose content says which format reads it.
func IsTarballURL(ref string) bool {
	l := strings.ToLower(ref)
	if !strings.HasPrefix(l, "http://") && !strings.HasPrefix(l, "https://") {
		return false
	}
	p, _, _ := strings.Cut(l, "?")
	return strings.HasSuffix(p, ".tgz") || strings.HasSuffix(p, ".tar.gz")
}
