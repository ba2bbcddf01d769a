package sizecap_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/sizecap"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.yaml")
	if err := os.WriteFile(small, []byte("kind: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A sparse file just over the cap: its size, not its bytes, is what
	// ReadFile must look at.
	big := filepath.Join(dir, "big.yaml")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	const max = 1 << 20
	if err := f.Truncate(max + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	tests := []struct {
		name    string
		path    string
		max     int64
		wantErr string
	}{
		{"under the cap", small, max, ""},
		{"exactly the cap", small, 8, ""},
		{"over the cap", small, 7, "small.yaml is 8 bytes (8 bytes), larger than the 7 bytes"},
		{"sparse file over the cap", big, max, "big.yaml is 1.0 MiB (1048577 bytes), larger than the 1.0 MiB"},
		{"missing", filepath.Join(dir, "none"), max, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := sizecap.ReadFile(tt.path, tt.max)
			if tt.wantErr == "" {
				if err != nil || string(data) != "kind: x\n" {
					t.Fatalf("ReadFile = %q, %v", data, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "larger") != sizecap.IsTooLarge(err) {
				t.Errorf("IsTooLarge(%v) = %v", err, sizecap.IsTooLarge(err))
			}
		})
	}
	if _, err := sizecap.ReadFile(filepath.Join(dir, "none"), 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file is not os.ErrNotExist: %v", err)
	}
}
