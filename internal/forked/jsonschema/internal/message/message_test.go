package message_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"

	"github.com/ferryhq/ferry/internal/forked/jsonschema/internal/message"
)

// TestPrinterMatchesXText holds the stand-in to what it replaces:
// golang.org/x/text/message's English printer, on every format shape
// jsonschema prints and on integers and floats of every magnitude.
func TestPrinterMatchesXText(t *testing.T) {
	real := xmessage.NewPrinter(language.English)
	var ours message.Printer
	type tc struct {
		format string
		args   []any
	}
	cases := []tc{
		{"validation failed", nil},
		{"minLength: got %d, want %d", []any{3, 1000}},
		{"'oneOf' failed, subschemas %d, %d matched", []any{0, 12345}},
		{"min %d items required to match contains schema, but matched %d items at %v", []any{1500, 2, "0 1"}},
		{"minimum: got %v, want %v", []any{1234.5, 1e6}},
		{"invalid jsonType %T", []any{1000}},
		{"invalid jsonType %T", []any{int64(7)}},
		{"invalid jsonType %T", []any{struct{}{}}},
		{"invalid character %q", []any{'x'}},
		{"invalid character %q", []any{rune(1234)}},
		{"%s is not valid %s: %v", []any{"'a'", "email", errors.New("missing @")}},
		{"value is not of mediatype %s: %v", []any{"'x'", nil}},
		{"%s is empty", []any{"major"}},
		{"100%% of %d", []any{2000}},
		{"%v %v %v %v %v %v", []any{int8(-100), int16(-30000), int32(-2000000), uint8(200), uint16(60000), uint32(4000000000)}},
		{"%v %v %v", []any{uint(1) << 40, uint64(math.MaxUint64), uintptr(123456)}},
		{"%d %d", []any{math.MaxInt64, math.MinInt64}},
		{"%v %v %v", []any{float32(1234.5), float32(1e7), float32(0.1)}},
		{"%v %v %v %v", []any{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1)}},
		{"%v", []any{true}},
		{"missing %d", nil},
		{"extra", []any{1000}},
	}
	floats := []float64{0, 1, -1, 0.1, 0.5, 0.0001, 0.00012, 0.00001, 1e-5, 9.99e-5, 123456, 999999, 1e5, 1e6,
		1234567, 1.5e6, 1e21, 1.234e100, -1.234e-100, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64,
		1000.5, -1000.5, 12345.678, 100000.25, 999999.5, 3.14159265358979, 65535, 70000, 1 << 53}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		floats = append(floats, math.Float64frombits(r.Uint64()))
		floats = append(floats, (r.Float64()-0.5)*math.Pow(10, float64(r.IntN(24)-8)))
		floats = append(floats, math.Round(r.Float64()*math.Pow(10, float64(r.IntN(10)))))
	}
	for _, f := range floats {
		cases = append(cases, tc{"maximum: got %v, want %v", []any{f, -f}})
	}
	for i := 0; i < 2000; i++ {
		n := int(r.Int64() >> r.IntN(64))
		cases = append(cases, tc{"maxItems: got %d, want %v", []any{n, -n}})
	}
	for _, c := range cases {
		got, want := ours.Sprintf(c.format, c.args...), real.Sprintf(c.format, c.args...)
		if got != want {
			t.Errorf("Sprintf(%q, %#v) = %q, x/text prints %q", c.format, c.args, got, want)
		}
	}
}
