package mirrorset_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/mirrorset"
)

const porterYAML = `name: app
version: 0.1.0
mixins: [exec]
dependencies:
  requires:
    - name: db
      bundle:
        reference: ghcr.io/acme/db:v1.0.0
`

// TestConfigBesideLocalRoot: a porter.yaml given as ROOT takes every
// setting but the roots from the ferry.yaml beside it (or --config), a
// key no format owns is an error there, and a ferry.yaml's
// `packages: [{path}]` reads a porter.yaml as a ROOT is read.
func TestConfigBesideLocalRoot(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ferry    string // ferry.yaml beside porter.yaml; "" none
		config   bool   // pass it as --config instead, from elsewhere
		load     string // what to load: "porter.yaml" or "ferry.yaml"
		err      string
		wantRefs []string
		wantRepl int
		mirrors  int
	}{
		{name: "none", load: "porter.yaml", wantRefs: []string{"ghcr.io/acme/db:v1.0.0"}},
		{name: "unknown key", ferry: "bogusKey: 1\n", load: "porter.yaml", err: "unknown key bogusKey"},
		{name: "settings apply, roots do not", load: "porter.yaml",
			ferry:    "packages: [{ref: ghcr.io/acme/other:v1}]\nmixins: [{name: helm3}]\nreplace: [{from: ghcr.io/acme/db, to: ghcr.io/acme/db2}]\nmirrors: {ghcr.io: registry.internal/ghcr}\n",
			wantRefs: []string{"ghcr.io/acme/db:v1.0.0"}, wantRepl: 1, mirrors: 1},
		{name: "--config", config: true, load: "porter.yaml", ferry: "mirrors: {ghcr.io: [registry.internal/ghcr, ghcr.io]}\n",
			wantRefs: []string{"ghcr.io/acme/db:v1.0.0"}, mirrors: 1},
		{name: "bad mirror", load: "porter.yaml", ferry: "mirrors: {library: registry.internal/x}\n", err: "no registry host"},
		{name: "path entry", load: "ferry.yaml", ferry: "packages: [{path: PORTER}, {ref: ghcr.io/acme/web:v2}]\n",
			wantRefs: []string{"ghcr.io/acme/db:v1.0.0", "ghcr.io/acme/web:v2"}},
		{name: "path and ref", load: "ferry.yaml", ferry: "packages: [{path: PORTER, ref: ghcr.io/x/y:v1}]\n", err: "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			porter := filepath.Join(dir, "porter.yaml")
			if err := os.WriteFile(porter, []byte(porterYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			settings := &mirrorset.MirrorSet{}
			if tc.ferry != "" {
				where := filepath.Join(dir, "ferry.yaml")
				if tc.config {
					where = filepath.Join(t.TempDir(), "settings.yaml")
					settings.Config = where
				}
				body := "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + strings.ReplaceAll(tc.ferry, "PORTER", porter)
				if err := os.WriteFile(where, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			m, err := mirrorset.LoadFile(filepath.Join(dir, tc.load), formats.All(), settings)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || exitcode.Of(err) != exitcode.Usage {
					t.Fatalf("err %v (exit %d), want %q, exit 2", err, exitcode.Of(err), tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var refs []string
			for _, p := range m.Packages {
				refs = append(refs, p.Ref)
			}
			if !slices.Equal(refs, tc.wantRefs) {
				t.Errorf("roots %q, want %q", refs, tc.wantRefs)
			}
			if len(m.Replace) != tc.wantRepl || len(m.Mirrors) != tc.mirrors {
				t.Errorf("replace %v, mirrors %v", m.Replace, m.Mirrors)
			}
			var mixins []struct{ Name string }
			if _, err := m.Section("mixins", &mixins); err != nil {
				t.Fatal(err)
			}
			if len(mixins) != 1 || mixins[0].Name != "exec" {
				t.Errorf("mixins %+v, want porter.yaml's exec alone", mixins)
			}
		})
	}
}
