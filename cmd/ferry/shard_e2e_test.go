package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/registry"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/relocate"
)

// shardMeter sits in front of the mirror registry: it counts the body
// bytes of blob uploads (POST, PATCH and PUT under /blobs/uploads/) per
// mirror prefix, and SIGKILLs the armed process at the first finished
// blob upload under its prefix, before answering it. A POST carrying a
// blob that the registry does not complete (distribution answers 202 and
// opens a session: client.PushMonolithic's probe, sent once per registry
// per process) is counted apart, in probes: its bytes go again into the
// session.
type shardMeter struct {
	mu     sync.Mutex
	bytes  map[string]int64
	probes map[string][]int64
	where  string // prefix a kill is for
	armed  atomic.Bool
	kill   atomic.Pointer[os.Process]
	fired  atomic.Bool
}

func (m *shardMeter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.URL.Path, "/blobs/uploads/") {
			next.ServeHTTP(w, r)
			return
		}
		// /v2/PREFIX/...: the first path element after /v2/.
		prefix, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v2/"), "/")
		if m.armed.Load() && prefix == m.where && r.Method == http.MethodPut && r.URL.Query().Get("digest") != "" && !m.fired.Swap(true) {
			p := m.kill.Load()
			for p == nil { // the process is stored just after it starts
				time.Sleep(time.Millisecond)
				p = m.kill.Load()
			}
			_ = p.Kill() // SIGKILL
			http.Error(w, "killed", http.StatusServiceUnavailable)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		rec := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		m.mu.Lock()
		defer m.mu.Unlock()
		if r.Method == http.MethodPost && len(body) > 0 && rec.status != http.StatusCreated {
			if m.probes == nil {
				m.probes = map[string][]int64{}
			}
			m.probes[prefix] = append(m.probes[prefix], int64(len(body)))
			return
		}
		m.bytes[prefix] += int64(len(body))
	})
}

// statusWriter notes the status a handler answers with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// probed returns the sizes of the blob-carrying POSTs under prefix that
// the registry did not complete.
func (m *shardMeter) probed(prefix string) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.probes[prefix]
}

func (m *shardMeter) sent(prefix string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes[prefix]
}

// shardRun is one ferry process started in env.
type shardRun struct {
	cmd *exec.Cmd
	out strings.Builder
	err strings.Builder
}

func startShard(t *testing.T, env *clitest.Env, args ...string) *shardRun {
	t.Helper()
	r := &shardRun{cmd: exec.Command(clitest.Binary(t), args...)}
	r.cmd.Dir = env.Dir
	r.cmd.Env = append(os.Environ(), env.Vars...)
	r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.err
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r
}

// runShards runs the shards of lockFile to to at once, one process each,
// and returns their reports.
func runShards(t *testing.T, env *clitest.Env, lockFile, to string, n int) []relocate.Report {
	t.Helper()
	runs := make([]*shardRun, n)
	for i := range n {
		runs[i] = startShard(t, env, "mirror", "--lock", lockFile, "--to", to, "--shard", fmt.Sprintf("%d/%d", i+1, n), "-j", "4", "-o", "json")
	}
	reps := make([]relocate.Report, n)
	schema := outSchema(t, "mirror")
	for i, r := range runs {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i+1, n, err, r.err.String())
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.out.String()))
		if err != nil {
			t.Fatalf("shard %d/%d: stdout is not JSON: %v\n%s", i+1, n, err, r.out.String())
		}
		if err := schema.Validate(doc); err != nil {
			t.Errorf("shard %d/%d: -o json does not match schemas/mirror.json: %v", i+1, n, err)
		}
		if err := json.Unmarshal([]byte(r.out.String()), &reps[i]); err != nil {
			t.Fatalf("shard %d/%d: %v\n%s", i+1, n, err, r.out.String())
		}
		if reps[i].Shard == nil || reps[i].Shard.Index != i+1 || reps[i].Shard.Count != n {
			t.Fatalf("shard %d/%d reports %+v", i+1, n, reps[i].Shard)
		}
	}
	return reps
}

