package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// e2eTamperJSON rewrites a manifest in reg's storage so that it stays
// valid JSON of the same size and no longer hashes to d: one hex digit of
// the first digest it names is changed.
func e2eTamperJSON(t *testing.T, reg *registrytest.Registry, d digest.Digest) {
	t.Helper()
	p := e2eBlobPath(reg, d)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte("sha256:"))
	if i < 0 {
		t.Fatalf("%s names no digest", d)
	}
	i += len("sha256:")
	if b[i] == '0' {
		b[i] = '1'
	} else {
		b[i] = '0'
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestE2EManifestCorrupt: a manifest whose bytes, corrupted in registry
// storage, no longer hash to the digest the lock pins exits 3 at every
// stage (issue 30): verify (a digest problem), install and mirror from
// the mirror (--from) when the mirror's copy is corrupt; lock and mirror
// when the source's is. The corruption keeps the manifest valid JSON of
// the same size, so the registry serves it as it is.
func TestE2EManifestCorrupt(t *testing.T) {
	t.Parallel()
	w := newTrustWorld(t)
	w.ferryYAML("")
	w.env.MustRun("lock")
	w.env.MustRun("mirror", "--to", w.mirror.Host+"/m")
	good := w.env.ReadFile("ferry.lock")
	mirrored := w.mirror.Host + "/m/acme/app@" + w.digests[w.app].String()

	e2eTamperJSON(t, w.mirror, w.digests[w.app])
	w.env.Expect(3, []string{"verify"}, mirrored, "digest")
	w.env.Expect(3, []string{"install", "--dest", "out"}, w.mirror.Host+"/m/acme/app", "mismatched digest")
	e2eAbsent(t, w.env.Path("out"))
	w.mirror.Reset()
	w.env.Expect(3, []string{"mirror", "--lock", "ferry.lock", "--from", w.mirror.Host + "/m", "--to", w.mirror.Host + "/m2"}, w.app, "mismatched digest")
	if w.env.ReadFile("ferry.lock") != good {
		t.Error("ferry.lock changed by a failed mirror")
	}

	e2eTamperJSON(t, w.src, w.digests[w.app])
	w.env.Expect(3, []string{"lock", "--lock", "n.lock"}, w.app, "does not match its digest")
	e2eAbsent(t, w.env.Path("n.lock"))
	w.env.Expect(3, []string{"mirror", "--lock", "ferry.lock", "--to", w.mirror.Host + "/m3"}, w.app, "mismatched digest")
}
