package registrytest

import (
	"os"
	"syscall"
	"testing"
)

// minMemoryFree is the free space /dev/shm must have for registries'
// storage to go there.
const minMemoryFree = 2 << 30

// storageDir returns an empty directory for a registry's storage, removed
// when the test ends: in /dev/shm when it is a memory file system with
// room to spare, else in t.TempDir. The registry is the same filesystem
// driver either way; in memory, its fsync per upload and its many small
// files cost nothing, and those were most of the end-to-end tests' time.
func storageDir(t testing.TB) string {
	t.Helper()
	var st syscall.Statfs_t
	if syscall.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic && int64(st.Bavail)*int64(st.Bsize) >= minMemoryFree {
		if dir, err := os.MkdirTemp("/dev/shm", "ferry-registry-"); err == nil {
			t.Cleanup(func() { _ = os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// tmpfsMagic is Linux's TMPFS_MAGIC (statfs(2)).
const tmpfsMagic = 0x01021994
