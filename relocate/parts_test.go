package relocate_test

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
	"github.com/ferryhq/ferry/verify"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4GiB", 4 << 30, true},
		{"4gib", 4 << 30, true},
		{"700MB", 700_000_000, true},
		{"1.5KiB", 1536, true},
		{"10KB", 10_000, true},
		{"2MiB", 2 << 20, true},
		{"1048576", 1 << 20, true},
		{"512B", 512, true},
		{"1G", 1 << 30, true},
		{"", 0, false},
		{"0", 0, false},
		{"-1GiB", 0, false},
		{"GiB", 0, false},
		{"4 parsecs", 0, false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, err := relocate.ParseSize(tt.in)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestPartPath(t *testing.T) {
	for _, tt := range []struct {
		in   string
		k    int
		want string
	}{
		{"closure.tar", 1, "closure.part1.tar"},
		{"/media/usb/closure.tar", 12, "/media/usb/closure.part12.tar"},
		{"closure", 2, "closure.part2.tar"},
	} {
		if got := relocate.PartPath(tt.in, tt.k); got != tt.want {
			t.Errorf("PartPath(%q, %d) = %q, want %q", tt.in, tt.k, got, tt.want)
		}
	}
}

// grownLock adds a package (with an image of its own) to the closure of
// l1: the lock a later release writes.
func grownLock(t *testing.T, c *client.Client, src *registrytest.Registry) *lock.Lock {
	t.Helper()
	ctx := context.Background()
	h := src.Host
	repo, err := c.Repository(h + "/p/cache")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.PushBundle(ctx, repo, h+"/p/cache", fixture.Bundle{Name: "cache", Version: "2.0.0", Tags: []string{"v2.0.0"}, Images: []string{"redis"}}); err != nil {
		t.Fatal(err)
	}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/p/app:v1.0.0"}, {Ref: h + "/p/cache:v2.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: porter.StrategyHighest}}})
	if err != nil {
		t.Fatal(err)
	}
	return lock.FromGraph(g, "sha256:inputs2")
}

// deepVerify re-hashes every package of l in the mirror it records.
func deepVerify(t *testing.T, c *client.Client, l *lock.Lock) {
	t.Helper()
	rep, err := verify.Verify(context.Background(), l, verify.Options{Registry: c, Deep: true})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Packages != len(l.Resolved()) {
		t.Fatalf("verify --deep: %d packages, problems %+v", rep.Packages, rep.Problems)
	}
}

// onlyReads fails when r received anything but GET and HEAD.
func onlyReads(t *testing.T, r *registrytest.Registry, what string) {
	t.Helper()
	for _, req := range r.Requests() {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			t.Errorf("%s: the registry received %s %s", what, req.Method, req.Path)
		}
	}
}

