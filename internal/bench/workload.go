package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"golang.org/x/sync/errgroup"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
)

// MiB is 2^20 bytes.
const MiB = 1 << 20

// Ref is a tagged image or package in a source registry with its digest.
type Ref struct {
	// Repo is the repository path without host ("w1/app-00").
	Repo string
	// Tag is the tag the peers copy.
	Tag string
	// Digest is the digest the tag points to.
	Digest digest.Digest
}

// W1Spec sizes workload W1: Repos repositories, each an OCI index over one
// image of a shared Base layer and two unique layers.
type W1Spec struct {
	Repos                  int
	Base, Unique1, Unique2 int64
}

// PushW1 generates W1 in the registry host: "w1/app-NN:v1", an index over
// one linux/amd64 image whose layers are the base layer (the same bytes in
// every repository, mounted from the first one) and two layers unique to
// the repository. Layers are gzip streams of deterministic content, so
// every run of every tool sees the same digests.
func PushW1(ctx context.Context, c *client.Client, host string, spec W1Spec) ([]Ref, error) {
	base, err := LayerBytes("w1/base", spec.Base)
	if err != nil {
		return nil, err
	}
	baseDesc := blobDesc(ocispec.MediaTypeImageLayerGzip, base)
	refs := make([]Ref, spec.Repos)
	push := func(i int) error {
		name := fmt.Sprintf("w1/app-%02d", i)
		repo, err := c.Repository(host + "/" + name)
		if err != nil {
			return err
		}
		if i == 0 {
			err = pushBytes(ctx, repo, baseDesc, base)
		} else {
			err = repo.Mount(ctx, baseDesc, "w1/app-00", func() (io.ReadCloser, error) {
				return io.NopCloser(bytes.NewReader(base)), nil
			})
		}
		if err != nil {
			return fmt.Errorf("%s: base layer: %w", name, err)
		}
		layers := []ocispec.Descriptor{baseDesc}
		for j, size := range []int64{spec.Unique1, spec.Unique2} {
			data, err := LayerBytes(fmt.Sprintf("%s/unique/%d", name, j), size)
			if err != nil {
				return err
			}
			d := blobDesc(ocispec.MediaTypeImageLayerGzip, data)
			if err := pushBytes(ctx, repo, d, data); err != nil {
				return fmt.Errorf("%s: layer %d: %w", name, j+1, err)
			}
			layers = append(layers, d)
		}
		d, err := pushImage(ctx, repo, name, layers)
		if err != nil {
			return err
		}
		d.Platform = &ocispec.Platform{Architecture: "amd64", OS: "linux"}
		idx, err := fixture.CanonicalJSON(ocispec.Index{
			Versioned: specs.Versioned{SchemaVersion: 2},
			MediaType: ocispec.MediaTypeImageIndex,
			Manifests: []ocispec.Descriptor{d},
		})
		if err != nil {
			return err
		}
		idxDesc := blobDesc(ocispec.MediaTypeImageIndex, idx)
		if err := repo.PushReference(ctx, idxDesc, bytes.NewReader(idx), "v1"); err != nil {
			return fmt.Errorf("%s: index: %w", name, err)
		}
		refs[i] = Ref{Repo: name, Tag: "v1", Digest: idxDesc.Digest}
		return nil
	}
	if spec.Repos == 0 {
		return nil, nil
	}
	if err := push(0); err != nil {
		return nil, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	ctx = gctx
	for i := 1; i < spec.Repos; i++ {
		g.Go(func() error { return push(i) })
	}
	return refs, g.Wait()
}

// PushW3 generates W3 in the registry host: "w3/big:v1", one image with a
// single gzip layer of size bytes, streamed twice (once for its digest,
// once to upload it) and never held in memory.
func PushW3(ctx context.Context, c *client.Client, host string, size int64) (Ref, error) {
	const name = "w3/big"
	repo, err := c.Repository(host + "/" + name)
	if err != nil {
		return Ref{}, err
	}
	d, err := LayerDescriptor(name+"/layer", size)
	if err != nil {
		return Ref{}, err
	}
	r := Layer(name+"/layer", size)
	err = repo.Push(ctx, d, r)
	r.Close()
	if err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return Ref{}, fmt.Errorf("%s: layer: %w", name, err)
	}
	m, err := pushImage(ctx, repo, name, []ocispec.Descriptor{d})
	if err != nil {
		return Ref{}, err
	}
	if err := repo.Tag(ctx, m, "v1"); err != nil {
		return Ref{}, fmt.Errorf("%s: tag: %w", name, err)
	}
	return Ref{Repo: name, Tag: "v1", Digest: m.Digest}, nil
}

