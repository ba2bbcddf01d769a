package install_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/install"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/internal/pipelinetest"
	"github.com/ferryhq/ferry/signature"
)

// TestInstallRequiresLockSignature: with a lock key, Install refuses a
// lock whose LOCK.sig is missing or does not verify, before writing
// anything, and installs one whose signature verifies.
func TestInstallRequiresLockSignature(t *testing.T) {
	ctx := context.Background()
	_, _, c, l := pipelinetest.MirroredLock(t)
	signer, err := fixture.NewCosignECDSA()
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := signer.PublicKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	key, err := signature.ParsePublicKey(pemBytes)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lockPath := filepath.Join(dir, "ferry.lock")
	if err := l.Write(lockPath); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T)
		want    string
	}{
		{"no LOCK.sig", func(*testing.T) {}, "ferry.lock.sig is missing"},
		{"a signature over other bytes", func(t *testing.T) {
			sig, err := signer.SignBlob([]byte("another lock"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(lockPath+".sig", sig, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "does not sign"},
		{"signed", func(t *testing.T) {
			if err := signer.SignFile(lockPath); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.prepare(t)
			dest := filepath.Join(t.TempDir(), "out")
			_, err := install.Install(ctx, l, install.Options{Registry: c, Dest: dest, LockKey: key, LockFile: lockPath})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := os.Stat(filepath.Join(dest, install.PlanFile)); err != nil {
					t.Error(err)
				}
				return
			}
			if exitcode.Of(err) != exitcode.Mismatch || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (exit %d), want exit 3 naming %q", err, exitcode.Of(err), tc.want)
			}
			if _, err := os.Stat(dest); !os.IsNotExist(err) {
				t.Errorf("destination written: %v", err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(dest)); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}