// TestArchiveSince: an archive written --since L1 holds L2 whole but only
// the content L1 lacks; imported on top of L1's import it gives the full
// closure; into an empty mirror it fails with exit code 3 naming what is
// missing, before pushing anything.
func TestArchiveSince(t *testing.T) {
	ctx := context.Background()
	src, _, c, l1 := pipelinetest.MirroredLock(t)
	l1Data, err := l1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l2 := grownLock(t, c, src)
	dir := t.TempDir()
	opts := relocate.Options{Source: c, Concurrency: 2}

	full1 := filepath.Join(dir, "l1.tar")
	if _, _, err := relocate.ToArchiveParts(ctx, l1, nil, full1, opts, relocate.ArchiveOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	full2 := filepath.Join(dir, "l2.tar")
	_, fullRes, err := relocate.ToArchiveParts(ctx, l2, nil, full2, opts, relocate.ArchiveOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	inc := filepath.Join(dir, "l2-since-l1.tar")
	_, incRes, err := relocate.ToArchiveParts(ctx, l2, nil, inc, opts, relocate.ArchiveOptions{Since: l1, SinceData: l1Data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if incRes.Omitted == 0 || incRes.Blobs >= fullRes.Blobs || incRes.Sizes[0] >= fullRes.Sizes[0] {
		t.Errorf("incremental archive: %d blobs (%d omitted, %d bytes); full: %d blobs (%d bytes)", incRes.Blobs, incRes.Omitted, incRes.Sizes[0], fullRes.Blobs, fullRes.Sizes[0])
	}
	// It carries the full new lock and says what it is.
	a, err := relocate.OpenArchive(ctx, inc)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Lock.Resolved()) != len(l2.Resolved()) || !a.Incremental() || a.Meta.Parts != 1 {
		t.Errorf("incremental archive: %d packages, meta %+v", len(a.Lock.Resolved()), a.Meta)
	}
	a.Close()

	// Offline check: nothing wrong, the earlier import's part is expected.
	rep, info, err := verify.ArchiveDetail(ctx, inc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(info.Expected) == 0 || info.Since == "" {
		t.Errorf("verify --archive of the incremental archive: problems %+v, expected %d, since %q", rep.Problems, len(info.Expected), info.Since)
	}

	// On top of L1's import: the full closure.
	air := registrytest.New(t)
	to, err := relocate.ParseMapping(air.Host + "/air")
	if err != nil {
		t.Fatal(err)
	}
	imp := relocate.Options{Source: c, To: to, Concurrency: 2}
	if _, _, err := relocate.FromArchive(ctx, full1, imp, nil); err != nil {
		t.Fatal(err)
	}
	got2, _, err := relocate.FromArchive(ctx, inc, imp, nil)
	if err != nil {
		t.Fatalf("importing the incremental archive on top of L1's import: %v", err)
	}
	deepVerify(t, c, got2)

	// A package new to the lock whose content the mirror holds in another
	// package's repository (db copied to p/dbcopy, same digests): the
	// archive omits it all, and the import mounts or copies it from there.
	dbSrc := l1.Package(src.Host + "/p/db")
	from, err := c.Repository(dbSrc.Source)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := c.Repository(src.Host + "/p/dbcopy")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oras.Copy(ctx, from, dbSrc.Version, dst, dbSrc.Version, oras.DefaultCopyOptions); err != nil {
		t.Fatal(err)
	}
	g3, err := resolve.Resolve(ctx, []resolve.Root{{Ref: src.Host + "/p/app:v1.0.0"}, {Ref: src.Host + "/p/dbcopy:" + dbSrc.Version}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: porter.StrategyHighest}}})
	if err != nil {
		t.Fatal(err)
	}
	l3 := lock.FromGraph(g3, "sha256:inputs3")
	copyInc := filepath.Join(dir, "l3-since-l1.tar")
	_, copyRes, err := relocate.ToArchiveParts(ctx, l3, nil, copyInc, opts, relocate.ArchiveOptions{Since: l1, SinceData: l1Data}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if copyRes.Blobs != 0 {
		t.Errorf("the archive of a copy of db --since L1 carries %d blobs", copyRes.Blobs)
	}
	got3, _, err := relocate.FromArchive(ctx, copyInc, imp, nil)
	if err != nil {
		t.Fatalf("importing a package whose content is in another repository of the mirror: %v", err)
	}
	if p := got3.Package(src.Host + "/p/dbcopy"); p == nil || p.Mirror != to.Repo(src.Host+"/p/dbcopy") {
		t.Fatalf("dbcopy: %+v", p)
	}
	deepVerify(t, c, got3)

	// Into an empty mirror: exit code 3, naming a node of L1 it lacks, and
	// nothing pushed.
	empty := registrytest.New(t)
	emptyTo, err := relocate.ParseMapping(empty.Host + "/air")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = relocate.FromArchive(ctx, inc, relocate.Options{Source: c, To: emptyTo, Concurrency: 2}, nil)
	if exitcode.Of(err) != exitcode.Mismatch {
		t.Fatalf("incremental archive into an empty mirror: %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	db := l1.Package(src.Host + "/p/db")
	if db == nil || !strings.Contains(err.Error(), db.Digest) || !strings.Contains(err.Error(), "import the earlier archive first") {
		t.Errorf("the error does not name db's root %v: %v", db, err)
	}
	onlyReads(t, empty, "failed incremental import")
}

// TestArchiveParts: --max-size splits an archive into parts no larger
// than the limit that import as one; a blob over the limit, a missing
// part and a part of another archive are refused.
func TestArchiveParts(t *testing.T) {
	ctx := context.Background()
	src, _, c, l1 := pipelinetest.MirroredLock(t)
	l1Data, err := l1.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	l2 := grownLock(t, c, src)
	dir := t.TempDir()
	opts := relocate.Options{Source: c, Concurrency: 2}
	whole := filepath.Join(dir, "whole.tar")
	_, wholeRes, err := relocate.ToArchiveParts(ctx, l2, nil, whole, opts, relocate.ArchiveOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	limit := wholeRes.Sizes[0] * 2 / 3
	split := filepath.Join(dir, "split.tar")
	_, res, err := relocate.ToArchiveParts(ctx, l2, []byte("c2lnbmF0dXJl"), split, opts, relocate.ArchiveOptions{MaxSize: limit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Paths) < 2 {
		t.Fatalf("limit %d of a %d-byte archive: %d parts", limit, wholeRes.Sizes[0], len(res.Paths))
	}
	if _, err := os.Stat(split); err == nil {
		t.Errorf("a split archive left %s", split)
	}
	for i, p := range res.Paths {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if p != relocate.PartPath(split, i+1) || info.Size() > limit || info.Size() != res.Sizes[i] {
			t.Errorf("part %d: %s, %d bytes, limit %d", i+1, p, info.Size(), limit)
		}
		// Each part is an archive of its own, carrying the lock and its
		// signature.
		l, _, sig, err := relocate.ReadArchiveLockSigned(p)
		if err != nil || len(l.Resolved()) != len(l2.Resolved()) || string(sig) != "c2lnbmF0dXJl" {
			t.Errorf("part %s: lock %v, sig %q, %v", p, l, sig, err)
		}
	}

	// Any part, or the name it was written to, opens all parts.
	for _, name := range []string{split, res.Paths[0], res.Paths[len(res.Paths)-1]} {
		a, err := relocate.OpenArchive(ctx, name)
		if err != nil {
			t.Fatalf("opening %s: %v", name, err)
		}
		if len(a.Paths) != len(res.Paths) {
			t.Errorf("opening %s: %d parts", name, len(a.Paths))
		}
		a.Close()
	}
	rep, info, err := verify.ArchiveDetail(ctx, res.Paths[1], nil)
	if err != nil || !rep.OK() || len(info.Paths) != len(res.Paths) || rep.Packages != len(l2.Resolved()) {
		t.Errorf("verify --archive of the parts: %+v %+v %v", rep, info, err)
	}

	air := registrytest.New(t)
	to, err := relocate.ParseMapping(air.Host + "/air")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := relocate.FromArchive(ctx, res.Paths[0], relocate.Options{Source: c, To: to, Concurrency: 2}, nil)
	if err != nil {
		t.Fatalf("importing the parts: %v", err)
	}
	deepVerify(t, c, got)

	// --since and --max-size together.
	incSplit := filepath.Join(dir, "inc.tar")
	_, incRes, err := relocate.ToArchiveParts(ctx, l2, nil, incSplit, opts, relocate.ArchiveOptions{Since: l1, SinceData: l1Data, MaxSize: limit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if incRes.Omitted == 0 {
		t.Errorf("incremental split archive omitted nothing: %+v", incRes)
	}
	a, err := relocate.OpenArchive(ctx, incRes.Paths[len(incRes.Paths)-1])
	if err != nil || !a.Incremental() || a.Meta.Parts != len(incRes.Paths) {
		t.Fatalf("incremental split archive: %+v, %v", a, err)
	}
	a.Close()

	// A blob over the limit (a large bundle.json): exit code 2 naming
	// it, nothing written.
	big := bigLock(t, c, src)
	bigWhole := filepath.Join(dir, "big.tar")
	if _, _, err := relocate.ToArchiveParts(ctx, big, nil, bigWhole, opts, relocate.ArchiveOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	largest, largestSize := largestEntry(t, bigWhole)
	small := filepath.Join(dir, "small.tar")
	_, _, err = relocate.ToArchiveParts(ctx, big, nil, small, opts, relocate.ArchiveOptions{MaxSize: largestSize}, nil)
	if exitcode.Of(err) != exitcode.Usage || err == nil || !strings.Contains(err.Error(), "blob sha256:"+filepath.Base(largest)) || !strings.Contains(err.Error(), strconv.FormatInt(largestSize, 10)) {
		t.Errorf("a blob over --max-size: %v (exit %d); want %s, %d bytes", err, exitcode.Of(err), largest, largestSize)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "small*")); len(m) > 0 {
		t.Errorf("a refused split wrote %v", m)
	}

	// A part of another archive under the same name (the incremental
	// one: same lock, written --since): exit code 3.
	if len(incRes.Paths) < 2 {
		t.Fatalf("the incremental archive has %d parts at %d bytes", len(incRes.Paths), limit)
	}
	mixed := filepath.Join(dir, "mixed")
	if err := os.Mkdir(mixed, 0o755); err != nil {
		t.Fatal(err)
	}
	for k := 1; k <= len(res.Paths); k++ {
		from := res.Paths[k-1]
		if k == 2 {
			from = incRes.Paths[1]
		}
		copyFile(t, from, relocate.PartPath(filepath.Join(mixed, "x.tar"), k))
	}
	if _, err := relocate.OpenArchive(ctx, filepath.Join(mixed, "x.part1.tar")); exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("a part of another archive: %v (exit %d)", err, exitcode.Of(err))
	}
	// An extra part beyond the count: exit code 3.
	extra := relocate.PartPath(split, len(res.Paths)+1)
	copyFile(t, res.Paths[0], extra)
	if _, err := relocate.OpenArchive(ctx, split); exitcode.Of(err) != exitcode.Mismatch {
		t.Errorf("an extra part: %v (exit %d)", err, exitcode.Of(err))
	}
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}

	// A missing part: exit code 2, naming it.
	if err := os.Remove(res.Paths[1]); err != nil {
		t.Fatal(err)
	}
	_, _, err = relocate.FromArchive(ctx, res.Paths[0], relocate.Options{Source: c, To: to, Concurrency: 2}, nil)
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), filepath.Base(res.Paths[1])) {
		t.Errorf("a missing part: %v (exit %d)", err, exitcode.Of(err))
	}
}

// bigLock locks a bundle whose bundle.json is tens of KiB: many outputs.
func bigLock(t *testing.T, c *client.Client, src *registrytest.Registry) *lock.Lock {
	t.Helper()
	ctx := context.Background()
	h := src.Host
	repo, err := c.Repository(h + "/p/big")
	if err != nil {
		t.Fatal(err)
	}
	outputs := map[string]string{}
	for i := range 800 {
		outputs[fmt.Sprintf("output-%04d", i)] = "string"
	}
	if _, err := fixture.PushBundle(ctx, repo, h+"/p/big", fixture.Bundle{Name: "big", Version: "1.0.0", Tags: []string{"v1.0.0"}, Outputs: outputs}); err != nil {
		t.Fatal(err)
	}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: h + "/p/big:v1.0.0"}}, resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: porter.StrategyHighest}}})
	if err != nil {
		t.Fatal(err)
	}
	return lock.FromGraph(g, "sha256:big")
}

