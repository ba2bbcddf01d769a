//go:build !linux

package main

import (
	"os"
	"testing"
	"time"
)

// waitEchoOff gives the program a moment to turn echo off after its
// password prompt where the terminal's settings cannot be read from the
// master side (see echo_linux_test.go).
func waitEchoOff(t *testing.T, _ *os.File) {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
}
