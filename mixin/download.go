package mixin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/progress"
)

// RuntimeOS and RuntimeArch are the platform of a mixin's runtime binary,
// the one Porter copies into invocation images.
const (
	RuntimeOS   = "linux"
	RuntimeArch = "amd64"
)

// Fetch chooses the version of mixin name that constraint selects in feed
// and downloads its binaries into dir, named by file name
// (NAME-OS-ARCH[.exe]). platforms ("linux/amd64", "darwin/arm64", …)
// restricts the binaries kept when non-empty; the runtime binary
// NAME-linux-amd64 is always kept, and darwin/arm64 falls back to
// darwin/amd64 as Porter does. Each download is streamed to a temporary file
// and hashed on the way; files are renamed into place only when every
// download succeeded, so a failure writes nothing.
//
// When prev, the existing lock entry, has the chosen version, every download
// must match its digest and size, else Fetch fails closed with an error
// carrying errkind.Mismatch. To keep a locked version, pass prev.Version as
// constraint.
//
// The returned entry has no Mirror: it is set once the artifact is pushed.
func Fetch(ctx context.Context, hc *http.Client, feed *Feed, name, constraint string, platforms []string, prev *Locked, dir string) (*Locked, error) {
	if err := CheckName(name); err != nil {
		return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("mixin %q: %w", name, err))
	}
	v, err := feed.Choose(name, constraint)
	if err != nil {
		return nil, err
	}
	files, err := selectFiles(v, platforms)
	if err != nil {
		return nil, err
	}
	var want map[string]Binary
	if prev != nil && prev.Name == name && prev.Version == v.Version {
		want = prev.Binaries
		if err := checkDropped(v, prev, files, platforms); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mixin %s %s: %w", name, v.Version, err)
	}
	locked := &Locked{Name: name, Feed: feed.URL, Constraint: constraint, Version: v.Version, Binaries: map[string]Binary{}}
	var temps []string
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	for _, f := range files {
		tmp, b, err := download(ctx, hc, feed, f, dir, want[f.Name].Size)
		if tmp != "" {
			temps = append(temps, tmp)
		}
		if err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", name, v.Version, err)
		}
		if w, ok := want[f.Name]; ok && (w.Digest != b.Digest || w.Size != b.Size) {
			return nil, errkind.Mark(errkind.Mismatch, fmt.Errorf(
				"mixin %s %s: %s from %s does not match ferry.lock: got %s (%d bytes), locked %s (%d bytes); the feed changed a published binary",
				name, v.Version, f.Name, f.URL, b.Digest, b.Size, w.Digest, w.Size))
		}
		locked.Binaries[f.Name] = b
	}
	for i, f := range files {
		if err := os.Rename(temps[i], filepath.Join(dir, f.Name)); err != nil {
			return nil, fmt.Errorf("mixin %s %s: %w", name, v.Version, err)
		}
	}
	temps = nil
	return locked, nil
}

// selectFiles returns the files of v to keep for platforms, sorted by name.
func selectFiles(v Version, platforms []string) ([]File, error) {
	if _, ok := v.File(RuntimeOS, RuntimeArch); !ok {
		return nil, fmt.Errorf("mixin %s %s: the feed lists no runtime binary %s (files: %s)",
			v.Mixin, v.Version, BinaryName(v.Mixin, RuntimeOS, RuntimeArch), fileNames(v.Files))
	}
	keep := map[string]File{}
	if len(platforms) == 0 {
		for _, f := range v.Files {
			keep[f.Name] = f
		}
	} else {
		rt, _ := v.File(RuntimeOS, RuntimeArch)
		keep[rt.Name] = rt
		for _, p := range platforms {
			goos, goarch, ok := strings.Cut(p, "/")
			if !ok || goos == "" || goarch == "" || strings.Contains(goarch, "/") {
				return nil, errkind.Mark(errkind.BadInput, fmt.Errorf("platform %q is not OS/ARCH", p))
			}
			f, ok := v.File(goos, goarch)
			if !ok && goos == "darwin" && goarch == "arm64" {
				f, ok = v.File("darwin", "amd64")
			}
			if !ok {
				return nil, fmt.Errorf("mixin %s %s publishes no binary for %s (files: %s)", v.Mixin, v.Version, p, fileNames(v.Files))
			}
			keep[f.Name] = f
		}
	}
	out := make([]File, 0, len(keep))
	for _, f := range keep {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// checkDropped fails when a binary locked for this version, and wanted by
// platforms, is no longer listed by the feed.
func checkDropped(v Version, prev *Locked, files []File, platforms []string) error {
	listed := map[string]bool{}
	for _, f := range v.Files {
		listed[f.Name] = true
	}
	selected := map[string]bool{}
	for _, f := range files {
		selected[f.Name] = true
	}
	for _, k := range prev.Keys() {
		if listed[k] {
			continue
		}
		if len(platforms) == 0 || selected[k] || strings.HasSuffix(strings.TrimSuffix(k, ".exe"), "-"+RuntimeOS+"-"+RuntimeArch) {
			return errkind.Mark(errkind.Mismatch, fmt.Errorf("mixin %s %s: %s is in ferry.lock but the feed %s no longer lists it", v.Mixin, v.Version, k, prev.Feed))
		}
	}
	return nil
}

func fileNames(files []File) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, " ")
}

