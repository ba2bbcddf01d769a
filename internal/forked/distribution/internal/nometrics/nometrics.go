// Package metrics (ferry: added, not in upstream distribution) stands in
// for github.com/docker/go-metrics v0.1.0 with collectors that record
// nothing, so that the fork does not link the Prometheus client.
//
// Upstream distribution v3.1.2 registers its storage, notification and
// cache collectors with go-metrics' default registry at init, but only
// exposes them when the configuration enables the Prometheus debug
// endpoint (http.debug.prometheus, served by registry/registry.go's debug
// server, which ferry does not link). ferry serve never enables it, so the
// values upstream records are read by nobody; the fork's
// registry/handlers refuses a configuration that asks for them.
//
// Only the part of go-metrics' API the copied packages call is here, with
// go-metrics' names and signatures (namespace.go, counter.go, gauge.go,
// timer.go, unit.go, register.go), so each patched file only changes an
// import path.
package metrics

import "time"

// Unit names the unit of a gauge, as go-metrics' Unit does.
type Unit string

// Total is go-metrics' unit for a gauge that counts.
const Total Unit = "total"

// Labels are constant labels of a namespace (go-metrics: prometheus.Labels).
type Labels map[string]string

// Namespace groups collectors under a name; here it creates collectors
// that record nothing.
type Namespace struct{}

// NewNamespace returns a namespace; name, subsystem and labels are unused.
func NewNamespace(name, subsystem string, labels Labels) *Namespace { return &Namespace{} }

// NewCounter returns a counter that records nothing.
func (n *Namespace) NewCounter(name, help string) Counter { return nop{} }

// NewLabeledCounter returns a labelled counter that records nothing.
func (n *Namespace) NewLabeledCounter(name, help string, labels ...string) LabeledCounter {
	return nopLabeledCounter{}
}

// NewLabeledGauge returns a labelled gauge that records nothing.
func (n *Namespace) NewLabeledGauge(name, help string, unit Unit, labels ...string) LabeledGauge {
	return nopLabeledGauge{}
}

// NewLabeledTimer returns a labelled timer that records nothing.
func (n *Namespace) NewLabeledTimer(name, help string, labels ...string) LabeledTimer {
	return nopLabeledTimer{}
}

// Register registers namespaces with the default registry: here, nothing.
func Register(n ...*Namespace) {}

// Counter is go-metrics' Counter.
type Counter interface {
	// Inc adds 1, or the sum of vs, to the counter.
	Inc(vs ...float64)
}

// LabeledCounter is go-metrics' LabeledCounter.
type LabeledCounter interface {
	// WithValues returns the counter of one set of label values.
	WithValues(vs ...string) Counter
}

// Gauge is go-metrics' Gauge.
type Gauge interface {
	// Inc adds 1, or the sum of vs.
	Inc(vs ...float64)
	// Dec subtracts 1, or the sum of vs.
	Dec(vs ...float64)
	// Add adds v.
	Add(v float64)
	// Set sets the gauge to v.
	Set(v float64)
}

// LabeledGauge is go-metrics' LabeledGauge.
type LabeledGauge interface {
	// WithValues returns the gauge of one set of label values.
	WithValues(vs ...string) Gauge
}

// Timer is go-metrics' Timer.
type Timer interface {
	// Update records a duration.
	Update(duration time.Duration)
	// UpdateSince records the time elapsed since t.
	UpdateSince(t time.Time)
}

// LabeledTimer is go-metrics' LabeledTimer.
type LabeledTimer interface {
	// WithValues returns the timer of one set of label values.
	WithValues(vs ...string) Timer
}

// nop records nothing; it is every counter, gauge and timer.
type nop struct{}

func (nop) Inc(...float64)        {}
func (nop) Dec(...float64)        {}
func (nop) Add(float64)           {}
func (nop) Set(float64)           {}
func (nop) Update(time.Duration)  {}
func (nop) UpdateSince(time.Time) {}

type nopLabeledCounter struct{}

func (nopLabeledCounter) WithValues(...string) Counter { return nop{} }

type nopLabeledGauge struct{}

func (nopLabeledGauge) WithValues(...string) Gauge { return nop{} }

type nopLabeledTimer struct{}

func (nopLabeledTimer) WithValues(...string) Timer { return nop{} }