// pushImage pushes a config and an image manifest over layers to repo.
func pushImage(ctx context.Context, repo *remote.Repository, seed string, layers []ocispec.Descriptor) (ocispec.Descriptor, error) {
	diffIDs := make([]digest.Digest, len(layers))
	for i, l := range layers {
		diffIDs[i] = l.Digest
	}
	cfg, err := fixture.CanonicalJSON(ocispec.Image{
		Platform: ocispec.Platform{Architecture: "amd64", OS: "linux"},
		Config:   ocispec.ImageConfig{Labels: map[string]string{"dev.ferry.bench.seed": seed}},
		RootFS:   ocispec.RootFS{Type: "layers", DiffIDs: diffIDs},
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	cfgDesc := blobDesc(ocispec.MediaTypeImageConfig, cfg)
	if err := pushBytes(ctx, repo, cfgDesc, cfg); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: config: %w", seed, err)
	}
	man, err := fixture.CanonicalJSON(ocispec.Manifest{
		Versioned: specs.Versioned{SchemaVersion: 2},
		MediaType: ocispec.MediaTypeImageManifest,
		Config:    cfgDesc,
		Layers:    layers,
	})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	d := blobDesc(ocispec.MediaTypeImageManifest, man)
	if err := pushBytes(ctx, repo, d, man); err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("%s: manifest: %w", seed, err)
	}
	return d, nil
}

func blobDesc(mediaType string, data []byte) ocispec.Descriptor {
	return ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
}

func pushBytes(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, data []byte) error {
	err := repo.Push(ctx, d, bytes.NewReader(data))
	if errors.Is(err, errdef.ErrAlreadyExists) {
		return nil
	}
	return err
}

// W2Spec sizes workload W2: Packages Porter bundles in Depth levels, each
// with Tags semver tags.
type W2Spec struct {
	Packages, Depth, Tags int
	// AllTagsDistinct pushes a distinct bundle for every tag. When false,
	// only the version the ranges select is a bundle of its own and the
	// other tags of a package share one older bundle: the tag list is the
	// same size, and a resolver that reads only what it selects makes the
	// same requests either way.
	AllTagsDistinct bool
}

// Levels splits packages over depth levels growing geometrically from one
// root: level l holds about r^l packages, r chosen so they add up.
func Levels(packages, depth int) []int {
	if depth < 1 || packages < depth {
		return nil
	}
	sum := func(r float64) float64 {
		s := 0.0
		for l := range depth {
			s += math.Max(1, math.Floor(math.Pow(r, float64(l))))
		}
		return s
	}
	lo, hi := 1.0, float64(packages)
	for range 100 {
		mid := (lo + hi) / 2
		if sum(mid) > float64(packages) {
			hi = mid
		} else {
			lo = mid
		}
	}
	sizes := make([]int, depth)
	total := 0
	for l := range depth {
		sizes[l] = int(math.Max(1, math.Floor(math.Pow(lo, float64(l)))))
		total += sizes[l]
	}
	sizes[depth-1] += packages - total
	return sizes
}

// W2Name is the repository path of package i of level l.
func W2Name(l, i int) string { return fmt.Sprintf("w2/l%d/p%04d", l, i) }

