package strfmt_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	realstrfmt "github.com/go-openapi/strfmt"

	"github.com/ferryhq/ferry/internal/forked/strfmt"
)

// formatNames are every name upstream's init() registers, the spellings
// the rekor models and go-openapi/validate ask for, and names it does not
// know.
var formatNames = []string{
	"uri", "email", "hostname", "ipv4", "ipv6", "cidr", "mac", "uuid", "uuid3", "uuid4", "uuid5", "uuid7",
	"isbn", "isbn10", "isbn13", "creditcard", "ssn", "hexcolor", "rgbcolor", "byte", "password",
	"date", "datetime", "date-time", "duration", "duration-human", "durationhuman", "duration-iso8601",
	"bsonobjectid", "ulid", "country", "int64", "", "unknown", "URI", "u-r-i",
}

// TestCurrencyLeftOut: the one format the copy leaves out (ferry's patch,
// register.go) is "currency"; every other name upstream registers, and
// the three the rekor models ask for, are there.
func TestCurrencyLeftOut(t *testing.T) {
	if strfmt.Default.ContainsName("currency") || !realstrfmt.Default.ContainsName("currency") {
		t.Errorf("currency: copy %v, upstream %v", strfmt.Default.ContainsName("currency"), realstrfmt.Default.ContainsName("currency"))
	}
	if strfmt.Default.Validates("currency", "USD") {
		t.Errorf("the copy validates currency")
	}
	for _, name := range append([]string{"date-time", "email", "uri"}, formatNames...) {
		if got, want := strfmt.Default.ContainsName(name), realstrfmt.Default.ContainsName(name); got != want {
			t.Errorf("%q: copy %v, upstream %v", name, got, want)
		}
	}
}

// formatInputs exercise each format's validator and parser, valid and
// not.
var formatInputs = []string{
	"", " ", "-", "null", "https://example.com", "https://example.com/a?b=c#d", "/relative/path", "mailto:x@example.com",
	"::not a uri", "http://[::1]:80/", "user@example.com", "User Name <user@example.com>", "user@", "@example.com",
	"example.com", "sub.example.com.", "xn--n3h.example", "☃.example", "-bad.example", "a_b.example", strings.Repeat("a", 64) + ".com",
	strings.Repeat("a.", 130) + "com", "localhost", "127.0.0.1", "256.0.0.1", "1.2.3", "::1", "2001:db8::1", "2001:db8::1%eth0",
	"10.0.0.0/8", "10.0.0.0/33", "2001:db8::/32", "01:23:45:67:89:ab", "01-23-45-67-89-ab", "0123.4567.89ab", "01:23:45:67:89",
	"a8098c1a-f86e-11da-bd1a-00112444be1e", "6fa459ea-ee8a-3ca4-894e-db77e160355e", "16fd2706-8baf-433b-82eb-8c7fada847da",
	"886313e1-3b8a-5372-9b90-0c9aee199e5d", "0190163d-8694-739b-aea5-966c26f8ad91", "A8098C1AF86E11DABD1A00112444BE1E", "not-a-uuid",
	"0-306-40615-2", "0306406152", "0306406153", "978-0-306-40615-7", "9780306406157", "9780306406158", "123456789X",
	"4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111112", "5500 0000 0000 0004", "378282246310005",
	"123-45-6789", "123456789", "000-00-0000", "#fff", "#ffffff", "#ggg", "fff", "rgb(255,255,255)", "rgb(256,0,0)", "rgb( 1, 2, 3 )",
	"aGVsbG8=", "aGVsbG8", "aGVsbG8===", "!!!", "YQ==", "2023-01-02", "2023-02-30", "2023-1-2", "2023-01-02T03:04:05Z",
	"2023-01-02T03:04:05.123456789+01:00", "2023-01-02T03:04:05", "2023-01-02 03:04:05", "2023-01-02T03:04:05.000Z",
	"2023-01-02T25:04:05Z", "1970-01-01T00:00:00Z", "03:04:05Z", "1h", "1h30m", "3 days", "1 week", "2wks", "5µs", "5μs", "1.5h",
	"-1h", "1 hour 2 minutes", "1x", "PT1H", "P1Y2M3DT4H5M6S", "P1W", "PT0.5S", "P", "PT", "P1M1Y", "-PT1H", "PT1H1H",
	"507f1f77bcf86cd799439011", "507f1f77bcf86cd79943901", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "01ARZ3NDEKTSV4RRFFQ69G5FA",
	"USD", "usd", "EUR", "XXX", "ZZZ", "US", "USA", "FR", "FRA", "fr", "XK", "ZZ", "U", "USAA",
}

