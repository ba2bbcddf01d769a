// SPDX-FileCopyrightText: Copyright 2015-2025 go-swagger maintainers
// SPDX-License-Identifier: Apache-2.0

package validate

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	// ferry: "unicode/utf8" removed with MinLength and MaxLength.

	"github.com/ferryhq/ferry/internal/forked/strfmt"
	"github.com/go-openapi/errors"
	// ferry: "github.com/go-openapi/swag/conv" removed with IsValueValidAgainstRange.
)

type valueError string

func (e valueError) Error() string {
	return string(e)
}

// ErrValue indicates that a value validation occurred.
const ErrValue valueError = "value validation error"

// Enum validates if the data is a member of the enum.
func Enum(path, in string, data any, enum any) *errors.Validation {
	return EnumCase(path, in, data, enum, true)
}

// EnumCase validates if the data is a member of the enum and may respect case-sensitivity for strings.
func EnumCase(path, in string, data any, enum any, caseSensitive bool) *errors.Validation {
	val := reflect.ValueOf(enum)
	if val.Kind() != reflect.Slice {
		return nil
	}

	dataString := convertEnumCaseStringKind(data, caseSensitive)
	values := make([]any, 0, val.Len())
	for i := range val.Len() {
		ele := val.Index(i)
		enumValue := ele.Interface()
		if data != nil {
			if reflect.DeepEqual(data, enumValue) {
				return nil
			}
			enumString := convertEnumCaseStringKind(enumValue, caseSensitive)
			if dataString != nil && enumString != nil && strings.EqualFold(*dataString, *enumString) {
				return nil
			}
			actualType := reflect.TypeOf(enumValue)
			if actualType == nil { // Safeguard. Frankly, I don't know how we may get a nil
				continue
			}
			expectedValue := reflect.ValueOf(data)
			if expectedValue.IsValid() && expectedValue.Type().ConvertibleTo(actualType) {
				// Attempt comparison after type conversion
				if reflect.DeepEqual(expectedValue.Convert(actualType).Interface(), enumValue) {
					return nil
				}
			}
		}
		values = append(values, enumValue)
	}
	return errors.EnumFail(path, in, data, values)
}

// convertEnumCaseStringKind converts interface if it is kind of string and case insensitivity is set.
func convertEnumCaseStringKind(value any, caseSensitive bool) *string {
	if caseSensitive {
		return nil
	}

	val := reflect.ValueOf(value)
	if val.Kind() != reflect.String {
		return nil
	}

	str := fmt.Sprintf("%v", value)
	return &str
}

// MinItems validates that there are at least n items in a slice.
func MinItems(path, in string, size, minimum int64) *errors.Validation {
	if size < minimum {
		return errors.TooFewItems(path, in, minimum, size)
	}
	return nil
}

// MaxItems validates that there are at most n items in a slice.
func MaxItems(path, in string, size, maximum int64) *errors.Validation {
	if size > maximum {
		return errors.TooManyItems(path, in, maximum, size)
	}
	return nil
}

// ferry: removed UniqueItems (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MinLength (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MaxLength (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ReadOnly validates an interface for readonly.
func ReadOnly(ctx context.Context, path, in string, data any) *errors.Validation {
	// read only is only validated when operationType is request
	if op := extractOperationType(ctx); op != request {
		return nil
	}

	// data must be of zero value of its type
	val := reflect.ValueOf(data)
	if val.IsValid() {
		if reflect.DeepEqual(reflect.Zero(val.Type()).Interface(), val.Interface()) {
			return nil
		}
	} else {
		return nil
	}

	return errors.ReadOnly(path, in, data)
}

// Required validates an interface for requiredness.
func Required(path, in string, data any) *errors.Validation {
	val := reflect.ValueOf(data)
	if val.IsValid() {
		if reflect.DeepEqual(reflect.Zero(val.Type()).Interface(), val.Interface()) {
			return errors.Required(path, in, data)
		}
		return nil
	}
	return errors.Required(path, in, data)
}

// RequiredString validates a string for requiredness.
func RequiredString(path, in, data string) *errors.Validation {
	if data == "" {
		return errors.Required(path, in, data)
	}
	return nil
}

// ferry: removed RequiredNumber (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// Pattern validates a string against a regular expression.
func Pattern(path, in, data, pattern string) *errors.Validation {
	re, err := compileRegexp(pattern)
	if err != nil {
		return errors.FailedPattern(path, in, fmt.Sprintf("%s, but pattern is invalid: %s", pattern, err.Error()), data)
	}
	if !re.MatchString(data) {
		return errors.FailedPattern(path, in, pattern, data)
	}
	return nil
}

// ferry: removed MaximumInt (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MaximumUint (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed Maximum (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed Minimum (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// MinimumInt validates if a number is smaller than a given minimum.
func MinimumInt(path, in string, data, minimum int64, exclusive bool) *errors.Validation {
	if (!exclusive && data < minimum) || (exclusive && data <= minimum) {
		return errors.ExceedsMinimumInt(path, in, minimum, exclusive, data)
	}
	return nil
}

// ferry: removed MinimumUint (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MultipleOf (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MultipleOfInt (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MultipleOfUint (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// FormatOf validates if a string matches a format in the format registry.
func FormatOf(path, in, format, data string, registry strfmt.Registry) *errors.Validation {
	if registry == nil {
		registry = strfmt.Default
	}
	if ok := registry.ContainsName(format); !ok {
		return errors.InvalidTypeName(format)
	}
	if ok := registry.Validates(format, data); !ok {
		return errors.InvalidType(path, in, format, data)
	}
	return nil
}

// ferry: removed MaximumNativeType (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MinimumNativeType (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed MultipleOfNativeType (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).

// ferry: removed IsValueValidAgainstRange (not called by the rekor models, the only user of this copy; upstream github.com/go-openapi/validate v0.26.1 values.go).