// W2Children lists the indexes in level l+1 that package i of level l
// depends on, for levels of n and m packages: every j ≡ i (mod n), which
// covers the next level, plus one shared pick, which makes diamonds.
func W2Children(i, n, m int) []int {
	var out []int
	seen := map[int]bool{}
	for j := i; j < m; j += n {
		out = append(out, j)
		seen[j] = true
	}
	if extra := (i*7 + 3) % m; !seen[extra] {
		out = append(out, extra)
	}
	return out
}

// W2Versions returns the versions of a package with tags tags: 1.0.0 to
// 1.(tags-2).0 and 2.0.0. Dependencies ask for "^1.0.0", so the resolver
// must pick 1.(tags-2).0 from the list, not the highest tag.
func W2Versions(tags int) []string {
	out := make([]string, 0, tags)
	for i := 0; i < tags-1; i++ {
		out = append(out, fmt.Sprintf("1.%d.0", i))
	}
	return append(out, "2.0.0")
}

// W2Range is the version range every W2 dependency declares.
const W2Range = "^1.0.0"

// PushW2 generates W2 in the registry host, pushing jobs bundles at once,
// and returns the root's reference (without host). Dependencies name
// refHost ("REFHOST/w2/l3/p0007"): the proxy in front of host that the
// bench reads the catalog through. A partial reference would not do:
// Porter qualifies it the Docker way, to docker.io (porter/qualify.go).
func PushW2(ctx context.Context, c *client.Client, host, refHost string, spec W2Spec, jobs int) (Ref, error) {
	levels := Levels(spec.Packages, spec.Depth)
	if levels == nil {
		return Ref{}, fmt.Errorf("W2: %d packages cannot fill %d levels", spec.Packages, spec.Depth)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	var root Ref
	for l, n := range levels {
		for i := range n {
			g.Go(func() error {
				repo, err := c.Repository(host + "/" + W2Name(l, i))
				if err != nil {
					return err
				}
				r, err := pushW2Package(ctx, repo, host, refHost, spec, levels, l, i)
				if l == 0 && i == 0 {
					root = r
				}
				return err
			})
		}
	}
	if err := g.Wait(); err != nil {
		return Ref{}, err
	}
	return root, nil
}

// pushW2Package pushes package i of level l of W2 (levels packages per
// level) to target as host's repository W2Name(l, i): one bundle for the
// selected version, 1.(spec.Tags-2).0, or one for every version when
// spec.AllTagsDistinct, and one older bundle carrying every other tag.
// Its dependencies name refHost. It returns the selected bundle's
// reference (without host).
func pushW2Package(ctx context.Context, target oras.Target, host, refHost string, spec W2Spec, levels []int, l, i int) (Ref, error) {
	versions := W2Versions(spec.Tags)
	selected := versions[len(versions)-2]
	name := W2Name(l, i)
	repoRef := host + "/" + name
	var deps []fixture.Dep
	if l+1 < len(levels) {
		for _, j := range W2Children(i, levels[l], levels[l+1]) {
			deps = append(deps, fixture.Dep{
				Name:   fmt.Sprintf("l%d-p%04d", l+1, j),
				Bundle: refHost + "/" + W2Name(l+1, j),
				Ranges: []string{W2Range},
			})
		}
	}
	short := fmt.Sprintf("l%d-p%04d", l, i)
	var ref Ref
	var shared []string
	for _, v := range versions {
		tag := "v" + v
		if v != selected && !spec.AllTagsDistinct {
			shared = append(shared, tag)
			continue
		}
		d, err := fixture.PushBundle(ctx, target, repoRef, fixture.Bundle{Name: short, Version: v, Tags: []string{tag}, Deps: deps})
		if err != nil {
			return Ref{}, err
		}
		if v == selected {
			ref = Ref{Repo: name, Tag: tag, Digest: d.Digest}
		}
	}
	if len(shared) > 0 {
		// One older bundle carries every tag but the selected one.
		if _, err := fixture.PushBundle(ctx, target, repoRef, fixture.Bundle{Name: short, Version: "1.0.0", Tags: shared, Deps: deps}); err != nil {
			return Ref{}, err
		}
	}
	return ref, nil
}
