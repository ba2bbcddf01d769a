// Package autoexport stands in for OpenTelemetry's
// go.opentelemetry.io/contrib/exporters/autoexport in ferry's build (see
// the replace directive in ferry's go.mod).
//
// distribution calls it from one place, tracing.InitOpenTelemetry, which
// only registry.NewRegistry runs; ferry's embedded registry builds its
// handler with handlers.NewApp and never initialises tracing. The real
// package links every OTLP, Prometheus and stdout exporter for traces,
// metrics and logs, which took 45 of the 76 seconds of a cold build of
// ferry on two cores. This stand-in keeps the one function distribution
// calls, with the same signature, and exports nothing.
package autoexport

import (
	"context"
	"io"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/trace"
)

// SpanOption configures NewSpanExporter; ferry passes none.
type SpanOption interface{ spanOption() }

// NewSpanExporter returns a span exporter that discards every span.
func NewSpanExporter(ctx context.Context, opts ...SpanOption) (trace.SpanExporter, error) {
	return stdouttrace.New(stdouttrace.WithWriter(io.Discard))
}
