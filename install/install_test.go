package install_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/relocate"
)

func TestInstallFromMirrorOnly(t *testing.T) {
	ctx := context.Background()
	src, mirror, c, l := pipelinetest.MirroredLock(t)
	h := src.Host
	src.Stop()
	dest := filepath.Join(t.TempDir(), "out")
	plan, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 2 || plan.Steps[0].Source != h+"/p/db" || plan.Steps[1].Source != h+"/p/app" {
		t.Fatalf("plan = %+v", plan.Steps)
	}
	if plan.Steps[0].Mirror != mirror.Host+"/m/p/db@"+l.Package(h+"/p/db").Digest {
		t.Errorf("db installed from %s", plan.Steps[0].Mirror)
	}
	for _, f := range []string{"oci-layout", "index.json", install.PlanFile, install.RelocationFile} {
		if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dest, "ingest")); !os.IsNotExist(err) {
		t.Errorf("ingest/ left in the layout")
	}
	b, err := os.ReadFile(filepath.Join(dest, install.RelocationFile))
	if err != nil {
		t.Fatal(err)
	}
	var reloc map[string]string
	if err := json.Unmarshal(b, &reloc); err != nil {
		t.Fatal(err)
	}
	app, db := l.Package(h+"/p/app"), l.Package(h+"/p/db")
	want := map[string]string{
		h + "/p/app:v1.0.0":        app.Mirror + "@" + app.Digest,
		h + "/p/app@" + app.Digest: app.Mirror + "@" + app.Digest,
		h + "/p/db:v1.0.0":         db.Mirror + "@" + db.Digest, // app's dependency as declared
		h + "/p/db@" + db.Digest:   db.Mirror + "@" + db.Digest,
	}
	for _, p := range []*lock.Package{app, db} {
		for _, im := range p.Images {
			want[im.Ref] = p.Mirror + "@" + im.Digest
		}
	}
	for k, v := range want {
		if reloc[k] != v {
			t.Errorf("relocation[%s] = %q, want %q", k, reloc[k], v)
		}
	}
	if len(reloc) != len(want) {
		t.Errorf("relocation has %d entries, want %d: %v", len(reloc), len(want), reloc)
	}

	// A second install replaces the first; a directory holding something
	// else is refused.
	if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest}); err != nil {
		t.Fatalf("re-install: %v", err)
	}
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "keep.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: other}); exitcode.Of(err) != exitcode.Usage {
		t.Errorf("install into a foreign directory: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "keep.txt")); string(b) != "mine" {
		t.Errorf("foreign directory changed")
	}

	// A tampered blob: install fails with exit 3 and leaves dest unchanged.
	before, _ := os.ReadFile(filepath.Join(dest, install.PlanFile))
	var tampered int
	_ = filepath.WalkDir(filepath.Join(mirror.Root, "docker", "registry", "v2", "blobs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "data" || tampered > 0 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil || json.Valid(b) { // a layer, not a manifest or config
			return err
		}
		b[0] ^= 0xff
		tampered++
		return os.WriteFile(p, b, 0o644)
	})
	if tampered == 0 {
		t.Fatal("found no layer to tamper with")
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	_, err = install.Install(ctx, l, install.Options{Registry: c, Dest: fresh})
	if exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), "installing ") {
		t.Errorf("install from a tampered mirror: %v (exit %d), want exit 3", err, exitcode.Of(err))
	}
	if _, statErr := os.Stat(fresh); !os.IsNotExist(statErr) {
		t.Errorf("%s exists after a failed install", fresh)
	}
	if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest}); err == nil {
		t.Errorf("re-install from a tampered mirror succeeded")
	}
	if after, _ := os.ReadFile(filepath.Join(dest, install.PlanFile)); string(after) != string(before) {
		t.Errorf("a failed install changed the earlier one")
	}
	// The failed install keeps its staging, marked, for the next run;
	// relocate.RemoveStaging (ferry gc) clears it.
	staging, err := relocate.FindStaging([]string{dest})
	if err != nil || len(staging) != 1 {
		t.Fatalf("staging beside %s: %v, %v", dest, staging, err)
	}
	if _, err := os.Stat(filepath.Join(staging[0], relocate.StageMarker)); err != nil {
		t.Errorf("staging without its marker: %v", err)
	}
	if _, err := relocate.RemoveStaging(staging[0]); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dest))
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestInstallNeedsAMirror(t *testing.T) {
	l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Packages: []lock.Package{{Source: "r.io/a", Version: "v1", Digest: "sha256:" + strings.Repeat("a", 64)}}}
	dest := filepath.Join(t.TempDir(), "out")
	_, err := install.Install(context.Background(), l, install.Options{Dest: dest})
	if exitcode.Of(err) != exitcode.Usage || !strings.Contains(err.Error(), "r.io/a") {
		t.Errorf("err = %v", err)
	}
	if _, statErr := os.Stat(dest); !os.IsNotExist(statErr) {
		t.Errorf("dest created")
	}
}

// TestInstallThroughSymlink: a --dest that is a symbolic link is followed:
// the directory it points to receives the install, the link stays.
func TestInstallThroughSymlink(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	base := t.TempDir()
	for _, tt := range []struct {
		name   string
		target string // made before the install when create is set
		create bool
	}{
		{"to an existing empty directory", "real", true},
		{"dangling, relative", "later", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			link := filepath.Join(base, tt.name+"-link")
			target := filepath.Join(base, tt.target)
			if tt.create {
				if err := os.Mkdir(target, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(tt.target, link); err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ { // a second install replaces the first
				if _, err := install.Install(ctx, l, install.Options{Registry: c, Dest: link}); err != nil {
					t.Fatal(err)
				}
				fi, err := os.Lstat(link)
				if err != nil || fi.Mode()&os.ModeSymlink == 0 {
					t.Fatalf("run %d: the link was replaced: %v", i, err)
				}
				if _, err := os.Stat(filepath.Join(target, install.PlanFile)); err != nil {
					t.Errorf("run %d: install not in the link's target: %v", i, err)
				}
			}
			if s, _ := relocate.FindStaging([]string{link}); len(s) != 0 {
				t.Errorf("staging left: %v", s)
			}
		})
	}
}
