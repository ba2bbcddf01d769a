package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/cosigntest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/signature"
	"github.com/ferryhq/ferry/trust"
)

// tamperWorld is the air-gapped flow every tamper case starts from: a
// bundle with a mixin, signed by the real cosign at its source, locked
// with a signed lock, written to an archive.
type tamperWorld struct {
	src      *registrytest.Registry
	cosign   *cosigntest.Cosign
	otherKey string // a cosign key the trust rule does not name
	app      string // the bundle's source repository
	older    digest.Digest
	// pkg is the locked bundle; exec the locked mixin.
	pkg  *lock.Package
	exec mixin.Locked
	// archive is the closure written by mirror --to-archive; pub the
	// public key of the signing key.
	archive, pub string
	// signedLock and lockSig are the lock and its signature.
	signedLock, lockSig string
}

// tamperRun is one command a tamper case must fail, and what its
// standard error (or output) must name.
type tamperRun struct {
	args []string
	code int
	want []string
}

// air returns a fresh environment on the far side of the gap holding the
// archive and the public key.
func (w *tamperWorld) air(t *testing.T) *clitest.Env {
	t.Helper()
	env := clitest.New(t)
	env.WriteFile("cosign.pub", w.pub)
	data, err := os.ReadFile(w.archive)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(env.Path("closure.tar"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return env
}

// imported returns an environment whose mirror (a registry of its own)
// holds the archive, imported with the lock's signature checked, and the
// mirror's HOST/PREFIX.
func (w *tamperWorld) imported(t *testing.T) (*clitest.Env, *registrytest.Registry, string) {
	t.Helper()
	env := w.air(t)
	reg := registrytest.New(t)
	to := reg.Host + "/m"
	env.MustRun("mirror", "--from-archive", "closure.tar", "--to", to, "--lock-key", "cosign.pub")
	return env, reg, to
}

// mirrored is the package's repository in the mirror under to.
func (w *tamperWorld) mirrored(to string) string {
	return to + strings.TrimPrefix(w.app, w.src.Host)
}

func newTamperWorld(t *testing.T) *tamperWorld {
	t.Helper()
	ctx := context.Background()
	w := &tamperWorld{src: registrytest.New(t), cosign: cosigntest.V2(t)}
	w.app = w.src.Host + "/acme/app"
	feed := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	c := registrytest.Client(t)
	key, pub := w.cosign.GenerateKeyPair(t)
	w.otherKey, _ = w.cosign.GenerateKeyPair(t)
	w.pub = string(mustRead(t, pub))
	digests := map[string]digest.Digest{}
	for _, v := range []string{"1.0.0", "1.1.0"} {
		desc, err := fixture.PushBundle(ctx, registrytest.Repository(t, c, w.app), w.app, fixture.Bundle{
			Name: "app", Version: v, Tags: []string{"v" + v}, Images: []string{"web"}, Mixins: map[string]string{"exec": "v1.2.3"},
		})
		if err != nil {
			t.Fatal(err)
		}
		digests[v] = desc.Digest
		// Both releases are properly signed by the publisher.
		w.cosign.SignImage(t, key, w.app+"@"+desc.Digest.String())
	}
	w.older = digests["1.0.0"]

	env := clitest.New(t)
	env.Vars = append(env.Vars, mixin.FeedEnv+"="+feed.URL, signature.PasswordEnv+"="+cosigntest.Password)
	env.WriteFile("cosign.pub", w.pub)
	env.WriteFile("ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\npackages:\n  - ref: "+w.app+":v1.1.0\nplatforms: [linux/amd64]\nbundleMixins: true\n")
	env.MustRun("lock", "--sign-key", key, "--verify-key", "cosign.pub")
	w.signedLock, w.lockSig = env.ReadFile("ferry.lock"), env.ReadFile("ferry.lock.sig")
	// cosign's own blob verification accepts the lock's signature.
	if err := w.cosign.VerifyBlob(t, pub, env.Path("ferry.lock.sig"), env.Path("ferry.lock")); err != nil {
		t.Fatalf("cosign verify-blob refused the lock's signature: %v", err)
	}
	l := e2eReadLock(t, env, "ferry.lock")
	w.pkg = l.Package(w.app)
	if w.pkg == nil || w.pkg.Digest != digests["1.1.0"].String() {
		t.Fatalf("locked %+v, want %s", w.pkg, digests["1.1.0"])
	}
	if len(w.pkg.Signatures) == 0 {
		t.Fatalf("the lock records no signature of %s", w.app)
	}
	ms, err := mixin.FromLock(l)
	if err != nil || len(ms) != 1 {
		t.Fatalf("locked mixins %+v: %v", ms, err)
	}
	w.exec = ms[0]
	env.MustRun("mirror", "--to-archive", "closure.tar")
	w.archive = env.Path("closure.tar")
	return w
}

// TestTamperExitCodes walks every tamper case of the air-gapped flow with
// real cosign signatures: each exits 3, names the artifact, and installs
// nothing.
func TestTamperExitCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := newTamperWorld(t)
	c := registrytest.Client(t)
	root := w.pkg.Descriptor()
	sigTag := signature.Tag(root.Digest)
	attTag := trust.CosignTag(root.Digest, trust.KindAtt)

	// The untampered flow passes end to end.
	t.Run("untampered", func(t *testing.T) {
		t.Parallel()
		env := w.air(t)
		env.MustRun("verify", "--archive", "closure.tar", "--lock-key", "cosign.pub")
		env, _, _ = w.imported(t)
		if env.ReadFile("ferry.lock") != w.signedLock || env.ReadFile("ferry.lock.sig") != w.lockSig {
			t.Fatal("the import rewrote the signed lock")
		}
		env.MustRun("verify", "--deep", "--key", "cosign.pub", "--lock-key", "cosign.pub")
		env.MustRun("install", "--lock-key", "cosign.pub", "--dest", "out", "--porter-home", "home")
		if _, err := os.Stat(env.Path("out/relocation-mapping.json")); err != nil {
			t.Fatal(err)
		}
	})

	// Blobs of the archive: the bundle's largest layer, the mixin's
	// binary, the root manifest.
	_, files := tarEntries(t, w.archive)
	binary := w.exec.Binaries["exec-linux-amd64"].Digest
	blobName := func(d string) string { return "blobs/" + strings.Replace(d, ":", "/", 1) }
	if len(w.pkg.Images) == 0 {
		t.Fatal("the lock records no image")
	}
	var img ocispec.Manifest
	if err := json.Unmarshal(files[blobName(w.pkg.Images[0].Digest)], &img); err != nil || len(img.Layers) == 0 {
		t.Fatalf("image %s in the archive: %v", w.pkg.Images[0].Digest, err)
	}
	layer := blobName(img.Layers[0].Digest.String())
	if _, ok := files[blobName(binary)]; !ok || files[layer] == nil {
		t.Fatalf("the archive holds no mixin binary %s or no layer %s", binary, layer)
	}
	layerDigest := strings.Replace(strings.TrimPrefix(layer, "blobs/"), "/", ":", 1)
	flip := func(target string) func(string, []byte) []byte {
		return func(n string, b []byte) []byte {
			if n == target {
				b = append([]byte(nil), b...)
				b[len(b)/2] ^= 0xff
			}
			return b
		}
	}

	// Archive cases: verify --archive and the import refuse, before the
	// mirror gets any manifest.
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, path string)
		runs []tamperRun
	}{
		{"blob changed in the archive", func(t *testing.T, p string) { rewriteTar(t, p, p, flip(layer)) },
			[]tamperRun{{[]string{"verify", "--archive", "closure.tar"}, 3, []string{layerDigest}}, {[]string{"IMPORT"}, 3, []string{layerDigest}}}},
		{"manifest changed in the archive", func(t *testing.T, p string) {
			rewriteTar(t, p, p, func(n string, b []byte) []byte {
				if n == blobName(w.pkg.Digest) {
					b = bytes.Replace(b, []byte(`"schemaVersion":2`), []byte(`"schemaVersion":3`), 1)
				}
				return b
			})
		}, []tamperRun{{[]string{"verify", "--archive", "closure.tar"}, 3, []string{w.pkg.Digest}}, {[]string{"IMPORT"}, 3, []string{w.pkg.Digest}}}},
		{"mixin binary replaced in the archive", func(t *testing.T, p string) { rewriteTar(t, p, p, flip(blobName(binary))) },
			[]tamperRun{{[]string{"verify", "--archive", "closure.tar"}, 3, []string{binary}}, {[]string{"IMPORT"}, 3, []string{binary}}}},
		{"lock edited after signing, in the archive", func(t *testing.T, p string) {
			rewriteTar(t, p, p, func(n string, b []byte) []byte {
				if n == relocate.ArchiveLockFile {
					b = append(append([]byte(nil), b...), "# edited\n"...)
				}
				return b
			})
		}, []tamperRun{{[]string{"verify", "--archive", "closure.tar", "--lock-key", "cosign.pub"}, 3, []string{relocate.ArchiveLockFile}}, {[]string{"IMPORT"}, 3, []string{relocate.ArchiveLockFile}}}},
		{"digest edited in the archive's lock", func(t *testing.T, p string) {
			rewriteTar(t, p, p, func(n string, b []byte) []byte {
				if n == relocate.ArchiveLockFile {
					b = bytes.ReplaceAll(b, []byte(w.pkg.Digest), []byte(w.older.String()))
				}
				return b
			})
		}, []tamperRun{{[]string{"verify", "--archive", "closure.tar", "--lock-key", "cosign.pub"}, 3, []string{relocate.ArchiveLockFile}}, {[]string{"IMPORT"}, 3, []string{relocate.ArchiveLockFile}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := w.air(t)
			tc.edit(t, env.Path("closure.tar"))
			reg := registrytest.New(t)
			for _, r := range tc.runs {
				args := r.args
				if args[0] == "IMPORT" {
					args = []string{"mirror", "--from-archive", "closure.tar", "--to", reg.Host + "/m", "--lock-key", "cosign.pub"}
				}
				r.args = args
				r.check(t, env)
			}
			if n := manifestPuts(reg); n != 0 {
				t.Errorf("%d manifests pushed to the mirror by a refused import", n)
			}
			e2eAbsent(t, env.Path("ferry.lock"))
		})
	}

	// The import ignores and reports an attestation injected into the
	// archive; the mirror does not get it.
	t.Run("attestation injected in the archive", func(t *testing.T) {
		t.Parallel()
		env := w.air(t)
		var att ocispec.Descriptor
		e2eEditArchive(t, env.Path("closure.tar"), func(s *oci.Store) {
			var err error
			if att, err = oras.PackManifest(ctx, s, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Tag(ctx, att, w.app+":"+attTag); err != nil {
				t.Fatal(err)
			}
		})
		reg := registrytest.New(t)
		to := reg.Host + "/m"
		r := env.MustRun("mirror", "--from-archive", "closure.tar", "--to", to, "--lock-key", "cosign.pub")
		if want := "not copied, the lock does not name it: " + w.app + ":" + attTag + " (" + att.Digest.String() + ")"; !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.Stderr)
		}
		t.Logf("ferry mirror --from-archive: exit %d: %s", r.Code, lastLine(r))
		env.MustRun("verify", "--key", "cosign.pub", "--lock-key", "cosign.pub")
	})

	// Mirror and lock cases: each on a mirror of its own, tampered after
	// the import.
	mirrorRepo := func(t *testing.T, name string) *remoteRepo {
		t.Helper()
		return &remoteRepo{registrytest.Repository(t, c, name)}
	}
	verifyArgs := []string{"verify", "--key", "cosign.pub", "--lock-key", "cosign.pub"}
	installArgs := []string{"install", "--lock-key", "cosign.pub", "--dest", "out", "--porter-home", "home"}
	for _, tc := range []struct {
		name string
		// tamper changes the mirror (repo is the package's repository
		// there) or the lock, and returns the runs to check and the
		// arguments appended to each.
		tamper func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun
	}{
		{"tag moved in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			r := mirrorRepo(t, w.mirrored(to))
			child := r.child(t, root)
			if err := r.Tag(ctx, child, w.pkg.Version); err != nil {
				t.Fatal(err)
			}
			want := []string{w.mirrored(to) + ":" + w.pkg.Version, "points at " + child.Digest.String()}
			return []tamperRun{{verifyArgs, 3, want}, {installArgs, 3, want}}
		}},
		{"downgrade under the newer tag in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			// The older release, with its valid signature, copied under
			// the newer tag.
			srcRepo := registrytest.Repository(t, c, w.app)
			dst := registrytest.Repository(t, c, w.mirrored(to))
			if _, err := oras.Copy(ctx, srcRepo, w.older.String(), dst, w.pkg.Version, oras.DefaultCopyOptions); err != nil {
				t.Fatal(err)
			}
			if _, err := oras.Copy(ctx, srcRepo, signature.Tag(w.older), dst, signature.Tag(w.older), oras.DefaultCopyOptions); err != nil {
				t.Fatal(err)
			}
			want := []string{w.mirrored(to) + ":" + w.pkg.Version, "points at " + w.older.String()}
			return []tamperRun{{verifyArgs, 3, want}, {installArgs, 3, want}}
		}},
		{"signature removed in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			mirrorRepo(t, w.mirrored(to)).remove(t, sigTag)
			want := []string{w.mirrored(to) + ":" + sigTag, "missing"}
			return []tamperRun{{verifyArgs, 3, want}, {installArgs, 3, want}}
		}},
		{"signature made by another key in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			mirrorRepo(t, w.mirrored(to)).remove(t, sigTag)
			w.cosign.SignImage(t, w.otherKey, w.mirrored(to)+"@"+w.pkg.Digest)
			want := []string{w.mirrored(to) + ":" + sigTag}
			return []tamperRun{{verifyArgs, 3, append(want, "does not verify")}, {installArgs, 3, want}}
		}},
		{"attestation injected in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			r := mirrorRepo(t, w.mirrored(to))
			att, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, "application/vnd.dsse.envelope.v1+json", oras.PackManifestOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Tag(ctx, att, attTag); err != nil {
				t.Fatal(err)
			}
			want := []string{w.mirrored(to) + ":" + attTag, att.Digest.String(), "the lock does not name it"}
			return []tamperRun{{verifyArgs, 3, want}, {installArgs, 3, want}}
		}},
		{"referrer injected in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			r := mirrorRepo(t, w.mirrored(to))
			ref, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, cosigntest.BundleMediaType, oras.PackManifestOptions{Subject: &root})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{w.mirrored(to) + "@" + ref.Digest.String(), "the lock does not name it"}
			return []tamperRun{{verifyArgs, 3, want}, {installArgs, 3, want}}
		}},
		{"mixin artifact replaced under its tag in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			mixinRepo := to + "/porter-mixins/exec"
			r := mirrorRepo(t, mixinRepo)
			evil := []byte("#!/bin/sh\necho pwned\n")
			ld := ocispec.Descriptor{MediaType: "application/octet-stream", Digest: digest.FromBytes(evil), Size: int64(len(evil)),
				Annotations: map[string]string{ocispec.AnnotationTitle: "exec-linux-amd64"}}
			if err := r.Push(ctx, ld, bytes.NewReader(evil)); err != nil {
				t.Fatal(err)
			}
			art, err := oras.PackManifest(ctx, r, oras.PackManifestVersion1_1, mixin.ArtifactType, oras.PackManifestOptions{Layers: []ocispec.Descriptor{ld}})
			if err != nil {
				t.Fatal(err)
			}
			tag, err := mixin.Tag(w.exec.Version)
			if err != nil {
				t.Fatal(err)
			}
			if err := r.Tag(ctx, art, tag); err != nil {
				t.Fatal(err)
			}
			want := []string{"exec-linux-amd64", ld.Digest.String(), binary}
			return []tamperRun{{verifyArgs, 3, append([]string{mixinRepo}, want...)}, {installArgs, 3, want}}
		}},
		{"mixin binary bytes replaced in the mirror", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			e2eTamper(t, reg, digest.Digest(binary), true)
			want := []string{"exec-linux-amd64", binary}
			return []tamperRun{{append(verifyArgs, "--deep"), 3, append([]string{to + "/porter-mixins/exec@" + binary, "hashes to"}, want...)}, {installArgs, 3, want}}
		}},
		{"digest edited in an unsigned lock", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			os.Remove(env.Path("ferry.lock.sig"))
			env.WriteFile("ferry.lock", strings.ReplaceAll(w.signedLock, w.pkg.Digest, w.older.String()))
			return []tamperRun{
				{[]string{"verify", "--mirror", to}, 3, []string{w.mirrored(to) + "@" + w.older.String()}},
				// The recorded signature's subject was edited with it.
				{[]string{"install", "--mirror", to, "--dest", "out"}, 3, []string{w.mirrored(to) + ":" + signature.Tag(w.older), "missing"}},
			}
		}},
		{"digest edited in a signed lock", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			env.WriteFile("ferry.lock", strings.ReplaceAll(w.signedLock, w.pkg.Digest, w.older.String()))
			want := []string{"ferry.lock.sig does not sign ferry.lock"}
			return []tamperRun{{append(verifyArgs, "--mirror", to), 3, want}, {append(installArgs, "--mirror", to), 3, want}}
		}},
		{"lock edited after signing", func(t *testing.T, env *clitest.Env, reg *registrytest.Registry, to string) []tamperRun {
			env.WriteFile("ferry.lock", w.signedLock+"# edited\n")
			want := []string{"ferry.lock.sig does not sign ferry.lock"}
			return []tamperRun{{append(verifyArgs, "--mirror", to), 3, want}, {append(installArgs, "--mirror", to), 3, want}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env, reg, to := w.imported(t)
			for _, r := range tc.tamper(t, env, reg, to) {
				r.check(t, env)
				e2eAbsent(t, env.Path("out"))
				e2eAbsent(t, env.Path("home"))
			}
		})
	}

	// An older, properly signed release moved under the newer tag at the
	// source: lock refuses it, naming the tag and both versions. Not
	// parallel: it moves a tag at the source, which the parallel cases
	// read only by digest.
	t.Run("downgrade under the newer tag at the source", func(t *testing.T) {
		srcRepo := registrytest.Repository(t, c, w.app)
		older, err := srcRepo.Resolve(ctx, w.older.String())
		if err != nil {
			t.Fatal(err)
		}
		if err := srcRepo.Tag(ctx, older, "v1.1.0"); err != nil {
			t.Fatal(err)
		}
		env := clitest.New(t)
		env.WriteFile("cosign.pub", w.pub)
		tamperRun{[]string{"lock", w.app + ":v1.1.0", "--verify-key", "cosign.pub"}, exitcode.Mismatch, []string{w.app + ":v1.1.0", "declares version 1.0.0", "names version 1.1.0"}}.check(t, env)
		e2eAbsent(t, env.Path("ferry.lock"))
	})
}