func describe(v any, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%T %v", v, v)
}

type registry interface {
	ContainsName(string) bool
	Validates(string, string) bool
	Parse(string, string) (any, error)
}

func registryTable(r registry, types func(string) string) string {
	var b strings.Builder
	for _, name := range formatNames {
		fmt.Fprintf(&b, "%q contains=%v type=%s\n", name, r.ContainsName(name), types(name))
		for _, in := range formatInputs {
			fmt.Fprintf(&b, "  %q validates=%v parse=%s\n", in, r.Validates(name, in), describe(r.Parse(name, in)))
		}
	}
	return b.String()
}

// diffLines reports the lines where got and want differ, once the real
// module's path in generic type names (ISODuration[...DurationStrict]) is
// read as the copy's.
func diffLines(t *testing.T, what, got, want string) {
	t.Helper()
	want = strings.ReplaceAll(want, "github.com/go-openapi/strfmt", "github.com/ferryhq/ferry/internal/forked/strfmt")
	if got == want {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	n := 0
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			t.Errorf("%s: copy %s\n upstream %s", what, g[i], w[i])
			if n++; n > 20 {
				return
			}
		}
	}
	if len(g) != len(w) {
		t.Errorf("%s: copy %d lines, upstream %d", what, len(g), len(w))
	}
}

// TestRegistriesAsUpstream asks the copy's Default, JSONSchema2020Registry
// and NewFormats() (seeded on first use) and the real module's (seeded by
// its init) about every format name and input: the same answers.
func TestRegistriesAsUpstream(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want func() string
	}{
		{"Default", func() string {
			return registryTable(strfmt.Default, func(n string) string { ty, ok := strfmt.Default.GetType(n); return fmt.Sprint(ty, ok) })
		}, func() string {
			return registryTable(realstrfmt.Default, func(n string) string { ty, ok := realstrfmt.Default.GetType(n); return fmt.Sprint(ty, ok) })
		}},
		{"JSONSchema2020Registry", func() string {
			r := strfmt.JSONSchema2020Registry
			return registryTable(r, func(n string) string { ty, ok := r.GetType(n); return fmt.Sprint(ty, ok) })
		}, func() string {
			r := realstrfmt.JSONSchema2020Registry
			return registryTable(r, func(n string) string { ty, ok := r.GetType(n); return fmt.Sprint(ty, ok) })
		}},
		{"NewFormats", func() string {
			r := strfmt.NewFormats()
			return registryTable(r, func(n string) string { ty, ok := r.GetType(n); return fmt.Sprint(ty, ok) })
		}, func() string {
			r := realstrfmt.NewFormats()
			return registryTable(r, func(n string) string { ty, ok := r.GetType(n); return fmt.Sprint(ty, ok) })
		}},
	} {
		diffLines(t, tc.name, tc.got(), tc.want())
	}
}

// TestRegistryEditsAsUpstream: formats added to and removed from a fresh
// registry of each module give the same answers, and JSONSchema2020Registry
// keeps upstream's formats whatever Default gained (upstream seeds it at
// init, before any change).
func TestRegistryEditsAsUpstream(t *testing.T) {
	got, want := strfmt.NewFormats(), realstrfmt.NewFormats()
	var gu strfmt.URI
	var wu realstrfmt.URI
	steps := []string{
		fmt.Sprint(got.Add("my-format", &gu, func(s string) bool { return s == "x" })),
		fmt.Sprint(got.DelByName("email")),
		fmt.Sprint(got.Validates("myformat", "x"), got.Validates("my-format", "y"), got.ContainsName("email"), got.ContainsName("date")),
	}
	wantSteps := []string{
		fmt.Sprint(want.Add("my-format", &wu, func(s string) bool { return s == "x" })),
		fmt.Sprint(want.DelByName("email")),
		fmt.Sprint(want.Validates("myformat", "x"), want.Validates("my-format", "y"), want.ContainsName("email"), want.ContainsName("date")),
	}
	if fmt.Sprint(steps) != fmt.Sprint(wantSteps) {
		t.Errorf("edits: copy %v, upstream %v", steps, wantSteps)
	}
	if got.ContainsName("email") || !strfmt.Default.ContainsName("email") {
		t.Errorf("NewFormats shares Default's formats")
	}
}

