package main

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/fixture"
)

// largestBlob returns the name of the largest blob in the tar at path: a
// layer.
func largestBlob(t *testing.T, path string) string {
	t.Helper()
	var name string
	var size int
	names, files := tarEntries(t, path)
	for _, n := range names {
		if strings.HasPrefix(n, "blobs/") && len(files[n]) > size {
			name, size = n, len(files[n])
		}
	}
	return name
}

// TestE2EVerifyArchive: `ferry verify --archive` re-hashes an archive
// offline, before any import, and reports a changed or missing blob and a
// lock signature the archive lacks (exit 3).
func TestE2EVerifyArchive(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env
	env.MustRun("mirror", "--to-archive", "closure.tar")
	// Offline: the registries are not needed.
	w.src.Stop()
	w.mirror.Stop()
	env.MustRun("verify", "--archive", "closure.tar")

	blob := largestBlob(t, env.Path("closure.tar"))
	if blob == "" {
		t.Fatal("no blob in the archive")
	}
	rewriteTar(t, env.Path("closure.tar"), env.Path("changed.tar"), func(n string, data []byte) []byte {
		if n == blob {
			data = append([]byte(nil), data...)
			data[len(data)/2] ^= 0xff
		}
		return data
	})
	env.Expect(exitcode.Mismatch, []string{"verify", "--archive", "changed.tar"}, "digest")
	rewriteTar(t, env.Path("closure.tar"), env.Path("missing.tar"), func(n string, data []byte) []byte {
		if n == blob {
			return nil
		}
		return data
	})
	env.Expect(exitcode.Mismatch, []string{"verify", "--archive", "missing.tar"}, "not in the archive")

	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	pub, err := signer.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	env.WriteFile("cosign.pub", string(pub))
	env.Expect(exitcode.Mismatch, []string{"verify", "--archive", "closure.tar", "--lock-key", "cosign.pub"}, "carries no ferry.lock.sig")
}
