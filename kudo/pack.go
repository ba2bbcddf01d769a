package kudo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ferryhq/ferry/errkind"
)

// PackFolder returns the package tarball of the KUDO package folder dir
// as `kubectl kudo package create` makes it (kudobuilder/kudo
// pkg/kudoctl/packages/writer/writer_tar.go, TgzDir): a gzip'd tar of
// every regular file below dir (directories without files and symlinks
// left out), each named by its path relative to dir, owned by uid and
// gid 0, "root". It is reproducible as TgzDir means it to be, and more:
// entries in lexical order (filepath.WalkDir's, as afero.Walk's), every
// mtime the Unix epoch (TgzDir zeroes it), modes 0644, or 0755 for a
// file someone may execute, and no gzip name or time. Folder
// dependencies (KEP-29's `package: ./relative/folder`) are below dir
// and so in the tarball, where kubectl kudo resolves them (pkg/kudoctl/
// packages/resolver/resolver.go resolves a tarball's relative
// dependencies within its files).
func PackFolder(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gw)
	var total int64
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, file)
		if err != nil {
			return err
		}
		total += fi.Size()
		if fi.Size() > maxFileSize || total > MaxPackageSize {
			return fmt.Errorf("%s: package larger than %d bytes", file, MaxPackageSize)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		mode := int64(0o644)
		if fi.Mode().Perm()&0o111 != 0 {
			mode = 0o755
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Size: int64(len(data)), Mode: mode,
			ModTime: time.Unix(0, 0), Uname: "root", Gname: "root", Format: tar.FormatPAX,
		}
		if strings.Contains(hdr.Name, "\x00") {
			return fmt.Errorf("%s: cannot name a tar entry", file)
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("packing %s: %w", dir, err)
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// localTarball returns the package tarball of the local package pkg (a
// folder, its operator.yaml, or a .tgz, as the lock's kudo.local names
// it): a .tgz byte for byte, a folder packed (PackFolder). The package
// must still be the operator the lock recorded (name and versions), or
// the error is marked errkind.Mismatch.
func localTarball(lo *LocalOperator) ([]byte, error) {
	pkg := lo.Package
	st, err := os.Stat(pkg)
	if err != nil {
		return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("local operator %s: %w (ferry install reads local packages from where they were locked)", lo.Name, err))
	}
	var data []byte
	switch {
	case st.IsDir():
		data, err = PackFolder(pkg)
	case strings.EqualFold(filepath.Base(pkg), OperatorFileName):
		data, err = PackFolder(filepath.Dir(pkg))
	default:
		data, err = readCapped(pkg)
		if err == nil && len(data) > MaxPackageSize {
			err = fmt.Errorf("%s: more than %d bytes", pkg, MaxPackageSize)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("local operator %s: %w", lo.Name, err)
	}
	p, err := LoadArchive(data)
	if err != nil {
		return nil, fmt.Errorf("local operator %s: %s: %w", lo.Name, pkg, err)
	}
	if p.Operator.Name != lo.Name || p.Operator.AppVersion != lo.AppVersion || p.Operator.OperatorVersion != lo.OperatorVersion {
		return nil, errkind.Markf(errkind.Mismatch, "local operator %s: %s is now %s %s, the lock's kudo.local says %s %s: lock it again", lo.Name, pkg, p.Operator.Name, p.Version(), lo.Name, versionTag(lo.AppVersion, lo.OperatorVersion))
	}
	return data, nil
}
