package relocate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/quirkproxy"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

// copyLock returns a lock with its own package slice.
func copyLock(l *lock.Lock) *lock.Lock {
	c := *l
	c.Packages = append([]lock.Package(nil), l.Packages...)
	return &c
}

// TestMirrorRepositoryQuirks mirrors into registries that refuse
// repositories distribution takes: Quay's and Docker Hub's two-component
// names (refused with a message naming the flatten option, then mirrored
// flattened, recorded in the lock), and ECR's and Harbor's repositories
// that must be created first (refused at the first write, naming each
// repository and how to create it, without retries; mirrored once
// created).
func TestMirrorRepositoryQuirks(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	const n = 3
	l, _ := sharedClosure(t, c, src, n)

	tests := []struct {
		name    string
		opts    quirkproxy.Options
		flatten bool
		create  bool
		// wantErr lists what the error must say; empty: the mirror works.
		wantErr []string
		missing bool
		// auth: the refusal is a 403, an *client.AuthError.
		auth bool
	}{
		{name: "two components, nested paths refused", opts: quirkproxy.Options{MaxDepth: 2},
			wantErr: []string{"NAME_INVALID", "/m/shared/app-00", "two path components", "flatten"}},
		{name: "two components, flattened", opts: quirkproxy.Options{MaxDepth: 2}, flatten: true},
		{name: "repositories must exist, none created", opts: quirkproxy.Options{MustCreate: true},
			wantErr: []string{"/m/shared/app-00 does not exist", "/m/shared/app-02 does not exist", "aws ecr create-repository --repository-name m/shared/app-01", `create the project "m"`}, missing: true},
		{name: "repositories must exist, created", opts: quirkproxy.Options{MustCreate: true}, create: true},
		{name: "repositories must exist, 403", opts: quirkproxy.Options{MustCreate: true, Forbidden: true},
			wantErr: []string{"403", "check that " + "HOST/m/shared/app-00 exists", "aws ecr create-repository --repository-name m/shared/app-01", `create the project "m"`}, auth: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := quirkproxy.New(tt.opts)
			mirror := registrytest.New(t, registrytest.WithWrap(q.Wrap))
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			to.Flatten = tt.flatten
			if err := to.CheckFlatten(); err != nil {
				t.Fatal(err)
			}
			pl := copyLock(l)
			if tt.create {
				for _, p := range pl.Packages {
					_, path, _ := strings.Cut(to.Repo(p.Source), "/")
					q.Create(path)
				}
			}
			start := time.Now()
			// A retry would wait a second: failing faster shows none.
			_, err = relocate.Mirror(ctx, pl, relocate.Options{Source: c, To: to, Concurrency: 4, Retry: client.RetryPolicy{Attempts: 4, Backoff: time.Second}})
			took := time.Since(start)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range pl.Resolved() {
					if tt.flatten && strings.Count(strings.TrimPrefix(p.Mirror, mirror.Host+"/"), "/") != 1 {
						t.Errorf("%s mirrored to %s: not NAMESPACE/NAME", p.Source, p.Mirror)
					}
					d, err := registrytest.Repository(t, c, p.Mirror).Resolve(ctx, p.Version)
					if err != nil || d.Digest.String() != p.Digest {
						t.Errorf("%s:%s -> %v, %v", p.Mirror, p.Version, d.Digest, err)
					}
				}
				return
			}
			if err == nil {
				t.Fatal("mirror succeeded")
			}
			for _, w := range tt.wantErr {
				w = strings.ReplaceAll(w, "HOST", mirror.Host)
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			var re *client.RepositoryRefusedError
			var ae *client.AuthError
			switch {
			case tt.auth && !errors.As(err, &ae):
				t.Errorf("error is not an AuthError: %v", err)
			case !tt.auth && (!errors.As(err, &re) || re.Missing() != tt.missing):
				t.Errorf("error is not a RepositoryRefusedError (Missing %v): %v", tt.missing, err)
			}
			// Refused at the first writes of each package, never retried.
			if took > time.Second {
				t.Errorf("took %v to fail: retried", took)
			}
			t.Logf("failed in %v after %d refusals: %v", took.Round(time.Millisecond), q.Refused(), err)
		})
	}
}

