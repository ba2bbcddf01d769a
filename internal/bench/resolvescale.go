package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2/errdef"
)

// ResolveScale is one synthetic closure of the scale benchmark, resolved.
type ResolveScale struct {
	Packages int   `json:"packages"`
	Levels   []int `json:"levels"`
	// Gen is how long writing the closure into the registry's storage
	// took.
	Gen time.Duration `json:"gen"`
	Row *Row          `json:"row"`
}

// DiskRepo writes one repository of a stopped or idle `ferry serve`
// straight into its storage, in the CNCF distribution registry's
// filesystem layout (registry/storage/paths.go): blobs under
// docker/registry/v2/blobs, links under repositories/NAME. It implements
// oras.Target, so the fixtures push through it; it writes in milliseconds
// what takes minutes through the registry's API. The registry must not be
// writing to the same repositories.
type DiskRepo struct {
	// Root is the registry's storage directory (Registry.Root).
	Root string
	// Name is the repository path ("w2/l0/p0000").
	Name string
}

func (d DiskRepo) base() string { return filepath.Join(d.Root, "docker", "registry", "v2") }

func (d DiskRepo) blobPath(dg digest.Digest) string {
	return filepath.Join(d.base(), "blobs", dg.Algorithm().String(), dg.Encoded()[:2], dg.Encoded(), "data")
}

func (d DiskRepo) repoPath(parts ...string) string {
	return filepath.Join(append([]string{d.base(), "repositories", d.Name}, parts...)...)
}

func isManifest(mediaType string) bool {
	switch mediaType {
	case ocispec.MediaTypeImageManifest, ocispec.MediaTypeImageIndex,
		"application/vnd.docker.distribution.manifest.v2+json", "application/vnd.docker.distribution.manifest.list.v2+json":
		return true
	}
	return false
}

func (d DiskRepo) linkPath(desc ocispec.Descriptor) string {
	dir := "_layers"
	if isManifest(desc.MediaType) {
		dir = filepath.Join("_manifests", "revisions")
	}
	return d.repoPath(dir, desc.Digest.Algorithm().String(), desc.Digest.Encoded(), "link")
}

// writeFile writes data to path, creating its directory. Two writers of
// one path write the same bytes: blobs are named by their digest, links
// by what they hold.
func writeFile(path string, data []byte) error {
	err := os.WriteFile(path, data, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		err = os.WriteFile(path, data, 0o644)
	}
	return err
}

// memoryDir returns a new directory for a registry's storage: in /dev/shm
// when it is a memory file system with 2 GiB free (writing and serving
// tens of thousands of small files costs nothing there), else in work.
func memoryDir(work, pattern string) (string, error) {
	if memoryFS() {
		if dir, err := os.MkdirTemp("/dev/shm", "ferry-bench-"+pattern); err == nil {
			return dir, nil
		}
	}
	return os.MkdirTemp(work, pattern)
}

// memoryFS reports whether /dev/shm is a memory file system with 2 GiB
// free.
func memoryFS() bool {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994 // Linux's TMPFS_MAGIC (statfs(2))
	return syscall.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic && int64(st.Bavail)*int64(st.Bsize) >= 2<<30
}

// Push implements content.Pusher.
func (d DiskRepo) Push(_ context.Context, desc ocispec.Descriptor, r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if digest.FromBytes(data) != desc.Digest || int64(len(data)) != desc.Size {
		return fmt.Errorf("%s: content does not match %s (%d bytes)", d.Name, desc.Digest, desc.Size)
	}
	if _, err := os.Stat(d.blobPath(desc.Digest)); err != nil {
		if err := writeFile(d.blobPath(desc.Digest), data); err != nil {
			return err
		}
	}
	return writeFile(d.linkPath(desc), []byte(desc.Digest.String()))
}

// Exists implements content.ReadOnlyStorage.
func (d DiskRepo) Exists(_ context.Context, desc ocispec.Descriptor) (bool, error) {
	_, err := os.Stat(d.linkPath(desc))
	return err == nil, nil
}

// Fetch implements content.Fetcher.
func (d DiskRepo) Fetch(ctx context.Context, desc ocispec.Descriptor) (io.ReadCloser, error) {
	if ok, _ := d.Exists(ctx, desc); !ok {
		return nil, fmt.Errorf("%s: %s: %w", d.Name, desc.Digest, errdef.ErrNotFound)
	}
	return os.Open(d.blobPath(desc.Digest))
}

