package main

import (
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/quirkproxy"
	"github.com/ferryhq/ferry/internal/registrytest"
)

// TestE2EQuirkyDestinations mirrors a closure into registries that answer
// as Quay or Docker Hub (NAMESPACE/NAME only) and as ECR with immutable
// tags, through the ferry binary (issue 32 point 3):
//   - a nested layout is refused at the first write, exit 1, naming the
//     repository and the flatten option;
//   - --flatten mirrors it as NAMESPACE/a-b-c, the lock records each
//     package's flattened repository, and verify --deep follows the lock;
//   - into repositories that must exist, none created, exit 1 with one
//     error naming every repository;
//   - into immutable tags, mirroring the same lock again succeeds.
func TestE2EQuirkyDestinations(t *testing.T) {
	t.Parallel()
	w := newE2EMirrored(t)
	env := w.env

	quay := registrytest.New(t, registrytest.WithWrap(quirkproxy.New(quirkproxy.Options{MaxDepth: 2}).Wrap))
	env.Expect(exitcode.Failure, []string{"mirror", "--lock", "ferry.lock", "--to", quay.Host + "/ns"}, "NAME_INVALID", "two path components", "flatten")
	env.Expect(exitcode.Usage, []string{"mirror", "--lock", "ferry.lock", "--to", quay.Host + "/ns/deeper", "--flatten"}, "one path component")
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", quay.Host+"/ns", "--flatten")
	l := e2eReadLock(t, env, "ferry.lock")
	for _, p := range l.Resolved() {
		if p.Mirror == "" {
			continue
		}
		path := strings.TrimPrefix(p.Mirror, quay.Host+"/")
		if path == p.Mirror || strings.Count(path, "/") != 1 {
			t.Errorf("%s recorded at %s: not %s/ns/NAME", p.Source, p.Mirror, quay.Host)
		}
	}
	env.MustRun("verify", "--lock", "ferry.lock", "--deep")

	// Repositories that must exist, none created: exit 1 with one error
	// naming every repository the run writes to.
	must := registrytest.New(t, registrytest.WithWrap(quirkproxy.New(quirkproxy.Options{MustCreate: true}).Wrap))
	r := env.Expect(exitcode.Failure, []string{"mirror", "--lock", "ferry.lock", "--to", must.Host + "/m"}, "the mirror refuses pushes into", "aws ecr create-repository")
	for _, p := range l.Resolved() {
		_, path, _ := strings.Cut(p.Source, "/")
		if want := must.Host + "/m/" + path + " does not exist"; !strings.Contains(r.Stderr, want) {
			t.Errorf("mirror into repositories that must exist: error lacks %q:\n%s", want, r.Stderr)
		}
	}

	ecr := registrytest.New(t, registrytest.WithWrap(quirkproxy.New(quirkproxy.Options{Immutable: quirkproxy.ECR}).Wrap))
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", ecr.Host+"/m")
	env.MustRun("mirror", "--lock", "ferry.lock", "--to", ecr.Host+"/m")
}
