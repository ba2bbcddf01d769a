// Package message is ferry's stand-in for golang.org/x/text/message in its
// copy of santhosh-tekuri/jsonschema (see ../../UPSTREAM.md). Upstream
// formats every message with message.NewPrinter(language.English); linking
// x/text for that costs the language, plural, catalog and number tables'
// initialisers at every start of ferry (issue 29: about five 64 KiB windows
// of code paged in, and their heap). This package prints what that English
// printer prints for the messages jsonschema formats: fmt's output, except
// that a plain %d or %v of a built-in integer or float is written as
// x/text's English number formatter writes it (golang.org/x/text v0.43.0
// message/print.go fmtInteger, fmtFloat, fmtVariableFloat and
// internal/number/format.go appendDecimal, appendScientific): digits
// grouped by three with ",", "-" for negatives (never "-0"), shortest
// float digits in decimal notation for exponents -4 to 5 and otherwise as
// "1.5×10⁰⁶", "∞", "-∞", "NaN". No message catalog is consulted: ferry
// registers no translations, so x/text's default catalog is empty and
// the format string is the message. ferry_test.go's TestPrinterMatchesXText
// holds it to x/text.
package message

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Printer formats messages as x/text's English printer does. Its zero
// value is ready to use (a package-level &Printer{} is initialised
// statically, where upstream's message.NewPrinter(language.English) ran at
// start-up).
type Printer struct{}

// Sprintf is fmt.Sprintf with x/text's English rendering of the integers
// and floats that a plain %d or %v directive prints.
func (*Printer) Sprintf(format string, args ...any) string {
	verbs, used, ok := plainVerbs(format, len(args))
	if !ok {
		return fmt.Sprintf(format, args...)
	}
	// x/text prints no "%!(EXTRA ...)" for arguments the format does not use.
	wrapped := make([]any, min(used, len(args)))
	for i, a := range args[:len(wrapped)] {
		wrapped[i] = a
		if s, ok := english(a, verbs[i]); ok {
			wrapped[i] = text(s)
		}
	}
	return fmt.Sprintf(format, wrapped...)
}

// text is an argument already rendered, printed as is by %d or %v.
type text string

// Format implements fmt.Formatter.
func (t text) Format(f fmt.State, _ rune) { f.Write([]byte(t)) }

// plainVerbs is the verb each argument gets in format, 0 where the
// directive has flags, a width or a precision (x/text pads and signs
// numbers its own way there; jsonschema uses none). It reports false for
// formats with explicit argument indexes or '*', which jsonschema does not
// use, and which are then left to fmt. used is how many arguments the
// directives take.
func plainVerbs(format string, n int) (verbs []rune, used int, ok bool) {
	verbs = make([]rune, n)
	arg := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		plain := true
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			plain = false
			i++
		}
		if i >= len(format) {
			break
		}
		switch c := format[i]; c {
		case '%':
			continue
		case '[', '*':
			return nil, 0, false
		default:
			if arg < n && plain && c < 0x80 {
				verbs[arg] = rune(c)
			}
			arg++
		}
	}
	return verbs, arg, true
}

// english is a built-in integer or float as x/text's English printer
// writes it for verb, and false where that is fmt's output.
func english(a any, verb rune) (string, bool) {
	if verb != 'd' && verb != 'v' {
		return "", false
	}
	switch v := a.(type) {
	case int:
		return groupInt(int64(v)), true
	case int8:
		return groupInt(int64(v)), true
	case int16:
		return groupInt(int64(v)), true
	case int32:
		return groupInt(int64(v)), true
	case int64:
		return groupInt(v), true
	case uint:
		return groupDigits(strconv.FormatUint(uint64(v), 10)), true
	case uint8:
		return groupDigits(strconv.FormatUint(uint64(v), 10)), true
	case uint16:
		return groupDigits(strconv.FormatUint(uint64(v), 10)), true
	case uint32:
		return groupDigits(strconv.FormatUint(uint64(v), 10)), true
	case uint64:
		return groupDigits(strconv.FormatUint(v, 10)), true
	case uintptr:
		return groupDigits(strconv.FormatUint(uint64(v), 10)), true
	case float32:
		if verb != 'v' {
			return "", false
		}
		return variableFloat(float64(v), 32), true
	case float64:
		if verb != 'v' {
			return "", false
		}
		return variableFloat(v, 64), true
	}
	return "", false
}

// groupInt is v in decimal, grouped by three.
func groupInt(v int64) string {
	if v < 0 {
		return "-" + groupDigits(strconv.FormatUint(uint64(-(v+1))+1, 10))
	}
	return groupDigits(strconv.FormatInt(v, 10))
}

// groupDigits puts a "," between each group of three of the decimal
// digits ds, from the right (English's "#,##0.###").
func groupDigits(ds string) string {
	if len(ds) <= 3 {
		return ds
	}
	var sb strings.Builder
	first := len(ds) % 3
	if first == 0 {
		first = 3
	}
	sb.WriteString(ds[:first])
	for i := first; i < len(ds); i += 3 {
		sb.WriteByte(',')
		sb.WriteString(ds[i : i+3])
	}
	return sb.String()
}

// superDigits are the superscript digits x/text writes an exponent with.
var superDigits = [10]string{"\u2070", "\u00B9", "\u00B2", "\u00B3", "\u2074", "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"}

// variableFloat is x/text's fmtVariableFloat (%v, %g without precision)
// for English: the shortest digits that read back as v, in decimal
// notation when the exponent is from -4 to 5, else in scientific notation
// with a superscript exponent of at least two digits.
func variableFloat(v float64, size int) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	case v == 0:
		return "0"
	}
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	e := strconv.FormatFloat(v, 'e', -1, size) // d[.ddd]e±XX
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	if exp < -4 || exp >= 6 {
		var sb strings.Builder
		sb.WriteString(sign)
		sb.WriteString(mant)
		sb.WriteString("×10")
		if exp < 0 {
			sb.WriteString("\u207B")
			exp = -exp
		}
		es := strconv.Itoa(exp)
		if len(es) < 2 {
			es = "0" + es
		}
		for _, c := range es {
			sb.WriteString(superDigits[c-'0'])
		}
		return sb.String()
	}
	var intPart, frac string
	if exp < 0 {
		intPart, frac = "0", strings.Repeat("0", -exp-1)+digits
	} else if exp+1 >= len(digits) {
		intPart = digits + strings.Repeat("0", exp+1-len(digits))
	} else {
		intPart, frac = digits[:exp+1], digits[exp+1:]
	}
	s := sign + groupDigits(intPart)
	if frac != "" {
		s += "." + frac
	}
	return s
}
