package relocate_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

func TestMirror(t *testing.T) {
	ctx := context.Background()
	src, mirror, c, l := pipelinetest.MirroredLock(t)
	for _, p := range l.Resolved() {
		repo, err := c.Repository(p.Mirror)
		if err != nil {
			t.Fatal(err)
		}
		d, err := repo.Resolve(ctx, p.Version)
		if err != nil || d.Digest.String() != p.Digest {
			t.Errorf("%s: mirror tag %s -> %v, %v; lock %s", p.Source, p.Version, d.Digest, err, p.Digest)
		}
		if p.Mirror != mirror.Host+"/m"+p.Source[len(src.Host):] {
			t.Errorf("%s mirrored to %s", p.Source, p.Mirror)
		}
	}

	// A second run skips everything and writes nothing.
	mirror.Reset()
	to, _ := relocate.ParseMapping(mirror.Host + "/m")
	var progress int
	rep, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to, Concurrency: 1, Progress: func(relocate.PackageResult) { progress++ }})
	if err != nil {
		t.Fatal(err)
	}
	if progress != 2 || len(rep.Packages) != 2 {
		t.Errorf("progress %d, report %+v", progress, rep)
	}
	for _, p := range rep.Packages {
		if p.Copied != 0 || p.Mounted != 0 || p.Skipped == 0 {
			t.Errorf("re-run %s: %+v", p.Source, p)
		}
	}
	for _, r := range mirror.Requests() {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			t.Errorf("re-run sent %s %s", r.Method, r.Path)
		}
	}

	// Clashing sources: nothing is contacted.
	mirror.Reset()
	clash := *l
	clash.Packages = append([]lock.Package(nil), l.Packages...)
	extra := clash.Packages[0]
	extra.Source = "other.example.com" + extra.Source[len(src.Host):]
	clash.Packages = append(clash.Packages, extra)
	if _, err := relocate.Mirror(ctx, &clash, relocate.Options{Source: c, To: to}); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("clash: %v", err)
	}
	if len(mirror.Requests()) > 0 {
		t.Errorf("clash contacted the mirror: %v", mirror.Requests())
	}

	// A source that went away: the error names the package.
	src.Stop()
	to2, _ := relocate.ParseMapping(mirror.Host + "/fresh")
	if _, err := relocate.Mirror(ctx, l, relocate.Options{Source: c, To: to2}); err == nil {
		t.Errorf("mirroring from a stopped source succeeded")
	}
}
