package resolve

import "sync"

// aheadPool runs reads ahead on a few long-lived goroutines rather than
// one new goroutine each. A read ahead goes deep into the HTTP client, so
// a fresh goroutine grows its stack, copying it, several times on the way:
// on W2 (BENCHMARKS.md) stack growth was a tenth of the resolver's CPU. A
// worker's stack stays grown from one read to the next. At most max
// workers run, which is also as many reads as can be in flight
// (Options.Concurrency); tasks wait in order.
type aheadPool struct {
	mu      sync.Mutex
	cond    sync.Cond
	tasks   []func()
	workers int
	idle    int
	max     int
	closed  bool
	wg      sync.WaitGroup
}

func newAheadPool(max int) *aheadPool {
	p := &aheadPool{max: max}
	p.cond.L = &p.mu
	return p
}

// run queues f, starting a worker when none is idle and fewer than max
// run. After close, f is dropped.
func (p *aheadPool) run(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.tasks = append(p.tasks, f)
	switch {
	case p.idle > 0:
		p.cond.Signal()
	case p.workers < p.max:
		p.workers++
		p.wg.Add(1)
		go p.work()
	}
}

func (p *aheadPool) work() {
	defer p.wg.Done()
	p.mu.Lock()
	for {
		for len(p.tasks) == 0 && !p.closed {
			p.idle++
			p.cond.Wait()
			p.idle--
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		f := p.tasks[0]
		p.tasks[0] = nil
		p.tasks = p.tasks[1:]
		p.mu.Unlock()
		f()
		p.mu.Lock()
	}
}

// close drops the tasks not started and waits for the running ones,
// which the caller has told to stop (their context).
func (p *aheadPool) close() {
	p.mu.Lock()
	p.closed = true
	p.tasks = nil
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
