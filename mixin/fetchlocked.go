package mixin

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"

	"github.com/ferryhq/ferry/errkind"
)

// FetchLocked downloads every binary of locked from the URL the lock
// records for it into dir, named by file name, without reading the feed.
// Every download is streamed, hashed on the way and checked against the
// lock; a binary whose digest or size differs fails closed with an error
// carrying errkind.Mismatch that names the file. A file dir already holds
// with the locked digest and size is kept without downloading it again.
// Files are renamed into place only when every binary verified, so a
// failure adds nothing to dir. allowPlainHTTP is as for LoadFeed.
func FetchLocked(ctx context.Context, hc *http.Client, locked *Locked, dir string, allowPlainHTTP func(host string) bool) error {
	if err := locked.Validate(); err != nil {
		return errkind.Mark(errkind.BadInput, err)
	}
	what := "mixin " + locked.Name + " " + locked.Version
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	// download() applies the feed's rules: plain HTTP only where allowed,
	// file:// links only from a file:// feed.
	feed := &Feed{URL: locked.Feed, allowPlain: allowPlainHTTP}
	type job struct {
		key, tmp string
	}
	var jobs []*job
	defer func() {
		for _, j := range jobs {
			if j.tmp != "" {
				os.Remove(j.tmp)
			}
		}
	}()
	for _, k := range locked.Keys() {
		want := locked.Binaries[k]
		if haveFile(filepath.Join(dir, k), k, want) {
			continue
		}
		if want.URL == "" {
			return errkind.Mark(errkind.BadInput, fmt.Errorf("%s: %s: ferry.lock records no download URL", what, k))
		}
		j := &job{key: k}
		jobs = append(jobs, j)
		tmp, got, err := download(ctx, hc, feed, File{Name: k, URL: want.URL}, dir, want.Size)
		j.tmp = tmp
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if got.Digest != want.Digest || got.Size != want.Size {
			return errkind.Mark(errkind.Mismatch, fmt.Errorf(
				"%s: %s from %s does not match ferry.lock: got %s (%d bytes), locked %s (%d bytes); the feed changed a published binary",
				what, k, want.URL, got.Digest, got.Size, want.Digest, want.Size))
		}
	}
	for _, j := range jobs {
		if err := os.Rename(j.tmp, filepath.Join(dir, j.key)); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		j.tmp = ""
	}
	return nil
}

// haveFile reports whether p holds exactly the locked binary.
func haveFile(p, what string, want Binary) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() != want.Size {
		return false
	}
	return verifyReader(f, what, want) == nil
}
