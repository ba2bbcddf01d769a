package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2ELockArtifactShards runs the README's Kubernetes Job as its pods
// run it: the lock is pushed to the mirror as an OCI artifact (ferry lock
// --push-lock), each shard reads it from there (--lock oci://…) and takes
// its index from JOB_COMPLETION_INDEX (--shard auto/N), with no shell and
// no ConfigMap; verify --deep then reads the same artifact. The lock
// artifact package's own test covers a 10,000-package lock
// (lock.TestArtifactRoundTrip).
func TestE2ELockArtifactShards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := registrytest.New(t)
	mirror := registrytest.New(t)
	c := e2eClient(t)
	var roots []string
	for i := range 4 {
		name := fmt.Sprintf("%s/job/app%d", src.Host, i)
		repo := e2eRepo(t, c, name)
		d, err := fixture.PushImage(ctx, repo, fmt.Sprintf("job-%d", i), 16<<10)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, d, "1.0.0"); err != nil {
			t.Fatal(err)
		}
		roots = append(roots, name+":1.0.0")
	}
	env := e2eEnv(t)
	artifact := "oci://" + mirror.Host + "/mirror/ferry-lock:v1"
	env.MustRun(append([]string{"lock", "--push-lock", artifact}, roots...)...)

	// The pods: another working directory, no lock file in it.
	pods := e2eEnv(t)
	const n = 2
	runs := make([]*shardRun, n)
	for i := range n {
		pod := *pods
		pod.Vars = append(append([]string(nil), pods.Vars...), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		runs[i] = startShard(t, &pod, "mirror", "--lock", artifact, "--to", mirror.Host+"/mirror", "--shard", fmt.Sprintf("auto/%d", n), "-j", "4")
	}
	for i, r := range runs {
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("pod %d: %v\n%s", i, err, r.err.String())
		}
		if !strings.Contains(r.err.String(), "read into") {
			t.Errorf("pod %d does not say where it read the lock:\n%s", i, r.err.String())
		}
	}
	if got := pods.MustRun("verify", "--lock", artifact, "--mirror", mirror.Host+"/mirror", "--deep"); got.Stderr == "" && got.Stdout == "" {
		t.Log("verify printed nothing")
	}
	// The lock writer is refused, naming --push-lock.
	env.Expect(2, []string{"lock", "--lock", artifact}, "--push-lock")
	// A reference that is no lock artifact is bad input.
	pods.Expect(2, []string{"verify", "--lock", "oci://" + src.Host + "/job/app0:1.0.0", "--mirror", mirror.Host + "/mirror"}, "not a ferry lock")
}
