package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// archiveBlobs returns the blobs (and manifests) a tar holds, by name.
func archiveBlobs(t *testing.T, path string) map[string]int {
	t.Helper()
	names, files := tarEntries(t, path)
	out := map[string]int{}
	for _, n := range names {
		if strings.HasPrefix(n, "blobs/") {
			out[n] = len(files[n])
		}
	}
	return out
}

// moveInto copies the files named from env's directory into dst's.
func moveInto(t *testing.T, env, dst *clitest.Env, names ...string) {
	t.Helper()
	for _, n := range names {
		data, err := os.ReadFile(env.Path(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst.Path(n), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Size()
}

// TestE2EArchiveSinceParts carries releases across an air gap on real
// media: a full archive of L1 (with a mixin) imported; then L2 (a package
// added) as an archive --since L1, smaller, imported on top: verify
// --deep passes. The same archive into an empty registry fails with exit
// 3 naming what is missing, pushing nothing. --max-size splits a signed
// archive into parts no larger than the limit that verify and import as
// one; a missing part is exit 2.
func TestE2EArchiveSinceParts(t *testing.T) {
	t.Parallel()
	w := newCrossplaneWorld(t)
	feed := mixintest.NewFeed(t)
	env := clitest.New(t)
	e2eSignKey(t, env)
	yaml := func(refs ...string) string {
		s := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n"
		for _, r := range refs {
			s += "  - ref: " + r + "\n"
		}
		return s + "mixins:\n  - name: exec\n    version: 1.x\n    feed: " + feed.URL + "\nplatforms: [linux/amd64]\n"
	}
	env.WriteFile("ferry.yaml", yaml(w.porter.Diamond))
	env.MustRun("lock")
	env.MustRun("mirror", "--to-archive", "l1.tar")
	env.WriteFile("l1.lock", env.ReadFile("ferry.lock"))
	l1, err := lock.Read(env.Path("l1.lock"))
	if err != nil {
		t.Fatal(err)
	}

	// The air-gapped side imports L1.
	air := clitest.New(t)
	private := registrytest.New(t)
	moveInto(t, env, air, "l1.tar")
	air.MustRun("mirror", "--from-archive", "l1.tar", "--to", private.Host)

	// L2 adds a package: the archive --since L1 carries the new lock but
	// only what L1 lacks, mixin binaries included.
	env.WriteFile("ferry.yaml", yaml(w.porter.Diamond, w.xp.Transitive))
	env.MustRun("lock")
	env.MustRun("mirror", "--to-archive", "l2-full.tar")
	env.MustRun("mirror", "--to-archive", "l2.tar", "--since", "l1.lock")
	full, inc := archiveBlobs(t, env.Path("l2-full.tar")), archiveBlobs(t, env.Path("l2.tar"))
	if len(inc) >= len(full) || fileSize(t, env.Path("l2.tar")) >= fileSize(t, env.Path("l2-full.tar")) {
		t.Errorf("--since archive: %d blobs, %d bytes; full: %d blobs, %d bytes", len(inc), fileSize(t, env.Path("l2.tar")), len(full), fileSize(t, env.Path("l2-full.tar")))
	}
	t.Logf("L2 archive --since L1: %d blobs, %d bytes; full: %d blobs, %d bytes", len(inc), fileSize(t, env.Path("l2.tar")), len(full), fileSize(t, env.Path("l2-full.tar")))
	for _, p := range l1.Resolved() {
		if n := "blobs/" + strings.Replace(p.Digest, ":", "/", 1); inc[n] != 0 {
			t.Errorf("the --since archive carries %s of L1's %s", p.Digest, p.Source)
		}
	}
	mixins, err := mixin.FromLock(l1)
	if err != nil || len(mixins) == 0 {
		t.Fatalf("L1 mixins: %v %v", mixins, err)
	}
	for _, m := range mixins {
		for name, b := range m.Binaries {
			if _, ok := inc["blobs/"+strings.Replace(b.Digest, ":", "/", 1)]; ok {
				t.Errorf("the --since archive carries mixin binary %s of L1", name)
			}
		}
	}
	names, files := tarEntries(t, env.Path("l2.tar"))
	if !strings.Contains(strings.Join(names, " "), "ferry-archive.json") || !strings.Contains(string(files["ferry-archive.json"]), `"since":"sha256:`) {
		t.Errorf("the --since archive does not record it: %v %s", names, files["ferry-archive.json"])
	}
	if files["ferry.lock"] == nil || string(files["ferry.lock"]) != env.ReadFile("ferry.lock") {
		t.Error("the --since archive does not carry the full new lock")
	}

	// Offline: verify --archive checks what it holds and reports what it
	// expects from the earlier import.
	r := env.MustRun("verify", "--archive", "l2.tar")
	if !strings.Contains(r.Stderr, "expected from the earlier import") {
		t.Errorf("verify --archive of an incremental archive: %s", r.Stderr)
	}

	// On top of L1's import: the full closure.
	moveInto(t, env, air, "l2.tar")
	air.MustRun("mirror", "--from-archive", "l2.tar", "--to", private.Host)
	air.MustRun("verify", "--deep")
	l2, err := lock.Read(air.Path("ferry.lock"))
	if err != nil || len(l2.Resolved()) <= len(l1.Resolved()) {
		t.Fatalf("imported lock: %v", err)
	}

	// Into an empty registry: exit 3 naming what is missing, nothing pushed.
	empty := registrytest.New(t)
	lone := clitest.New(t)
	moveInto(t, env, lone, "l2.tar")
	root := l1.Resolved()[0]
	lone.Expect(exitcode.Mismatch, []string{"mirror", "--from-archive", "l2.tar", "--to", empty.Host}, "import the earlier archive first", root.Digest)
	for _, req := range empty.Requests() {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			t.Errorf("a refused import sent %s %s", req.Method, req.Path)
		}
	}

	// --max-size: parts no larger than the limit, signed, verified and
	// imported as one.
	limit := fileSize(t, env.Path("l2-full.tar")) * 2 / 3
	env.MustRun("mirror", "--to-archive", "split.tar", "--max-size", strconv.FormatInt(limit, 10), "--sign-key", "cosign.key")
	parts, _ := filepath.Glob(env.Path("split.part*.tar"))
	if len(parts) < 2 {
		t.Fatalf("--max-size %d of a %d-byte archive: parts %v", limit, fileSize(t, env.Path("l2-full.tar")), parts)
	}
	t.Logf("--max-size %d: %d parts", limit, len(parts))
	var partNames []string
	for k := 1; k <= len(parts); k++ {
		name := "split.part" + strconv.Itoa(k) + ".tar"
		if size := fileSize(t, env.Path(name)); size > limit {
			t.Errorf("%s is %d bytes, over %d", name, size, limit)
		}
		if _, files := tarEntries(t, env.Path(name)); files["ferry.lock.sig"] == nil || files["ferry.lock"] == nil {
			t.Errorf("%s lacks the lock or its signature", name)
		}
		partNames = append(partNames, name)
	}
	env.MustRun("verify", "--archive", "split.part2.tar", "--lock-key", "cosign.pub")
	far := clitest.New(t)
	moveInto(t, env, far, append(partNames, "cosign.pub")...)
	fresh := registrytest.New(t)
	far.MustRun("mirror", "--from-archive", "split.part1.tar", "--to", fresh.Host, "--lock-key", "cosign.pub")
	far.MustRun("verify", "--deep", "--lock-key", "cosign.pub")

	// A missing part: exit 2 naming it.
	gone := clitest.New(t)
	moveInto(t, env, gone, partNames[0])
	gone.Expect(exitcode.Usage, []string{"mirror", "--from-archive", "split.part1.tar", "--to", fresh.Host}, "split.part2.tar", "missing")
	gone.Expect(exitcode.Usage, []string{"verify", "--archive", "split.part1.tar"}, "split.part2.tar")
	// A limit with no room beside the lock: exit 2, nothing written.
	env.Expect(exitcode.Usage, []string{"mirror", "--to-archive", "tiny.tar", "--max-size", "1KiB"}, "--max-size")
	env.Expect(exitcode.Usage, []string{"mirror", "--to", private.Host, "--max-size", "1GiB"}, "--to-archive")
	if m, _ := filepath.Glob(env.Path("tiny*")); len(m) > 0 {
		t.Errorf("a refused split wrote %v", m)
	}
}
