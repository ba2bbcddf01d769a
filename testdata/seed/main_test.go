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
	if len(lines) != 10 {
		t.Fatalf("%d lines, want 10:\n%s", len(lines), out)
	}
	for _, l := range lines {
		name, ref, ok := strings.Cut(l, " ")
		if !ok || name == "" || !strings.HasPrefix(ref, reg.Host+"/fixtures/") {
			t.Errorf("line %q", l)
		}
	}
}
