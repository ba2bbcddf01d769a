package resolve

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAheadPool: at most max tasks run at once, on at most max
// goroutines, every queued task runs, and close drops what has not
// started and waits for what has.
func TestAheadPool(t *testing.T) {
	p := newAheadPool(2)
	var running, peak, done atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		p.run(func() {
			defer wg.Done()
			n := running.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			<-release
			running.Add(-1)
			done.Add(1)
		})
	}
	close(release)
	wg.Wait()
	if got := done.Load(); got != 10 {
		t.Fatalf("%d tasks ran, want 10", got)
	}
	if got := peak.Load(); got > 2 {
		t.Fatalf("%d tasks ran at once, want at most 2", got)
	}
	p.mu.Lock()
	workers := p.workers
	p.mu.Unlock()
	if workers > 2 {
		t.Fatalf("%d workers, want at most 2", workers)
	}

	// close waits for the running task; nothing runs after it.
	block, started := make(chan struct{}), make(chan struct{})
	p.run(func() { close(started); <-block })
	p.run(func() {})
	p.run(func() {})
	<-started
	closed := make(chan struct{})
	go func() { p.close(); close(closed) }()
	time.Sleep(10 * time.Millisecond) // close waits for the running task
	select {
	case <-closed:
		t.Fatal("close returned while a task was running")
	default:
	}
	close(block)
	<-closed
	p.run(func() { t.Error("a task ran after close") })
}
