package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagListFile is the list of ferry's long flags that internal/archtest
// keeps out of library messages (only cmd names flags).
var flagListFile = filepath.Join("..", "..", "internal", "archtest", "testdata", "flags.txt")

// longFlags returns every long flag of the command tree, sorted, once.
func longFlags(root *cobra.Command) []string {
	var out []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		add := func(f *pflag.Flag) { out = append(out, f.Name) }
		c.Flags().VisitAll(add)
		c.PersistentFlags().VisitAll(add)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	slices.Sort(out)
	return slices.Compact(out)
}

// TestFlagListCurrent keeps internal/archtest's list of flags equal to the
// flags the command tree registers (FERRY_UPDATE_FLAGS=1 rewrites it).
func TestFlagListCurrent(t *testing.T) {
	want := strings.Join(longFlags(newRootCmd()), "\n") + "\n"
	if os.Getenv("FERRY_UPDATE_FLAGS") != "" {
		if err := os.WriteFile(flagListFile, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(flagListFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s is not the flags ferry registers; run FERRY_UPDATE_FLAGS=1 go test ./cmd/ferry -run TestFlagListCurrent\ngot:\n%s\nwant:\n%s", flagListFile, got, want)
	}
}
