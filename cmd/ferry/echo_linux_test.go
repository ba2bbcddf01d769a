//go:build linux

package main

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitEchoOff waits until the terminal behind the pseudo-terminal master
// ptmx no longer echoes input: a program prints its password prompt before
// it turns echo off (docker and ferry alike), so a test that types as soon
// as the prompt shows could race it. On Linux the master reports the
// slave's termios.
func waitEchoOff(t *testing.T, ptmx *os.File) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tio, err := unix.IoctlGetTermios(int(ptmx.Fd()), unix.TCGETS)
		if err != nil {
			t.Fatalf("reading the terminal's settings: %v", err)
		}
		if tio.Lflag&unix.ECHO == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the terminal still echoes after the password prompt")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
