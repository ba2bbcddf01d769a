package filesystem

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestWriterSyncsOnlyWhatItChanged pins ferry's patch to the writer (see
// Writer and UPSTREAM.md, patch 7): Close syncs the file only when the
// writer changed it, and every case keeps upstream's content.
func TestWriterSyncsOnlyWhatItChanged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	d := &driver{rootDirectory: root}
	if err := os.WriteFile(filepath.Join(root, "full"), []byte("abc"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kept"), []byte("abc"), 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		append     bool
		write      string
		wantDirty  bool
		want       string
	}{
		{"new file, nothing written (an upload's POST)", "/new", false, "", false, ""},
		{"new file written", "/written", false, "x", true, "x"},
		{"a file that held bytes, truncated", "/full", false, "", true, ""},
		{"appended to", "/kept", true, "de", true, "abcde"},
		{"opened to append, nothing written", "/kept", true, "", false, "abcde"},
	} {
		w, err := d.Writer(ctx, tt.path, tt.append)
		if err != nil {
			t.Fatal(err)
		}
		fw := w.(*fileWriter)
		if tt.write != "" {
			if _, err := w.Write([]byte(tt.write)); err != nil {
				t.Fatal(err)
			}
		}
		if fw.dirty != tt.wantDirty {
			t.Errorf("%s: dirty = %v, want %v", tt.name, fw.dirty, tt.wantDirty)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("%s: Close: %v", tt.name, err)
		}
		got, err := os.ReadFile(filepath.Join(root, tt.path))
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: file holds %q (%v), want %q", tt.name, got, err, tt.want)
		}
	}
}
