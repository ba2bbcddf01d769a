// Package govalidator is package of validators and sanitizers for strings, structs and collections.
package govalidator

// ferry: everything but IsEmail removed (upstream github.com/asaskevich/govalidator
// a9d515a09cc2 validator.go): rekor's pkg/pki/x509, the only user of this copy, calls only
// IsEmail; the rest, with the regular expressions it compiled at init, never runs in ferry.

// IsEmail checks if the string is an email.
func IsEmail(str string) bool {
	// TODO uppercase letters are not supported
	return rxEmail.MatchString(str)
}