// TestE2EShardMirror: a lock of eight bundles whose invocation images are
// shared (three images among eight packages) is mirrored by four
// `ferry mirror --shard I/4` processes at once. The mirror equals the one
// a single process makes, the shards send exactly the unique blob bytes
// (as the single process does), a shard killed at its first upload and
// run again completes the mirror, and ferry verify passes on the union.
// A bad --shard is exit 2 before any request.
func TestE2EShardMirror(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	meter := &shardMeter{bytes: map[string]int64{}, where: "killed"}
	mirror := registrytest.New(t, registrytest.WithWrap(meter.wrap))
	c := e2eClient(t)
	h := src.Host
	const packages, images = 8, 3
	var roots, repos []string
	for i := range packages {
		name := fmt.Sprintf("p%d", i)
		repoName := h + "/shard/" + name
		repo := e2eRepo(t, c, repoName)
		inv, err := fixture.PushImage(ctx, repo, fmt.Sprintf("shard-invocation-%d", i%images), 48<<10, 8<<10)
		if err != nil {
			t.Fatal(err)
		}
		bj, err := fixture.Bundle{Name: name, Version: "1.0.0"}.BundleJSON(repoName, inv, nil)
		if err != nil {
			t.Fatal(err)
		}
		e2ePushRaw(t, repo, "v1.0.0", bj, inv)
		roots = append(roots, repoName+":v1.0.0")
		repos = append(repos, "shard/"+name)
	}
	env := e2eEnv(t)
	env.MustRun(append([]string{"lock", "--lock", "base.lock"}, roots...)...)
	base := env.ReadFile("base.lock")
	for _, f := range []string{"one.lock", "four.lock", "killed.lock"} {
		env.WriteFile(f, base)
	}

	// The unique blob bytes of the closure, read from the source.
	unique := map[digest.Digest]int64{}
	for _, root := range roots {
		repo := e2eRepo(t, c, strings.TrimSuffix(root, ":v1.0.0"))
		desc, err := repo.Resolve(ctx, "v1.0.0")
		if err != nil {
			t.Fatal(err)
		}
		next := []ocispec.Descriptor{desc}
		for len(next) > 0 {
			d := next[0]
			next = next[1:]
			succ, err := content.Successors(ctx, repo, d)
			if err != nil {
				t.Fatal(err)
			}
			if len(succ) == 0 && d.Digest != desc.Digest {
				unique[d.Digest] = d.Size
			}
			next = append(next, succ...)
		}
	}
	var uniqueBytes int64
	for _, n := range unique {
		uniqueBytes += n
	}
	if len(unique) >= packages*3 {
		t.Fatalf("the fixture shares no blob: %d unique blobs for %d packages", len(unique), packages)
	}

	// Bad --shard: exit 2, nothing contacted.
	mirror.Reset()
	for _, bad := range []string{"0/4", "5/4", "x", "1/0", "2"} {
		env.Expect(2, []string{"mirror", "--lock", "four.lock", "--to", mirror.Host + "/four", "--shard", bad}, "--shard")
	}
	env.Expect(2, []string{"mirror", "--lock", "four.lock", "--to-archive", env.Path("x.tar"), "--shard", "1/2"}, "--shard")
	env.Expect(2, []string{"mirror", "--lock", "four.lock", "--to", mirror.Host + "/four", "--shard-wait", "1m"}, "--shard")
	env.Expect(2, append([]string{"mirror", "--to", mirror.Host + "/four", "--shard", "1/2"}, roots...), "--shard")
	if reqs := mirror.Requests(); len(reqs) > 0 {
		t.Errorf("a bad --shard contacted the mirror: %v", reqs)
	}

	// One process, then four shards.
	env.MustRun("mirror", "--lock", "one.lock", "--to", mirror.Host+"/one", "-j", "4")
	reps := runShards(t, env, "four.lock", mirror.Host+"/four", 4)
	var uploaded, copied, owned int
	var sent int64
	for _, r := range reps {
		uploaded += r.Shard.Uploaded
		owned += r.Shard.Owned
		copied += r.Shard.Copied
		sent += r.Shard.Bytes
		if len(r.Packages) != r.Shard.Copied || r.Shard.Packages != packages || r.Shard.Blobs != len(unique) {
			t.Errorf("shard %d: %+v with %d packages", r.Shard.Index, r.Shard, len(r.Packages))
		}
	}
	if copied != packages || owned != len(unique) || uploaded != len(unique) || sent != uniqueBytes {
		t.Errorf("shards: %d packages copied, %d blobs owned, %d uploaded (%d bytes); want %d, %d, %d (%d bytes)",
			copied, owned, uploaded, sent, packages, len(unique), len(unique), uniqueBytes)
	}
	// Bytes the registry received: the unique bytes, as from one process.
	if got, one := meter.sent("four"), meter.sent("one"); got != uniqueBytes || one != uniqueBytes {
		t.Errorf("upload bytes received: %d from four shards, %d from one process; unique blob bytes %d", got, one, uniqueBytes)
	}
	// Besides, at most one small blob a process in a POST the registry
	// did not complete (the single-request probe; distribution opens a
	// session, into which the blob then goes).
	for prefix, procs := range map[string]int{"one": 1, "four": 4} {
		if p := meter.probed(prefix); len(p) > procs {
			t.Errorf("%s: %d blob-carrying POSTs not completed (%v bytes), want at most %d (one probe a process)", prefix, len(p), p, procs)
		} else {
			for _, n := range p {
				if n > client.MonolithicProbeMax {
					t.Errorf("%s: a %d-byte blob sent as the single-request probe, above %d", prefix, n, client.MonolithicProbeMax)
				}
			}
		}
	}
	// The same repositories, tags and digests.
	if one, four := env.ReadFile("one.lock"), env.ReadFile("four.lock"); strings.ReplaceAll(one, "/one/", "/four/") != four {
		t.Errorf("the shards' lock differs from one process's:\n%s\n---\n%s", one, four)
	}
	for _, path := range repos {
		a, b := mirrorTags(t, c, mirror.Host+"/one/"+path), mirrorTags(t, c, mirror.Host+"/four/"+path)
		if len(a) == 0 || !slices.Equal(a, b) {
			t.Errorf("%s: one process %v, four shards %v", path, a, b)
		}
	}
	env.Expect(0, []string{"verify", "--lock", "four.lock", "--deep"})

	// A shard killed at its first upload, then every shard run at once
	// (the killed one again): the mirror completes and verifies.
	meter.armed.Store(true)
	killed := startShard(t, env, "mirror", "--lock", "killed.lock", "--to", mirror.Host+"/killed", "--shard", "2/4", "-j", "4")
	meter.kill.Store(killed.cmd.Process)
	err := killed.cmd.Wait()
	meter.armed.Store(false)
	var ee *exec.ExitError
	if !meter.fired.Load() || !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("shard 2/4 was not killed at its first upload (fired %v): %v\n%s", meter.fired.Load(), err, killed.err.String())
	}
	runShards(t, env, "killed.lock", mirror.Host+"/killed", 4)
	env.Expect(0, []string{"verify", "--lock", "killed.lock", "--deep"})
	for _, path := range repos {
		a, b := mirrorTags(t, c, mirror.Host+"/one/"+path), mirrorTags(t, c, mirror.Host+"/killed/"+path)
		if !slices.Equal(a, b) {
			t.Errorf("%s after a kill: one process %v, shards %v", path, a, b)
		}
	}
}

// mirrorTags returns TAG=DIGEST for every tag of repo.
func mirrorTags(t *testing.T, c *client.Client, repo string) []string {
	t.Helper()
	ctx := context.Background()
	r := e2eRepo(t, c, repo)
	tags, err := registry.Tags(ctx, r)
	if err != nil {
		t.Fatalf("%s: %v", repo, err)
	}
	var out []string
	for _, tag := range tags {
		d, err := r.Resolve(ctx, tag)
		if err != nil {
			t.Fatalf("%s:%s: %v", repo, tag, err)
		}
		out = append(out, tag+"="+d.Digest.String())
	}
	slices.Sort(out)
	return out
}