// TestTypesAsUpstream: the parse functions and the JSON forms of the types
// the rekor models use (Base64, DateTime, URI, UUID, Email, Hostname...)
// are the real module's.
func TestTypesAsUpstream(t *testing.T) {
	for _, in := range formatInputs {
		d1, e1 := strfmt.ParseDateTime(in)
		d2, e2 := realstrfmt.ParseDateTime(in)
		if describe(d1.String(), e1) != describe(d2.String(), e2) {
			t.Errorf("ParseDateTime(%q): copy %s, upstream %s", in, describe(d1.String(), e1), describe(d2.String(), e2))
		}
		u1, e1 := strfmt.ParseDuration(in)
		u2, e2 := realstrfmt.ParseDuration(in)
		if describe(u1, e1) != describe(u2, e2) {
			t.Errorf("ParseDuration(%q): copy %s, upstream %s", in, describe(u1, e1), describe(u2, e2))
		}
		i1, e1 := strfmt.ParseISO8601Duration(in)
		i2, e2 := realstrfmt.ParseISO8601Duration(in)
		if describe(i1, e1) != describe(i2, e2) {
			t.Errorf("ParseISO8601Duration(%q): copy %s, upstream %s", in, describe(i1, e1), describe(i2, e2))
		}
		c1, e1 := strfmt.ParseCountry(in)
		c2, e2 := realstrfmt.ParseCountry(in)
		if describe(c1.String(), e1) != describe(c2.String(), e2) {
			t.Errorf("ParseCountry(%q): copy %s, upstream %s", in, describe(c1.String(), e1), describe(c2.String(), e2))
		}
		for _, check := range []struct {
			name     string
			got, old bool
		}{
			{"IsHostname", strfmt.IsHostname(in), realstrfmt.IsHostname(in)},
			{"IsEmail", strfmt.IsEmail(in), realstrfmt.IsEmail(in)},
			{"IsUUID", strfmt.IsUUID(in), realstrfmt.IsUUID(in)},
			{"IsDate", strfmt.IsDate(in), realstrfmt.IsDate(in)},
			{"IsDateTime", strfmt.IsDateTime(in), realstrfmt.IsDateTime(in)},
			{"IsDuration", strfmt.IsDuration(in), realstrfmt.IsDuration(in)},
			{"IsCountry", strfmt.IsCountry(in), realstrfmt.IsCountry(in)},
			{"IsULID", strfmt.IsULID(in), realstrfmt.IsULID(in)},
			{"IsBSONObjectID", strfmt.IsBSONObjectID(in), realstrfmt.IsBSONObjectID(in)},
		} {
			if check.got != check.old {
				t.Errorf("%s(%q): copy %v, upstream %v", check.name, in, check.got, check.old)
			}
		}
		q, _ := json.Marshal(in)
		for _, pair := range []struct {
			name     string
			got, old any
		}{
			{"Base64", new(strfmt.Base64), new(realstrfmt.Base64)},
			{"DateTime", new(strfmt.DateTime), new(realstrfmt.DateTime)},
			{"Date", new(strfmt.Date), new(realstrfmt.Date)},
			{"URI", new(strfmt.URI), new(realstrfmt.URI)},
			{"UUID", new(strfmt.UUID), new(realstrfmt.UUID)},
			{"Email", new(strfmt.Email), new(realstrfmt.Email)},
			{"Hostname", new(strfmt.Hostname), new(realstrfmt.Hostname)},
			{"Duration", new(strfmt.Duration), new(realstrfmt.Duration)},
		} {
			e1 := json.Unmarshal(q, pair.got)
			e2 := json.Unmarshal(q, pair.old)
			j1, m1 := json.Marshal(pair.got)
			j2, m2 := json.Marshal(pair.old)
			g := fmt.Sprint(e1, string(j1), m1)
			w := fmt.Sprint(e2, string(j2), m2)
			if g != w {
				t.Errorf("%s JSON %s: copy %s, upstream %s", pair.name, q, g, w)
			}
		}
	}
	now := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	if g, w := strfmt.DateTime(now).String(), realstrfmt.DateTime(now).String(); g != w {
		t.Errorf("DateTime.String: copy %s, upstream %s", g, w)
	}
	if g, w := strfmt.UnixZero, realstrfmt.UnixZero; !g.Equal(w) {
		t.Errorf("UnixZero: copy %v, upstream %v", g, w)
	}
}
