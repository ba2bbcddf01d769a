package bench

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/memory"

	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestProxyRefusesMounts: with RefuseMounts, a cross-repository mount
// becomes an upload session (a refusal), counted as a mount try and a
// session; the sessions completed by their PUT are not left open, one
// abandoned is. Without it the registry mounts.
func TestProxyRefusesMounts(t *testing.T) {
	tests := []struct {
		name   string
		refuse bool
		want   Stats
	}{
		// The first push's session, the mount's (refused, then used for
		// the push) and the abandoned one.
		{"refused", true, Stats{MountTries: 2, MountMisses: 2, Sessions: 3, SessionsOpen: 1, BlobUploads: 2}},
		// The first push's session; the mounts succeed, so the last
		// leaves nothing open.
		{"allowed", false, Stats{MountTries: 2, Mounts: 2, Sessions: 1, BlobUploads: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			reg := registrytest.New(t)
			c := registrytest.Client(t)
			p, err := StartProxy(reg.Host, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.RefuseMounts = tc.refuse
			data := []byte("a blob in one repository")
			desc := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageLayer, Digest: digest.FromBytes(data), Size: int64(len(data))}
			if err := registrytest.Repository(t, c, p.Addr+"/bench/a").Push(ctx, desc, bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
			// oras-go pushes through the session a refused mount opens.
			b := registrytest.Repository(t, c, p.Addr+"/bench/b")
			if err := b.Mount(ctx, desc, "bench/a", func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }); err != nil {
				t.Fatal(err)
			}
			if ok, err := registrytest.Repository(t, c, reg.Host+"/bench/b").Exists(ctx, desc); err != nil || !ok {
				t.Fatalf("bench/b holds the blob: %v, %v", ok, err)
			}
			// A mount whose answer no one follows up.
			resp, err := http.Post("http://"+p.Addr+"/v2/bench/c/blobs/uploads/?mount="+desc.Digest.String()+"&from=bench/a", "", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			// The proxy counts a request after its answer went out: wait
			// until the last ones are counted.
			for range 500 {
				p.mu.Lock()
				st := p.st
				p.mu.Unlock()
				if st.MountTries == tc.want.MountTries && st.Sessions == tc.want.Sessions && st.BlobUploads == tc.want.BlobUploads {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			got := p.Take()
			got.Requests, got.ByKind, got.BytesUp, got.BytesDown = 0, nil, 0, 0
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("stats %+v, want %+v", got, tc.want)
			}
			if st := p.Take(); st.SessionsOpen != 0 || st.Sessions != 0 {
				t.Fatalf("Take starts afresh, got %+v", st)
			}
		})
	}
}

// TestWriteW2: a closure written straight into a registry's storage is
// served as if pushed: the root resolves to the digest PushW2 gives the
// same bundle, every package lists its tags, and the root's graph copies.
func TestWriteW2(t *testing.T) {
	ctx := context.Background()
	reg, pushed := registrytest.New(t), registrytest.New(t)
	c := registrytest.Client(t)
	spec := W2Spec{Packages: 12, Depth: 4, Tags: 3}
	// Bundles name their own registry: pushed's in both, so that the
	// digests compare.
	root, err := WriteW2(ctx, reg.Root, pushed.Host, "example.test", spec, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, err := PushW2(ctx, c, pushed.Host, "example.test", spec, 4)
	if err != nil {
		t.Fatal(err)
	}
	if root != want {
		t.Fatalf("WriteW2's root is %+v, PushW2's %+v", root, want)
	}
	repo := registrytest.Repository(t, c, reg.Host+"/"+root.Repo)
	d, err := repo.Resolve(ctx, root.Tag)
	if err != nil {
		t.Fatal(err)
	}
	if d.Digest != root.Digest {
		t.Fatalf("root resolves to %s, written as %s", d.Digest, root.Digest)
	}
	if _, err := oras.Copy(ctx, repo, root.Tag, memory.New(), "", oras.DefaultCopyOptions); err != nil {
		t.Fatalf("copying the root's graph: %v", err)
	}
	for l, n := range Levels(spec.Packages, spec.Depth) {
		var tags []string
		if err := registrytest.Repository(t, c, reg.Host+"/"+W2Name(l, n-1)).Tags(ctx, "", func(ts []string) error {
			tags = append(tags, ts...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(tags) != spec.Tags {
			t.Fatalf("%s lists tags %v, want %d", W2Name(l, n-1), tags, spec.Tags)
		}
	}
}

// TestBookkeeping: every step of the in-process timing runs on a small
// synthetic closure, relocate.Mirror stopping at the layout clash.
func TestBookkeeping(t *testing.T) {
	b, err := Bookkeeping(context.Background(), 200)
	if err != nil {
		t.Fatal(err)
	}
	if b.Packages != 200 || len(b.Steps) != 9 {
		t.Fatalf("Bookkeeping = %+v, want 9 steps over 200 packages", b)
	}
}
