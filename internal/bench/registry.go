package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// CPU is the user and system CPU time the registry process has used so
// far, from /proc/PID/stat (Linux; zero elsewhere or on error).
func (r *Registry) CPU() time.Duration {
	if r == nil || r.cmd.Process == nil {
		return 0
	}
	return procCPU(r.cmd.Process.Pid)
}

// procCPU reads utime and stime of process pid from /proc/PID/stat, in
// clock ticks of USER_HZ (100 on every Linux architecture Go supports).
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	return time.Duration(u+s) * (time.Second / 100)
}
