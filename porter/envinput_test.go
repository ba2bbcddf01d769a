package porter

import (
	"testing"

	"github.com/ferryhq/ferry/mirrorset"
)

// TestStrategyEnvIsAnInput: $FERRY_VERSION_STRATEGY changes what
// resolves when neither ferry.yaml nor a flag sets porter.versionStrategy,
// so it changes the lock's inputs digest then, and only then.
func TestStrategyEnvIsAnInput(t *testing.T) {
	plain := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind, Packages: []mirrorset.Package{{Ref: "ghcr.io/acme/app:v1.0.0"}}}
	set := &mirrorset.MirrorSet{APIVersion: mirrorset.APIVersion, Kind: mirrorset.Kind, Packages: plain.Packages}
	if err := set.SetSection(KeyPorter, map[string]string{"versionStrategy": "max-patch"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		m       *mirrorset.MirrorSet
		env     string
		changes bool
	}{
		{"env alone", plain, "highest", true},
		{"env under a ferry.yaml strategy", set, "highest", false},
		{"empty env", plain, " ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(StrategyEnv, "")
			before := tc.m.Digest()
			t.Setenv(StrategyEnv, tc.env)
			if after := tc.m.Digest(); (after != before) != tc.changes {
				t.Errorf("digest %s -> %s, want a change: %v", before, after, tc.changes)
			}
		})
	}
}
