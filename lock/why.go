package lock

import (
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/ociref"
)

// WhyAnswer explains why a package is in a lock.
type WhyAnswer struct {
	// Source is the package's source repository.
	Source string `json:"source"`
	// ReplacedBy is set when the source was replaced.
	ReplacedBy string `json:"replacedBy,omitempty"`
	// Paths lists every path from a root, as package labels.
	Paths [][]string `json:"paths"`
}

// Why returns every path from a root to the package named by ref: a
// source repository (tag or digest allowed), or its last path element.
func (l *Lock) Why(ref string) (*WhyAnswer, error) {
	src, err := l.find(ref)
	if err != nil {
		return nil, err
	}
	ans := &WhyAnswer{Source: src, Paths: [][]string{}}
	target := src
	if p := l.Package(src); p != nil && p.ReplacedBy != "" {
		ans.ReplacedBy = p.ReplacedBy
		target = p.ReplacedBy
	}
	g := l.Graph()
	for _, path := range g.Paths(target) {
		if ans.ReplacedBy != "" && len(path) > 0 {
			path[len(path)-1] += " (replaces " + src + ")"
		}
		ans.Paths = append(ans.Paths, path)
	}
	return ans, nil
}

func (l *Lock) find(ref string) (string, error) {
	if r, err := ociref.Parse(ref); err == nil {
		if l.Package(r.Repo()) != nil {
			return r.Repo(), nil
		}
		return "", fmt.Errorf("%s is not in the lock", r.Repo())
	}
	var matches []string
	for _, p := range l.Packages {
		if strings.HasSuffix(p.Source, "/"+ref) {
			matches = append(matches, p.Source)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("no package in the lock matches %q", ref)
	case 1:
		return matches[0], nil
	}
	return "", fmt.Errorf("%q matches several packages: %s; name the whole source", ref, strings.Join(matches, ", "))
}
