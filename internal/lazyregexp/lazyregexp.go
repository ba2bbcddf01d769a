// Package lazyregexp is a regular expression compiled on first use, as
// the Go tree's own internal/lazyregexp (src/internal/lazyregexp/lazyre.go)
// is: a package-level
//
//	var tagRE = lazyregexp.New(`^[a-z]+$`)
//
// costs nothing when the program starts. New only stores the expression,
// so the compiler lays the value out in the binary's data and the package
// needs no initialiser; a regexp.MustCompile (or a sync.OnceValue, whose
// closure is allocated by an initialiser) at package level runs on every
// start of every command, and its initialiser's page of machine code is
// read in even when the command never matches anything (issue 29: `ferry
// version`'s peak RSS). internal/depcheck TestNoStartupWork pins that
// ferry's packages keep no initialiser.
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled, with regexp.MustCompile, the
// first time one of its methods is called; it panics then if the
// expression does not compile, as MustCompile does.
type Regexp struct {
	expr string
	once sync.Once
	rx   *regexp.Regexp
}

// New returns expr as a Regexp compiled on first use. It must stay a
// single composite literal: that is what lets the compiler initialise a
// package-level New statically.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Regexp returns the compiled expression.
func (r *Regexp) Regexp() *regexp.Regexp {
	r.once.Do(func() { r.rx = regexp.MustCompile(r.expr) })
	return r.rx
}

// String returns the source text of the expression.
func (r *Regexp) String() string { return r.expr }

// MatchString is regexp.Regexp's MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Regexp().MatchString(s) }

// FindString is regexp.Regexp's FindString.
func (r *Regexp) FindString(s string) string { return r.Regexp().FindString(s) }

// FindStringIndex is regexp.Regexp's FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.Regexp().FindStringIndex(s) }

// FindStringSubmatch is regexp.Regexp's FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.Regexp().FindStringSubmatch(s) }

// FindAllString is regexp.Regexp's FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.Regexp().FindAllString(s, n) }

// FindAllStringSubmatch is regexp.Regexp's FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Regexp().FindAllStringSubmatch(s, n)
}

// ReplaceAllString is regexp.Regexp's ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Regexp().ReplaceAllString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp's ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Regexp().ReplaceAllStringFunc(src, repl)
}

// Split is regexp.Regexp's Split.
func (r *Regexp) Split(s string, n int) []string { return r.Regexp().Split(s, n) }

// SubexpIndex is regexp.Regexp's SubexpIndex.
func (r *Regexp) SubexpIndex(name string) int { return r.Regexp().SubexpIndex(name) }
