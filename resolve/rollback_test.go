package resolve_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/resolve"
)

// TestRollbackRefused: a Porter bundle found under a semver tag other than
// the version its bundle.json declares (an older release moved under a
// newer tag) is refused with exitcode.Mismatch, naming the reference, the
// tag and the declared version; honest tags, "_" for "+", tags that are
// not versions, digests and packages that declare no version pass.
func TestRollbackRefused(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t)
	c := registrytest.Client(t)
	h := reg.Host + "/rb/"
	push := func(name string, b fixture.Bundle) {
		t.Helper()
		repo, err := c.Repository(h + name)
		if err != nil {
			t.Fatal(err)
		}
		b.Name = name
		if _, err := fixture.PushBundle(ctx, repo, h+name, b); err != nil {
			t.Fatal(err)
		}
	}
	// moved: v1.0.0 is also tagged v1.1.0, the newest tag.
	push("moved", fixture.Bundle{Version: "1.0.0", Tags: []string{"v1.0.0", "v1.1.0"}})
	// honest: each version under its own tag.
	push("honest", fixture.Bundle{Version: "1.0.0", Tags: []string{"v1.0.0"}})
	push("honest", fixture.Bundle{Version: "1.1.0", Tags: []string{"v1.1.0", "latest"}})
	// build metadata: "+" written "_", and a rebuild moved under it.
	push("build", fixture.Bundle{Version: "1.2.1+build.5", Tags: []string{"1.2.1_build.5"}})
	push("build", fixture.Bundle{Version: "1.2.1+build.4", Tags: []string{"1.2.1_build.4", "1.2.1_build.6"}})
	// a dependency moved: app needs db ^1.0, db's v1.1.0 holds 1.0.0.
	push("db", fixture.Bundle{Version: "1.0.0", Tags: []string{"v1.0.0", "v1.1.0"}})
	push("app", fixture.Bundle{Version: "1.0.0", Tags: []string{"v1.0.0"}, Deps: []fixture.Dep{{Name: "db", Bundle: h + "db:v1.0.0", Ranges: []string{"^1.0"}}}})
	// an opaque artifact declares no version: any tag is its version.
	imgRepo, err := c.Repository(h + "image")
	if err != nil {
		t.Fatal(err)
	}
	img, err := fixture.PushImage(ctx, imgRepo, "rollback-image")
	if err != nil {
		t.Fatal(err)
	}
	if err := imgRepo.Tag(ctx, img, "v9.9.9"); err != nil {
		t.Fatal(err)
	}
	movedRepo, err := c.Repository(h + "moved")
	if err != nil {
		t.Fatal(err)
	}
	movedDesc, err := movedRepo.Resolve(ctx, "v1.1.0")
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name       string
		root       resolve.Root
		strategy   porter.VersionStrategy
		wantTag    string   // the root's chosen tag, when it resolves
		errs       []string // what the error names, when it fails
		notInError []string
	}{
		{
			name:    "a range picks the newest tag, whose bundle declares it",
			root:    resolve.Root{Ref: h + "honest", Constraint: "^1.0"},
			wantTag: "v1.1.0",
		},
		{
			name: "a range picks v1.1.0, which holds 1.0.0",
			root: resolve.Root{Ref: h + "moved", Constraint: "^1.0"},
			errs: []string{h + "moved:v1.1.0", "tag chosen by a version range", "names version 1.1.0", "declares version 1.0.0"},
		},
		{
			name:    "a range that excludes the moved tag",
			root:    resolve.Root{Ref: h + "moved", Constraint: "~1.0.0"},
			wantTag: "v1.0.0",
		},
		{
			name:       "an explicit tag that moved",
			root:       resolve.Root{Ref: h + "moved:v1.1.0"},
			errs:       []string{h + "moved:v1.1.0", "declares version 1.0.0"},
			notInError: []string{"version range"},
		},
		{
			name:    "the honest tag of the moved bundle",
			root:    resolve.Root{Ref: h + "moved:v1.0.0"},
			wantTag: "v1.0.0",
		},
		{
			name:    "a digest pin is what it is",
			root:    resolve.Root{Ref: h + "moved@" + movedDesc.Digest.String()},
			wantTag: "v1.0.0",
		},
		{
			name:    "a tag that is not a version",
			root:    resolve.Root{Ref: h + "honest:latest"},
			wantTag: "latest",
		},
		{
			name:    `"_" stands for "+"`,
			root:    resolve.Root{Ref: h + "build:1.2.1_build.5"},
			wantTag: "1.2.1_build.5",
		},
		{
			name: "build metadata differs",
			root: resolve.Root{Ref: h + "build:1.2.1_build.6"},
			errs: []string{h + "build:1.2.1_build.6", "declares version 1.2.1+build.4"},
		},
		{
			name:     "a dependency's range picks a moved tag",
			root:     resolve.Root{Ref: h + "app:v1.0.0"},
			strategy: porter.StrategyHighest,
			errs:     []string{h + "app:v1.0.0 -> " + h + "db", h + "db:v1.1.0", "declares version 1.0.0"},
		},
		{
			name:    "a dependency's exact tag is honest",
			root:    resolve.Root{Ref: h + "app:v1.0.0"},
			wantTag: "v1.0.0",
		},
		{
			name:    "an artifact declares no version",
			root:    resolve.Root{Ref: h + "image", Constraint: "^9"},
			wantTag: "v9.9.9",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := resolve.Options{Registry: c, Formats: []format.Format{porter.Reader{Strategy: tt.strategy}}}
			g, err := resolve.Resolve(ctx, []resolve.Root{tt.root}, opts)
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("resolved, want a version mismatch")
				}
				var ve *resolve.VersionMismatchError
				if !errors.As(err, &ve) {
					t.Errorf("error is not a VersionMismatchError: %v", err)
				}
				if code := exitcode.Of(err); code != exitcode.Mismatch {
					t.Errorf("exit code %d, want %d: %v", code, exitcode.Mismatch, err)
				}
				for _, w := range tt.errs {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error lacks %q:\n%v", w, err)
					}
				}
				for _, w := range tt.notInError {
					if strings.Contains(err.Error(), w) {
						t.Errorf("error has %q:\n%v", w, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Roots) != 1 {
				t.Fatalf("roots = %v", g.Roots)
			}
			if got := g.Packages[g.Roots[0]].Version; got != tt.wantTag {
				t.Errorf("root version = %q, want %q", got, tt.wantTag)
			}
		})
	}
}