// Tag implements content.Tagger.
func (d DiskRepo) Tag(_ context.Context, desc ocispec.Descriptor, ref string) error {
	link := []byte(desc.Digest.String())
	if err := writeFile(d.repoPath("_manifests", "tags", ref, "index", desc.Digest.Algorithm().String(), desc.Digest.Encoded(), "link"), link); err != nil {
		return err
	}
	return writeFile(d.repoPath("_manifests", "tags", ref, "current", "link"), link)
}

// Resolve implements content.Resolver for tags.
func (d DiskRepo) Resolve(_ context.Context, ref string) (ocispec.Descriptor, error) {
	link, err := os.ReadFile(d.repoPath("_manifests", "tags", ref, "current", "link"))
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s:%s: %w", d.Name, ref, errdef.ErrNotFound)
	}
	dg, err := digest.Parse(strings.TrimSpace(string(link)))
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	data, err := os.ReadFile(d.blobPath(dg))
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	var m struct {
		MediaType string `json:"mediaType"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return ocispec.Descriptor{}, err
	}
	return ocispec.Descriptor{MediaType: m.MediaType, Digest: dg, Size: int64(len(data))}, nil
}

// WriteW2 writes W2's closure (PushW2's bundles, byte for byte, but one
// bundle per package when spec.Tags is 2) straight into the storage root
// of a registry, jobs packages at once, and returns the root's reference.
// Dependencies name refHost, as in PushW2; host is the registry's address
// in each bundle's own references.
func WriteW2(ctx context.Context, root, host, refHost string, spec W2Spec, jobs int) (Ref, error) {
	levels := Levels(spec.Packages, spec.Depth)
	if levels == nil {
		return Ref{}, fmt.Errorf("W2: %d packages cannot fill %d levels", spec.Packages, spec.Depth)
	}
	if spec.Tags < 2 {
		return Ref{}, errors.New("W2: at least 2 tags per package")
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	var rootRef Ref
	for l, n := range levels {
		for i := range n {
			g.Go(func() error {
				repo := DiskRepo{Root: root, Name: W2Name(l, i)}
				r, err := pushW2Package(ctx, repo, host, refHost, spec, levels, l, i)
				if l == 0 && i == 0 {
					rootRef = r
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return Ref{}, err
	}
	return rootRef, nil
}

// runResolveScale resolves a synthetic Porter closure of each size in
// Scale.Packages with `ferry resolve`, no added latency.
func (res *Results) runResolveScale(ctx context.Context) error {
	cfg := res.Config
	spec := cfg.Scale
	for _, n := range spec.Packages {
		w := W2Spec{Packages: n, Depth: 8, Tags: spec.Tags}
		rs := &ResolveScale{Packages: n, Levels: Levels(n, w.Depth)}
		dir, err := memoryDir(cfg.Work, fmt.Sprintf("resolve-%d-", n))
		if err != nil {
			return err
		}
		reg, err := StartRegistry(ctx, cfg.Ferry, dir)
		if err != nil {
			return err
		}
		p, err := StartProxy(reg.Addr, 0)
		if err != nil {
			reg.Close()
			return err
		}
		cfg.logf("scale: writing a %d-package Porter closure in %d levels %v, %d tags each, into the registry's storage", n, w.Depth, rs.Levels, w.Tags)
		start := time.Now()
		root, err := WriteW2(ctx, reg.Root, p.Addr, p.Addr, w, 8)
		rs.Gen = time.Since(start)
		if err != nil {
			p.Close()
			reg.Close()
			return fmt.Errorf("scale: writing %d packages: %w", n, err)
		}
		cfg.logf("  written in %.1fs", rs.Gen.Seconds())
		rootRef := p.Addr + "/" + root.Repo + ":" + root.Tag
		rs.Row = &Row{Tool: "ferry resolve", Mode: fmt.Sprintf("-j %d", cfg.Parallel), Jobs: cfg.Parallel, Version: res.Ferry, DigestsOK: true,
			Command: fmt.Sprintf("FERRY_VERSION_STRATEGY=highest ferry resolve PROXY/%s:%s -o json -j %d", root.Repo, root.Tag, cfg.Parallel)}
		res.Scale.Resolve = append(res.Scale.Resolve, rs)
		runs := spec.runs(cfg, n)
		for run := 1; run <= runs; run++ {
			cfg.logf("scale run %d/%d: ferry resolve of %d packages", run, runs, n)
			cwd, _ := os.MkdirTemp(dir, "run-")
			p.Take()
			e := Run(ctx, cwd, []string{"FERRY_VERSION_STRATEGY=highest"}, nil, cfg.Ferry, "resolve", rootRef, "-o", "json", "-j", fmt.Sprint(cfg.Parallel))
			st := p.Take()
			if e.Err != nil {
				rs.Row.Failed = fmt.Sprintf("%v: %s", e.Err, e.Stderr)
				cfg.logf("  failed: %s", rs.Row.Failed)
				break
			}
			var gr struct {
				Packages []json.RawMessage `json:"packages"`
			}
			if err := json.Unmarshal(e.Stdout, &gr); err != nil {
				rs.Row.Failed = "reading resolve -o json: " + err.Error()
				break
			}
			rs.Row.Packages = len(gr.Packages)
			rs.Row.Samples = append(rs.Row.Samples, Sample{Wall: e.Wall, MaxRSS: e.MaxRSS, CPU: e.CPU, Stats: st})
			cfg.logf("  %.2fs (CPU %.2fs), %d packages, %d requests, peak RSS %s", e.Wall.Seconds(), e.CPU.Seconds(), rs.Row.Packages, st.Requests, Bytes(e.MaxRSS))
		}
		p.Close()
		reg.Close()
		_ = os.RemoveAll(dir)
	}
	return nil
}

func (res *Results) writeResolveScale(b *strings.Builder) {
	cfg := res.Config
	s := res.Scale
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("### Resolution\n\n")
	p("`ferry resolve` of synthetic Porter closures shaped as W2 (`internal/fixture.PushBundle`'s cnab-to-oci bundles, 8 levels from one root, each package depending on the next level's through the range `%s`, with diamonds), each package with %d tags, read through a counting proxy with **no added latency**. ", W2Range, s.Spec.Tags)
	p("So that 10,000 packages take seconds to generate, the bundles are written straight into the registry's storage in the distribution filesystem layout (`bench.DiskRepo`, in /dev/shm when it is a memory file system), not pushed through its API; the registry serves them as if pushed. **peak RSS** is GNU time's maximum resident set size of `ferry resolve`. **growth** divides the per-package figure by the smallest closure's (1.00× is linear).")
	if s.Spec.OnceAbove > 0 && cfg.Runs > 1 {
		p(" Closures above %d packages resolve once; the others are the median of %d runs.", s.Spec.OnceAbove, cfg.Runs)
	}
	p(" **CPU** is `ferry resolve`'s user and system CPU time, steadier than wall time on a shared machine.")
	p("\n\n| packages | levels | written in | time | per package | growth | CPU | per package | growth | requests | per package | peak RSS | per package | growth |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var first Sample
	firstN := 0
	for _, rs := range s.Resolve {
		if st := rs.Row.status(); st != "" {
			p("| %d | %v | %s | %s | | | | | | | | | | |\n", rs.Packages, rs.Levels, secs(rs.Gen), st)
			continue
		}
		m, _ := Median(rs.Row.Samples)
		n := rs.Row.Packages
		if firstN == 0 {
			first, firstN = m, n
		}
		fn, nn := float64(firstN), float64(n)
		p("| %d | %v | %s | %s | %s | %s | %s | %s | %s | %d | %.2f | %s | %s | %s |\n", n, rs.Levels, secs(rs.Gen), secs(m.Wall), perItem(m.Wall, n),
			ratio(m.Wall.Seconds()/nn, first.Wall.Seconds()/fn), secs(m.CPU), perItem(m.CPU, n), ratio(m.CPU.Seconds()/nn, first.CPU.Seconds()/fn),
			m.Stats.Requests, float64(m.Stats.Requests)/nn,
			Bytes(m.MaxRSS), Bytes(m.MaxRSS/int64(max(1, n))), ratio(float64(m.MaxRSS)/nn, float64(first.MaxRSS)/fn))
	}
	p("\n```sh\n")
	for _, rs := range s.Resolve {
		p("%s  # %d packages\n", rs.Row.Command, rs.Packages)
	}
	p("```\n\n")
}
