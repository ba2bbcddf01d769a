//go:build !linux

package registrytest

import "testing"

// storageDir returns an empty directory for a registry's storage, removed
// when the test ends.
func storageDir(t testing.TB) string {
	t.Helper()
	return t.TempDir()
}
