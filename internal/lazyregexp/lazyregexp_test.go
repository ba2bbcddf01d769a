package lazyregexp

import (
	"regexp"
	"slices"
	"testing"
)

// TestSameAsRegexp checks each method against the compiled expression's.
func TestSameAsRegexp(t *testing.T) {
	tests := []struct{ expr, in string }{
		{`^v?([0-9]+)\.([0-9]+)$`, "v1.25"},
		{`(?m)^---[ \t]*`, "a\n--- \nb\n---\nc"},
		{`sha256:[0-9a-f]{4}`, "x sha256:abcd y sha256:0123"},
		{`(?P<name>[a-z]+)`, "no MATCH"},
	}
	for _, tt := range tests {
		l, rx := New(tt.expr), regexp.MustCompile(tt.expr)
		if l.String() != tt.expr || l.Regexp().String() != rx.String() {
			t.Errorf("%s: String %q", tt.expr, l.String())
		}
		if l.MatchString(tt.in) != rx.MatchString(tt.in) ||
			l.FindString(tt.in) != rx.FindString(tt.in) ||
			!slices.Equal(l.FindStringIndex(tt.in), rx.FindStringIndex(tt.in)) ||
			!slices.Equal(l.FindStringSubmatch(tt.in), rx.FindStringSubmatch(tt.in)) ||
			!slices.Equal(l.FindAllString(tt.in, -1), rx.FindAllString(tt.in, -1)) ||
			len(l.FindAllStringSubmatch(tt.in, -1)) != len(rx.FindAllStringSubmatch(tt.in, -1)) ||
			l.ReplaceAllString(tt.in, "<$0>") != rx.ReplaceAllString(tt.in, "<$0>") ||
			l.ReplaceAllStringFunc(tt.in, func(s string) string { return "!" }) != rx.ReplaceAllStringFunc(tt.in, func(s string) string { return "!" }) ||
			!slices.Equal(l.Split(tt.in, -1), rx.Split(tt.in, -1)) ||
			l.SubexpIndex("name") != rx.SubexpIndex("name") {
			t.Errorf("%s on %q: a method differs from regexp's", tt.expr, tt.in)
		}
	}
}

// TestCompiledOnce checks that the expression is compiled on first use,
// once, and that an invalid one panics only then.
func TestCompiledOnce(t *testing.T) {
	l := New(`a+`)
	if l.rx != nil {
		t.Fatal("compiled before first use")
	}
	first := l.Regexp()
	if first == nil || l.Regexp() != first {
		t.Fatal("not compiled exactly once")
	}
	bad := New(`(`)
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic at first use")
		}
	}()
	bad.MatchString("x")
}
