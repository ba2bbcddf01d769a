package main

import (
	"os"

	"go.yaml.in/yaml/v3"

	"strings"

	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/redact"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/trust"
	"github.com/ferryhq/ferry/verify"
)

// The -o json documents of the reporting commands. Each is described by a
// JSON Schema in cmd/ferry/schemas (one per command); the same thing has
// the same name in every one of them: `source` (the source repository,
// or a mixin's feed), `version`, `digest`, and `mirror` (the repository
// in the mirror, without tag or digest).

// mirrorJSON is `ferry mirror -o json`.
type mirrorJSON struct {
	// To is the mirror HOST[/PREFIX]; empty for --to-archive.
	To       string                   `json:"to"`
	Packages []relocate.PackageResult `json:"packages"`
	// Mixins are the lock's Porter mixins, carried with the packages.
	Mixins []mixinJSON `json:"mixins"`
	// Ignored names what an archive held beside the lock's content.
	Ignored []string `json:"ignored,omitempty"`
	// Shard counts what a sharded run (--shard I/N) did.
	Shard *relocate.ShardReport `json:"shard,omitempty"`
	// Untrusted are the packages no trust rule matches, carried unchecked
	// (trust.default: warn).
	Untrusted []trust.Unmatched `json:"untrusted,omitempty"`
}

// mixinJSON is one locked Porter mixin version in a report.
type mixinJSON struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Source is the feed the version was resolved from.
	Source string `json:"source"`
	// Mirror and Digest locate the mixin's OCI artifact in the mirror,
	// once mirrored.
	Mirror string `json:"mirror,omitempty"`
	Digest string `json:"digest,omitempty"`
	// Binaries are the binaries' file names.
	Binaries []string `json:"binaries"`
}

// splitMirror splits "REPO@DIGEST" into the repository and the digest.
func splitMirror(ref string) (repo, digest string) {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// lockMixins lists the Porter mixins l locks, for a report.
func lockMixins(l *lock.Lock) ([]mixinJSON, error) {
	ms, err := mixin.FromLock(l)
	if err != nil {
		return nil, err
	}
	out := []mixinJSON{}
	for _, m := range ms {
		repo, d := splitMirror(m.Mirror)
		out = append(out, mixinJSON{Name: m.Name, Version: m.Version, Source: m.Feed, Mirror: repo, Digest: d, Binaries: m.Keys()})
	}
	return out, nil
}

// newMirrorJSON is the report of a mirror run that wrote l.
func newMirrorJSON(l *lock.Lock, rep *relocate.Report, untrusted []trust.Unmatched) (*mirrorJSON, error) {
	mixins, err := lockMixins(l)
	if err != nil {
		return nil, err
	}
	pkgs := rep.Packages
	if pkgs == nil {
		pkgs = []relocate.PackageResult{}
	}
	return &mirrorJSON{To: rep.To, Packages: pkgs, Mixins: mixins, Ignored: rep.Ignored, Shard: rep.Shard, Untrusted: untrusted}, nil
}

// verifyJSON is `ferry verify -o json`: `packages` would be a list in
// every other report, so the counts are under `counts`.
type verifyJSON struct {
	// OK is true when no problem was found (exit code 0).
	OK     bool         `json:"ok"`
	Deep   bool         `json:"deep"`
	Counts verifyCounts `json:"counts"`
	// Problems lists every disagreement found (exit code 3 if any).
	Problems []verify.Problem `json:"problems"`
	// Untrusted are the packages no trust rule matches, checked for
	// nothing but their digests (trust.default: warn).
	Untrusted []trust.Unmatched `json:"untrusted,omitempty"`
}

// verifyCounts counts what verify checked.
type verifyCounts struct {
	Packages   int `json:"packages"`
	Manifests  int `json:"manifests"`
	Blobs      int `json:"blobs"`
	Signatures int `json:"signatures"`
	// UniqueBlobs, HashedBlobs and HashedBytes are --deep's: the
	// distinct blob digests, those downloaded and re-hashed (each once
	// per run) and the bytes read for them.
	UniqueBlobs int   `json:"uniqueBlobs,omitempty"`
	HashedBlobs int   `json:"hashedBlobs,omitempty"`
	HashedBytes int64 `json:"hashedBytes,omitempty"`
}

func newVerifyJSON(rep *verify.Report) verifyJSON {
	problems := rep.Problems
	if problems == nil {
		problems = []verify.Problem{}
	}
	return verifyJSON{OK: rep.OK(), Deep: rep.Deep, Problems: problems,
		Counts: verifyCounts{Packages: rep.Packages, Manifests: rep.Manifests, Blobs: rep.Blobs, Signatures: rep.Signatures,
			UniqueBlobs: rep.UniqueBlobs, HashedBlobs: rep.HashedBlobs, HashedBytes: rep.HashedBytes},
		Untrusted: rep.Untrusted}
}

// installJSON is `ferry install -o json`.
type installJSON struct {
	// Dest is the install directory; empty with --porter-home alone.
	Dest   string `json:"dest,omitempty"`
	Inputs string `json:"inputs,omitempty"`
	// Packages are the packages installed, in install order (plan.json's
	// steps).
	Packages []installStep `json:"packages"`
	// PorterHome is --porter-home, when given.
	PorterHome string `json:"porterHome,omitempty"`
	// Mixins are the mixin versions installed into PorterHome.
	Mixins []mixinJSON `json:"mixins"`
}

// installStep is one installed package.
type installStep struct {
	Order        int      `json:"order"`
	Source       string   `json:"source"`
	Kind         string   `json:"kind"`
	Version      string   `json:"version,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	Digest       string   `json:"digest"`
	Mirror       string   `json:"mirror"`
	Dependencies []string `json:"dependencies,omitempty"`
}

// newInstallJSON is the report of an install of l: plan is what went
// into dest, ph what went into porterHome (nil when not asked).
func newInstallJSON(l *lock.Lock, dest string, plan *install.Plan, porterHome string, ph *mixin.PorterHome) (*installJSON, error) {
	out := &installJSON{Dest: dest, Packages: []installStep{}, PorterHome: porterHome, Mixins: []mixinJSON{}}
	if plan != nil {
		out.Inputs = plan.Inputs
		for _, st := range plan.Steps {
			repo, _ := splitMirror(st.Mirror)
			out.Packages = append(out.Packages, installStep{Order: st.Order, Source: st.Source, Kind: st.Kind, Version: st.Version, Tags: st.Tags, Digest: st.Digest, Mirror: repo, Dependencies: st.Dependencies})
		}
	}
	if ph != nil {
		all, err := lockMixins(l)
		if err != nil {
			return nil, err
		}
		out.Mixins = all
	}
	return out, nil
}

// writeLockJSON prints l as JSON, exactly as ferry.lock holds it (the
// sections formats own, `mixins`, included), so that lock/schema.json
// describes it, with, when there are any, the packages no trust rule
// matches (`untrusted`, which the file never holds).
func writeLockJSON(l *lock.Lock, untrusted []trust.Unmatched, warnings []string) error {
	data, err := l.Marshal()
	if err != nil {
		return err
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return err
	}
	if len(untrusted) > 0 {
		v["untrusted"] = untrusted
	}
	if len(warnings) > 0 {
		ws := make([]string, len(warnings))
		for i, w := range warnings {
			ws[i] = redact.String(w)
		}
		v["warnings"] = ws
	}
	return writeJSON(os.Stdout, v)
}