// remoteRepo adds the tampering steps the cases need to a mirror
// repository.
type remoteRepo struct{ *remote.Repository }

// child returns the first manifest of the index root.
func (r *remoteRepo) child(t *testing.T, root ocispec.Descriptor) ocispec.Descriptor {
	t.Helper()
	succ, err := content.Successors(context.Background(), r, root)
	if err != nil || len(succ) == 0 {
		t.Fatalf("children of %s: %v %v", root.Digest, succ, err)
	}
	return succ[0]
}

// remove deletes the manifest tagged tag, and with it the tag.
func (r *remoteRepo) remove(t *testing.T, tag string) {
	t.Helper()
	desc, err := r.Resolve(context.Background(), tag)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Delete(context.Background(), desc); err != nil {
		t.Fatal(err)
	}
}

// lastLine is the last non-empty line of a run's standard error, else of
// its output.
func lastLine(r clitest.Result) string {
	s := strings.TrimSpace(r.Stderr)
	if s == "" {
		s = strings.TrimSpace(r.Stdout)
	}
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// check runs r in env and reports, without stopping, a wrong exit code or
// an artifact its output does not name.
func (r tamperRun) check(t *testing.T, env *clitest.Env) {
	t.Helper()
	res := env.Run(r.args...)
	t.Logf("ferry %s: exit %d: %s", strings.Join(r.args, " "), res.Code, lastLine(res))
	if res.Code != r.code {
		t.Errorf("ferry %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), res.Code, r.code, res.Stdout, res.Stderr)
		return
	}
	for _, w := range r.want {
		if !strings.Contains(res.Stdout+res.Stderr, w) {
			t.Errorf("ferry %s: output lacks %q\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), w, res.Stdout, res.Stderr)
		}
	}
}
