package relocate_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

func TestParseShard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    relocate.Shard
		wantErr bool
	}{
		{in: "1/1", want: relocate.Shard{Index: 1, Count: 1}},
		{in: "1/4", want: relocate.Shard{Index: 1, Count: 4}},
		{in: "4/4", want: relocate.Shard{Index: 4, Count: 4}},
		{in: "0/4", wantErr: true},
		{in: "5/4", wantErr: true},
		{in: "-1/4", wantErr: true},
		{in: "1/0", wantErr: true},
		{in: "x", wantErr: true},
		{in: "x/4", wantErr: true},
		{in: "1/x", wantErr: true},
		{in: "", wantErr: true},
		{in: "1/2/3", wantErr: true},
	}
	for _, tt := range tests {
		got, err := relocate.ParseShard(tt.in)
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		if err == nil && got.String() != tt.in {
			t.Errorf("ParseShard(%q).String() = %q", tt.in, got.String())
		}
	}
}

// TestParseShardEnv pins auto/N: a Kubernetes Indexed Job's
// JOB_COMPLETION_INDEX counts from 0, GitLab's CI_NODE_INDEX from 1.
func TestParseShardEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		env     map[string]string
		want    relocate.Shard
		wantErr bool
	}{
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, want: relocate.Shard{Index: 1, Count: 4}},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, want: relocate.Shard{Index: 4, Count: 4}},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "4"}, wantErr: true},
		{in: "auto/4", env: map[string]string{"CI_NODE_INDEX": "4"}, want: relocate.Shard{Index: 4, Count: 4}},
		{in: "auto/4", env: map[string]string{"CI_NODE_INDEX": "0"}, wantErr: true},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "1", "CI_NODE_INDEX": "1"}, want: relocate.Shard{Index: 2, Count: 4}},
		{in: "auto/4", env: map[string]string{"JOB_COMPLETION_INDEX": "one"}, wantErr: true},
		{in: "auto/4", env: nil, wantErr: true},
		{in: "2/4", env: map[string]string{"JOB_COMPLETION_INDEX": "0"}, want: relocate.Shard{Index: 2, Count: 4}},
	}
	for _, tt := range tests {
		got, err := relocate.ParseShardEnv(tt.in, func(k string) string { return tt.env[k] })
		if (err != nil) != tt.wantErr || (err == nil && got != tt.want) {
			t.Errorf("ParseShardEnv(%q, %v) = %v, %v; want %v, error %v", tt.in, tt.env, got, err, tt.want, tt.wantErr)
		}
	}
}

// uploadLog records the digest of every finished blob upload (the PUT
// that closes an upload session) a registry receives.
type uploadLog struct {
	mu      sync.Mutex
	digests []string
}

var uploadDigest = regexp.MustCompile(`[?&]digest=(sha256(?::|%3A)[0-9a-f]{64})`)

func (u *uploadLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := uploadDigest.FindStringSubmatch(r.URL.RawQuery); m != nil && r.Method == http.MethodPut {
			u.mu.Lock()
			u.digests = append(u.digests, strings.Replace(m[1], "%3A", ":", 1))
			u.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

func (u *uploadLog) take() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := u.digests
	u.digests = nil
	slices.Sort(out)
	return out
}

// cloneLock gives each in-process shard its own lock, as separate
// processes have.
func cloneLock(l *lock.Lock) *lock.Lock {
	c := *l
	c.Packages = slices.Clone(l.Packages)
	return &c
}

// TestMirrorShard: the shards of a lock, run at once, make the mirror a
// single run makes, each unique blob uploaded once by one of them; a
// shard whose blobs' owners never run fails naming them; a second run of
// every shard uploads nothing.
func TestMirrorShard(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	var log uploadLog
	dst := registrytest.New(t, registrytest.WithWrap(log.wrap))

	// One process.
	one, _ := relocate.ParseMapping(dst.Host + "/one")
	if _, err := relocate.Mirror(ctx, cloneLock(l), relocate.Options{Source: c, To: one, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	single := slices.Compact(log.take())
	if len(single) < 3 {
		t.Fatalf("the fixture has %d unique blobs and manifests, want several", len(single))
	}

	tests := []struct {
		name  string
		count int
	}{
		{"one shard", 1},
		{"two shards", 2},
		{"three shards", 3},
		{"more shards than packages", 5},
	}
	for _, tt := range tests {
		to, _ := relocate.ParseMapping(dst.Host + "/" + strings.ReplaceAll(tt.name, " ", "-"))
		run := func() []*relocate.Report {
			reps := make([]*relocate.Report, tt.count)
			errs := make([]error, tt.count)
			var wg sync.WaitGroup
			for i := range tt.count {
				wg.Go(func() {
					reps[i], errs[i] = relocate.MirrorShard(ctx, cloneLock(l), relocate.Options{Source: c, To: to, Concurrency: 2},
						relocate.ShardOptions{Shard: relocate.Shard{Index: i + 1, Count: tt.count}, Wait: time.Minute})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("%s: shard %d: %v", tt.name, i+1, err)
				}
			}
			return reps
		}
		reps := run()
		// Every upload of a blob or manifest happened once, and the
		// sharded mirror received what the single run sent.
		got := log.take()
		if !slices.Equal(got, single) {
			t.Errorf("%s: uploads\n%v\nwant (one process)\n%v", tt.name, got, single)
		}
		var uploaded, copied int
		for _, r := range reps {
			uploaded += r.Shard.Uploaded
			copied += r.Shard.Copied
			if r.Shard.Count != tt.count || len(r.Packages) != r.Shard.Copied {
				t.Errorf("%s: shard report %+v with %d packages", tt.name, r.Shard, len(r.Packages))
			}
		}
		if copied != len(l.Resolved()) || uploaded != reps[0].Shard.Blobs {
			t.Errorf("%s: %d packages copied (lock has %d), %d blobs uploaded (lock has %d)", tt.name, copied, len(l.Resolved()), uploaded, reps[0].Shard.Blobs)
		}
		// The same tags and digests as the single run.
		for _, p := range l.Resolved() {
			for _, m := range []relocate.Mapping{one, to} {
				repo, err := c.Repository(m.Repo(p.Source))
				if err != nil {
					t.Fatal(err)
				}
				d, err := repo.Resolve(ctx, p.Version)
				if err != nil || d.Digest.String() != p.Digest {
					t.Errorf("%s: %s:%s -> %v, %v; want %s", tt.name, m.Repo(p.Source), p.Version, d.Digest, err, p.Digest)
				}
			}
		}
		// Run again: nothing is sent.
		reps = run()
		if got := log.take(); len(got) > 0 {
			t.Errorf("%s: the re-run uploaded %v", tt.name, got)
		}
		for _, r := range reps {
			if r.Shard.Uploaded != 0 || r.Shard.Waited != 0 {
				t.Errorf("%s: re-run shard report %+v", tt.name, r.Shard)
			}
		}
	}

	// Alone, the first of many shards cannot finish: the blobs of its
	// package belong to shards that never run.
	to, _ := relocate.ParseMapping(dst.Host + "/alone")
	_, err := relocate.MirrorShard(ctx, cloneLock(l), relocate.Options{Source: c, To: to, Concurrency: 2},
		relocate.ShardOptions{Shard: relocate.Shard{Index: 1, Count: 64}, Wait: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "run those shards") {
		t.Errorf("a shard whose blobs never came: %v", err)
	}
}
