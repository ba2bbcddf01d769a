package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
)

// TestE2ECPUProfile: FERRY_CPUPROFILE=FILE writes a CPU profile of the
// command (gzip-compressed protobuf, as go tool pprof reads it), and the
// command's output is unchanged; a path that cannot be created is a
// warning on stderr, not a failure.
func TestE2ECPUProfile(t *testing.T) {
	tests := []struct {
		name    string
		path    func(env *clitest.Env) string
		written bool
	}{
		{"a profile is written", func(env *clitest.Env) string { return env.Path("cpu.prof") }, true},
		{"an unwritable path only warns", func(env *clitest.Env) string { return env.Path("missing/dir/cpu.prof") }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := clitest.New(t)
			path := tt.path(env)
			env.Vars = append(env.Vars, "FERRY_CPUPROFILE="+path)
			r := env.MustRun("version")
			if r.Stdout == "" {
				t.Error("version printed nothing")
			}
			b, err := os.ReadFile(path)
			if !tt.written {
				if err == nil {
					t.Errorf("a profile was written at %s", path)
				}
				if !bytes.Contains([]byte(r.Stderr), []byte("FERRY_CPUPROFILE")) {
					t.Errorf("no warning naming FERRY_CPUPROFILE: %q", r.Stderr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
				t.Errorf("the profile is not gzip data (%d bytes)", len(b))
			}
		})
	}
}
