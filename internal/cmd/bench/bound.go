package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// boundCommand builds W1's bound, the benchbound command, into dir and
// returns the command line running it; nil, after a warning, when it
// cannot be built (the report then has no bound). benchbound is a small
// program of its own, not a mode of this one, so that the bound's time,
// which includes starting the process, is not that of starting this
// program's far larger one.
func boundCommand(dir string) []string {
	bin := filepath.Join(dir, "benchbound")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/ferryhq/ferry/internal/cmd/benchbound")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: building the bound (go build ./internal/cmd/benchbound): %v: %s\n", err, strings.TrimSpace(string(out)))
		return nil
	}
	return []string{bin}
}
