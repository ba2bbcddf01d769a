package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/internal/registrytest"
)

func TestRun(t *testing.T) {
	reg := registrytest.New(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	err = run(context.Background(), reg.Host, filepath.Join(t.TempDir(), "config.json"))
	os.Stdout = stdout
	w.Close()
	out, _ := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	// 10 Porter scenarios, then 6 Crossplane ones.
	if len(lines) != 16 {
		t.Fatalf("%d lines, want 16:\n%s", len(lines), out)
	}
	for i, l := range lines {
		prefix := reg.Host + "/fixtures/"
		if i >= 10 {
			prefix = reg.Host + "/xp/"
		}
		name, ref, ok := strings.Cut(l, " ")
		if !ok || name == "" || !strings.HasPrefix(ref, prefix) {
			t.Errorf("line %q", l)
		}
	}
}
