package main

import "testing"

// TestMetadataJobs: --metadata-jobs, resolution's own bound on reads in
// flight, is checked before any request, and -j does not limit it.
func TestMetadataJobs(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	h := src.Host
	for _, tt := range []strictCase{
		{name: "zero", args: []string{"resolve", cat.Diamond, "--metadata-jobs", "0"},
			code: 2, want: []string{"--metadata-jobs must be at least 1"}},
		{name: "negative", args: []string{"lock", cat.Diamond, "--metadata-jobs=-3"},
			code: 2, want: []string{"--metadata-jobs must be at least 1"}},
		{name: "one, with -j 1", args: []string{"resolve", cat.Diamond, "--metadata-jobs", "1", "-j", "1"}, network: true,
			code: 0, want: []string{h + "/fixtures/diamond/db"}},
		{name: "in --help", args: []string{"resolve", "--help"},
			code: 0, want: []string{"--metadata-jobs int", "maximum registry reads in flight while resolving"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runStrictCase(t, e2eEnv(t), src, tt)
		})
	}
}