// download streams f into a temporary file in dir, hashing it on the way,
// and returns the temporary file's path with the binary's lock record.
//
// At most limit bytes are read (MaxBinarySize when limit is 0): a server
// that never ends the body fails the download instead of filling the disk.
func download(ctx context.Context, hc *http.Client, feed *Feed, f File, dir string, limit int64) (string, Binary, error) {
	if limit <= 0 {
		limit = MaxBinarySize
	}
	u, err := url.Parse(f.URL)
	if err != nil {
		return "", Binary{}, fmt.Errorf("%s: %w", f.Name, err)
	}
	var body io.ReadCloser
	size := int64(-1)
	if u.Scheme == "file" {
		if !strings.HasPrefix(feed.URL, "file:") {
			return "", Binary{}, errkind.Mark(errkind.BadInput, fmt.Errorf("%s: a feed loaded over HTTP may not link to a local file (%s)", f.Name, f.URL))
		}
		var fh *os.File
		if fh, err = os.Open(localPath(u)); err == nil {
			body = fh
			if st, serr := fh.Stat(); serr == nil {
				size = st.Size()
			}
		}
	} else {
		body, size, err = get(ctx, hc, u, feed.allowPlain)
	}
	if err != nil {
		return "", Binary{}, fmt.Errorf("downloading %s: %w", f.Name, err)
	}
	// The download's bar (progress.FromContext: the run's Reporter, see
	// Format.Lock and Format.Prepare) is sized by the lock when it
	// records the binary, else by the server's Content-Length.
	rep := progress.FromContext(ctx)
	id := "mixin " + f.URL
	if limit != MaxBinarySize {
		size = limit
	}
	rep.BlobStarted(id, "mixin "+f.Name, max(size, 0))
	defer rep.BlobDone(id, progress.Copied) // a failed download's bar goes too
	body = progress.NewReader(body, rep, id)
	defer body.Close()
	tmp, err := os.CreateTemp(dir, "."+f.Name+".*.tmp")
	if err != nil {
		return "", Binary{}, fmt.Errorf("%s: %w", f.Name, err)
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(body, limit+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("the body is longer than %d bytes", limit)
		if limit != MaxBinarySize {
			err = errkind.Mark(errkind.Mismatch, fmt.Errorf("does not match ferry.lock: the body is longer than the %d bytes it records", limit))
		}
	}
	if err != nil {
		return tmp.Name(), Binary{}, fmt.Errorf("downloading %s from %s: %w", f.Name, f.URL, err)
	}
	return tmp.Name(), Binary{Digest: sha256Digest(h), Size: n, URL: f.URL}, nil
}

// MaxBinarySize caps a mixin binary whose size no lock states yet: Porter's
// mixins are tens of megabytes.
var MaxBinarySize int64 = 1 << 30

func sha256Digest(h hash.Hash) string {
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// writeVerified streams r into a temporary file in dir, checking that it
// has the locked digest and size. It returns the temporary file's path; the
// caller renames it into place or removes it.
func writeVerified(r io.Reader, dir, what string, want Binary, mode os.FileMode) (string, error) {
	tmp, err := os.CreateTemp(dir, ".ferry-*.tmp")
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	h := sha256.New()
	// Read one byte past the locked size so that a longer blob is caught
	// without reading it all.
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(r, want.Size+1))
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if n > want.Size {
		os.Remove(tmp.Name())
		return "", errkind.Mark(errkind.Mismatch, fmt.Errorf("%s does not match ferry.lock: got more than %d bytes, locked %s (%d bytes)", what, want.Size, want.Digest, want.Size))
	}
	if got := sha256Digest(h); n != want.Size || got != want.Digest {
		os.Remove(tmp.Name())
		return "", errkind.Mark(errkind.Mismatch, fmt.Errorf("%s does not match ferry.lock: got %s (%d bytes), locked %s (%d bytes)", what, got, n, want.Digest, want.Size))
	}
	return tmp.Name(), nil
}

// errMissing marks a binary the lock lists but an artifact lacks.
var errMissing = errors.New("binary missing from the mirror artifact")
