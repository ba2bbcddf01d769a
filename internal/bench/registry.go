package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Registry is a `ferry serve` subprocess on a loopback port with its own
// storage directory.
type Registry struct {
	// Addr is the registry's HOST:PORT, always on 127.0.0.1.
	Addr string
	// Root is the storage directory.
	Root    string
	cmd     *exec.Cmd
	done    chan error
	stopped bool
}

// StartRegistry starts `ferryBin serve` with storage in dir (created) on
// 127.0.0.1, port chosen by the kernel, and waits until it listens.
func StartRegistry(ctx context.Context, ferryBin, dir string) (*Registry, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addrFile := filepath.Join(dir, "addr")
	root := filepath.Join(dir, "storage")
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(ferryBin, "serve", "--root", root, "--addr", "127.0.0.1:0", "--addr-file", addrFile, "--quiet")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s serve: %w", ferryBin, err)
	}
	r := &Registry{Root: root, cmd: cmd, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(addrFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			r.Addr = strings.TrimSpace(string(b))
			return r, nil
		}
		select {
		case err := <-r.done:
			log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
			return nil, fmt.Errorf("ferry serve exited before listening (%v): %s", err, log)
		case <-ctx.Done():
			r.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.Close()
			return nil, errors.New("ferry serve did not write its address within 20s")
		}
	}
}

// Close stops the registry (SIGTERM, then SIGKILL after 10s) and waits for
// it. It does not remove the storage.
func (r *Registry) Close() {
	if r == nil || r.stopped {
		return
	}
	r.stopped = true
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}