// largestEntry returns the name and size of the largest blob in the tar
// at path.
func largestEntry(t *testing.T, path string) (string, int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var name string
	var size int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(h.Name, "blobs/") && h.Size > size {
			name, size = h.Name, h.Size
		}
	}
	return name, size
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rewriteEntry copies the tar at from to to with edit applied to the
// named entry's content.
func rewriteEntry(t *testing.T, from, to, name string, edit func([]byte) []byte) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	tr, tw := tar.NewReader(in), tar.NewWriter(out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name == name {
			data = edit(append([]byte(nil), data...))
			h.Size = int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestImportRefusesChangedArchive: an import re-hashes what it would push
// before pushing anything: a changed blob or root manifest is exit code 3
// naming its digest, and the mirror receives no write.
func TestImportRefusesChangedArchive(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.tar")
	if _, _, err := relocate.ToArchiveParts(ctx, l, nil, whole, relocate.Options{Source: c, Concurrency: 2}, relocate.ArchiveOptions{}, nil); err != nil {
		t.Fatal(err)
	}
	layer, _ := largestEntry(t, whole)
	root := l.Resolved()[0].Digest
	flip := func(b []byte) []byte { b[len(b)/2] ^= 0xff; return b }
	for _, tt := range []struct {
		name, entry, want string
	}{
		{"a blob changed", layer, strings.Replace(strings.TrimPrefix(layer, "blobs/"), "/", ":", 1)},
		{"a root manifest changed", "blobs/" + strings.Replace(root, ":", "/", 1), root},
	} {
		t.Run(tt.name, func(t *testing.T) {
			changed := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".tar")
			rewriteEntry(t, whole, changed, tt.entry, flip)
			mirror := registrytest.New(t)
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = relocate.FromArchive(ctx, changed, relocate.Options{Source: c, To: to, Concurrency: 2}, nil)
			if exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("import: %v (exit %d), want exit 3 naming %s", err, exitcode.Of(err), tt.want)
			}
			onlyReads(t, mirror, tt.name)
			rep, err := verify.Archive(ctx, changed, nil)
			if exitcode.Of(err) != exitcode.Mismatch && (err != nil || rep.OK()) {
				t.Errorf("verify --archive: %+v, %v", rep, err)
			}
		})
	}
}