// TestMirrorImmutableTags mirrors into registries whose tags are
// immutable, each answering as it does (ECR 400 TAG_INVALID, Harbor 412,
// Docker Hub 403): mirroring the same lock again skips the tag the
// mirror already has, and a lock whose tag names another digest fails as
// a mismatch (exit 3) naming both digests.
func TestMirrorImmutableTags(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l, _ := sharedClosure(t, c, src, 1)
	// Another manifest in the same source repository, locked at the same
	// version: the mirror's tag already names the first one.
	p0 := l.Packages[0]
	srcRepo := registrytest.Repository(t, c, p0.Source)
	cfg, err := oras.PushBytes(ctx, srcRepo, ocispec.MediaTypeImageConfig, []byte(`{"architecture":"arm64","os":"linux"}`))
	if err != nil {
		t.Fatal(err)
	}
	other, err := oras.PackManifest(ctx, srcRepo, oras.PackManifestVersion1_1, "", oras.PackManifestOptions{ConfigDescriptor: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	moved := copyLock(l)
	moved.Packages[0].Digest, moved.Packages[0].Size = other.Digest.String(), other.Size

	for _, answer := range []quirkproxy.Answer{quirkproxy.ECR, quirkproxy.Harbor, quirkproxy.DockerHub} {
		t.Run(string(answer), func(t *testing.T) {
			q := quirkproxy.New(quirkproxy.Options{Immutable: answer})
			mirror := registrytest.New(t, registrytest.WithWrap(q.Wrap))
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			opts := relocate.Options{Source: c, To: to, Concurrency: 4, Retry: client.RetryPolicy{Attempts: 4, Backoff: 200 * time.Millisecond}}
			for run := 1; run <= 2; run++ {
				if _, err := relocate.Mirror(ctx, copyLock(l), opts); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
			}
			if q.Refused() != 0 {
				t.Errorf("the same lock again: %d tag PUTs refused, want none (the tag is checked first)", q.Refused())
			}
			_, err = relocate.Mirror(ctx, copyLock(moved), opts)
			if err == nil {
				t.Fatal("moving an immutable tag succeeded")
			}
			if !errors.Is(err, errkind.Mismatch) {
				t.Errorf("not a mismatch (exit 3): %v", err)
			}
			for _, w := range []string{p0.Digest, other.Digest.String(), "immutable", ":" + p0.Version} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "create-repository") {
				t.Errorf("an immutable tag explained as a repository to create:\n%v", err)
			}
			if q.Refused() != 1 {
				t.Errorf("%d tag PUTs refused, want 1 (not retried)", q.Refused())
			}
		})
	}
}

// TestMappingFlatten pins the flattening rule and its refusal of a deep
// prefix.
func TestMappingFlatten(t *testing.T) {
	tests := []struct {
		to, source, want string
		wantErr          bool
	}{
		{to: "quay.io/org", source: "docker.io/library/nginx", want: "quay.io/org/library-nginx"},
		{to: "quay.io/org", source: "ghcr.io/a/b/c", want: "quay.io/org/a-b-c"},
		{to: "quay.io/org", source: "ghcr.io/app", want: "quay.io/org/app"},
		{to: "quay.io", source: "ghcr.io/a/b", want: "quay.io/a-b"},
		{to: "quay.io/org/team", source: "ghcr.io/a/b", wantErr: true},
	}
	for _, tt := range tests {
		m, err := relocate.ParseMapping(tt.to)
		if err != nil {
			t.Fatal(err)
		}
		m.Flatten = true
		if err := m.CheckFlatten(); (err != nil) != tt.wantErr {
			t.Errorf("%s: CheckFlatten: %v", tt.to, err)
			continue
		} else if err != nil {
			if !errors.Is(err, errkind.BadInput) {
				t.Errorf("%s: %v is not bad input", tt.to, err)
			}
			continue
		}
		if got := m.Repo(tt.source); got != tt.want {
			t.Errorf("%s + %s -> %s, want %s", tt.to, tt.source, got, tt.want)
		}
	}
	m, _ := relocate.ParseMapping("quay.io/org")
	m.Flatten = true
	if err := m.Check([]string{"ghcr.io/a/b-c", "ghcr.io/a-b/c"}); err == nil {
		t.Error("two sources flattened alike were not refused")
	}
}

// TestMirrorRefusedRepositoriesListed mirrors 12 packages, each into its
// own repository, into a registry where two of the repositories were never
// created. When one is the first package's, the run's probe before copying
// finds it (refusalGate.preflight): every repository is probed, the run
// fails with one error naming both, and nothing is copied. When the first
// package's repository exists, the refusal comes at the first write of a
// later package (app-01, started with the first 8: packages run 8 per -j); the run starts
// no further package, names both (app-11 probed, not written to), and the
// packages it had not started copied nothing, although their repositories
// take pushes.
func TestMirrorRefusedRepositoriesListed(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	const n = 12
	l, _ := sharedClosure(t, c, src, n)
	archive := filepath.Join(t.TempDir(), "closure.tar")
	al := copyLock(l)
	al.APIVersion, al.Kind = lock.APIVersion, lock.Kind
	if _, err := relocate.ToArchive(ctx, al, archive, relocate.Options{Source: c, Concurrency: 2}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		opts quirkproxy.Options
		want []string
		// fromArchive imports the archive instead of mirroring from the
		// source registry.
		fromArchive bool
		// refuse names the repositories not created (default app-00 and
		// app-11); beforeCopy is whether the refusal must come before
		// any package starts.
		refuse     []string
		beforeCopy bool
	}{
		{name: "404 NAME_UNKNOWN", opts: quirkproxy.Options{MustCreate: true}, beforeCopy: true,
			want: []string{"/m/shared/app-00 does not exist", "/m/shared/app-11 does not exist", "refuses pushes into 2 repositories", "checked before copying; nothing was copied"}},
		{name: "403", opts: quirkproxy.Options{MustCreate: true, Forbidden: true}, beforeCopy: true,
			want: []string{"check that HOST/m/shared/app-00 exists", "check that HOST/m/shared/app-11 exists", "refuses pushes into 2 repositories", "aws ecr create-repository"}},
		{name: "404 NAME_UNKNOWN, from an archive", opts: quirkproxy.Options{MustCreate: true}, fromArchive: true, beforeCopy: true,
			want: []string{"/m/shared/app-00 does not exist", "/m/shared/app-11 does not exist", "refuses pushes into 2 repositories"}},
		{name: "first repository created, a later one refused", opts: quirkproxy.Options{MustCreate: true}, refuse: []string{"app-01", "app-11"},
			want: []string{"/m/shared/app-01 does not exist", "/m/shared/app-11 does not exist", "refuses pushes into 2 repositories", "at the first refusal"}},
		{name: "first repository created, a later one refused, from an archive", opts: quirkproxy.Options{MustCreate: true}, fromArchive: true, refuse: []string{"app-01", "app-11"},
			want: []string{"/m/shared/app-01 does not exist", "/m/shared/app-11 does not exist", "refuses pushes into 2 repositories"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := quirkproxy.New(tt.opts)
			mirror := registrytest.New(t, registrytest.WithWrap(q.Wrap))
			to, err := relocate.ParseMapping(mirror.Host + "/m")
			if err != nil {
				t.Fatal(err)
			}
			pl := copyLock(l)
			refused := map[string]bool{}
			for _, p := range pl.Resolved() {
				repo := to.Repo(p.Source)
				refuse := tt.refuse
				if refuse == nil {
					refuse = []string{"app-00", "app-11"}
				}
				if strings.HasSuffix(repo, "/"+refuse[0]) || strings.HasSuffix(repo, "/"+refuse[1]) {
					refused[repo] = true
					continue
				}
				_, path, _ := strings.Cut(repo, "/")
				q.Create(path)
			}
			opts := relocate.Options{Source: c, To: to, Concurrency: 1, Retry: client.RetryPolicy{Attempts: 4, Backoff: time.Second}}
			if tt.fromArchive {
				_, _, err = relocate.FromArchive(ctx, archive, opts, nil)
			} else {
				_, err = relocate.Mirror(ctx, pl, opts)
			}
			var re *relocate.RepositoriesRefusedError
			if !errors.As(err, &re) {
				t.Fatalf("error is not a RepositoriesRefusedError: %v", err)
			}
			for _, w := range tt.want {
				if w = strings.ReplaceAll(w, "HOST", mirror.Host); !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if len(re.Repositories) != 2 {
				t.Errorf("refused repositories %v, want the 2 not created", re.Repositories)
			}
			if re.NotStarted == 0 {
				t.Errorf("every package started before the first refusal: %v", err)
			}
			if re.BeforeCopy != tt.beforeCopy {
				t.Errorf("refusal found before copying: %v, want %v", re.BeforeCopy, tt.beforeCopy)
			}
			if tt.beforeCopy && (len(re.Copied) > 0 || re.NotStarted != n) {
				t.Errorf("refused before copying, yet %d packages copied and %d of %d not started", len(re.Copied), re.NotStarted, n)
			}
			copied := map[string]bool{}
			for _, s := range re.Copied {
				copied[s] = true
			}
			for _, p := range pl.Resolved() {
				repo := to.Repo(p.Source)
				if refused[repo] || copied[p.Source] {
					continue
				}
				if tags, err := client.ListTags(ctx, registrytest.Repository(t, c, repo)); err == nil && len(tags) > 0 {
					t.Errorf("%s not reported copied, but %s holds tags %v", p.Source, repo, tags)
				}
			}
			t.Logf("%d packages copied before the first refusal, %d not started, %d refusals answered: %v", len(re.Copied), re.NotStarted, q.Refused(), err)
		})
	}
}

// TestMirrorShardRefusedRepositories runs a sharded mirror into a registry
// where two of the four repositories were never created: the shard fails
// with one error naming both, whether the refusal came in its blob phase
// (blobs go to their canonical repository first) or its package phase.
func TestMirrorShardRefusedRepositories(t *testing.T) {
	ctx := context.Background()
	c := registrytest.Client(t)
	src := registrytest.New(t)
	l, _ := sharedClosure(t, c, src, 4)
	q := quirkproxy.New(quirkproxy.Options{MustCreate: true})
	mirror := registrytest.New(t, registrytest.WithWrap(q.Wrap))
	to, err := relocate.ParseMapping(mirror.Host + "/m")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Resolved() {
		if _, path, _ := strings.Cut(to.Repo(p.Source), "/"); !strings.HasSuffix(path, "/app-00") && !strings.HasSuffix(path, "/app-03") {
			q.Create(path)
		}
	}
	_, err = relocate.MirrorShard(ctx, copyLock(l), relocate.Options{Source: c, To: to, Concurrency: 2},
		relocate.ShardOptions{Shard: relocate.Shard{Index: 1, Count: 1}, Wait: 5 * time.Second})
	var re *relocate.RepositoriesRefusedError
	if !errors.As(err, &re) {
		t.Fatalf("error is not a RepositoriesRefusedError: %v", err)
	}
	for _, w := range []string{"/m/shared/app-00 does not exist", "/m/shared/app-03 does not exist"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
	if len(re.Repositories) != 2 {
		t.Errorf("refused repositories %v, want the 2 not created", re.Repositories)
	}
	t.Logf("%v", err)
}
