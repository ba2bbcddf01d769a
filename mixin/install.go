package mixin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/errkind"
)

// InstallPorterHome installs the mixin of locked into porterHome from its
// artifact in src (the mirror repository PREFIX/porter-mixins/NAME), with
// no access to the feed, in the layout Porter reads today:
//
//	mixins/NAME/NAME[.exe]               the client for goos/goarch
//	mixins/NAME/runtimes/NAME-runtime    the linux/amd64 runtime
//
// The artifact is read by the digest in locked.Mirror when set, else by the
// version's tag. Both binaries are checked against the lock (digest and
// size), written with mode 0755 to temporary files and renamed into place
// only when both verify. darwin/arm64 falls back to the darwin/amd64 client,
// as Porter does. A mixin or file name that would escape porterHome is
// refused.
func InstallPorterHome(ctx context.Context, src oras.ReadOnlyTarget, locked *Locked, porterHome, goos, goarch string) error {
	if err := locked.Validate(); err != nil {
		return errkind.Mark(errkind.BadInput, err)
	}
	return installBinaries(ctx, src, locked, porterHome, []string{"mixins", locked.Name}, locked.Name+"-runtime", goos, goarch)
}

// InstallVersioned installs the mixin of locked into porterHome's
// versioned mixin cache, the layout of Porter's "Mixin Versioning"
// proposal (getporter/proposals pep/002-mixin-versioning.md, "Mixin
// Cache"), which holds several versions of one mixin, and the same
// version from several sources, side by side:
//
//	mixins/SOURCE/NAME/VERSION/NAME[.exe]                   the client
//	mixins/SOURCE/NAME/VERSION/runtimes/NAME-linux-amd64    the runtime
//
// SOURCE is SourceDir(locked). The binaries are read and checked as by
// InstallPorterHome. It returns the version's directory relative to
// porterHome, as path elements.
func InstallVersioned(ctx context.Context, src oras.ReadOnlyTarget, locked *Locked, porterHome, goos, goarch string) ([]string, error) {
	if err := locked.Validate(); err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	rel, err := VersionDir(locked)
	if err != nil {
		return nil, errkind.Mark(errkind.BadInput, err)
	}
	if err := installBinaries(ctx, src, locked, porterHome, rel, BinaryName(locked.Name, RuntimeOS, RuntimeArch), goos, goarch); err != nil {
		return nil, err
	}
	return rel, nil
}

// installBinaries writes locked's client for goos/goarch as
// porterHome/REL/NAME[.exe] and its runtime as
// porterHome/REL/runtimes/RUNTIMEFILE.
func installBinaries(ctx context.Context, src oras.ReadOnlyTarget, locked *Locked, porterHome string, rel []string, runtimeFile, goos, goarch string) error {
	name := locked.Name
	what := "mixin " + name + " " + locked.Version
	clientKey := BinaryName(name, goos, goarch)
	if _, ok := locked.Binaries[clientKey]; !ok && goos == "darwin" && goarch == "arm64" {
		clientKey = BinaryName(name, "darwin", "amd64")
	}
	if _, ok := locked.Binaries[clientKey]; !ok {
		return fmt.Errorf("%s: ferry.lock has no client binary for %s/%s (binaries: %s)", what, goos, goarch, strings.Join(locked.Keys(), " "))
	}
	runtimeKey := BinaryName(name, RuntimeOS, RuntimeArch)
	if _, ok := locked.Binaries[runtimeKey]; !ok {
		return fmt.Errorf("%s: ferry.lock has no runtime binary %s", what, runtimeKey)
	}
	clientFile := name
	if goos == "windows" {
		clientFile += ".exe"
	}
	mixinDir, err := SafeJoin(porterHome, rel...)
	if err != nil {
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %w", what, err))
	}
	clientPath, err := SafeJoin(mixinDir, clientFile)
	if err != nil {
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %w", what, err))
	}
	runtimePath, err := SafeJoin(mixinDir, "runtimes", runtimeFile)
	if err != nil {
		return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %w", what, err))
	}

	ref, err := artifactRef(locked)
	if err != nil {
		return err
	}
	a, err := readArtifact(ctx, src, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	type job struct {
		key, path string
		desc      ocispec.Descriptor
		tmp       string
	}
	jobs := []*job{{key: clientKey, path: clientPath}, {key: runtimeKey, path: runtimePath}}
	for _, j := range jobs {
		if j.desc, err = a.layer(ref, j.key, locked.Binaries[j.key]); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	_, statErr := os.Stat(mixinDir)
	created := os.IsNotExist(statErr)
	done := false
	defer func() {
		for _, j := range jobs {
			if j.tmp != "" {
				os.Remove(j.tmp)
			}
		}
		if !done && created {
			// Leave no half-installed mixin behind.
			os.RemoveAll(mixinDir)
		}
	}()
	for _, j := range jobs {
		if err := os.MkdirAll(filepath.Dir(j.path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if j.tmp, err = fetchVerified(ctx, src, j.desc, filepath.Dir(j.path), what+": "+j.key, locked.Binaries[j.key], 0o755); err != nil {
			return err
		}
	}
	for _, j := range jobs {
		if err := os.Rename(j.tmp, j.path); err != nil {
			return fmt.Errorf("%s: installing %s: %w", what, j.path, err)
		}
		j.tmp = ""
	}
	done = true
	return nil
}

// SafeJoin joins elems below root, refusing any element that is not a safe
// single path component (see CheckName) and any result outside root.
func SafeJoin(root string, elems ...string) (string, error) {
	p := root
	for _, e := range elems {
		if err := CheckName(e); err != nil {
			return "", fmt.Errorf("refusing to write below %s: %w", root, err)
		}
		p = filepath.Join(p, e)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", fmt.Errorf("refusing to write %s: outside %s", p, root)
	}
	return p, nil
}
