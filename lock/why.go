package lock

import (
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/resolve"
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
	paths := g.Paths(target)
	if ans.ReplacedBy != "" {
		// The redirect is explained by the edges that named the replaced
		// source; paths that reach the replacer directly do not pull src
		// in. With no such edge (a replaced root, say), keep every path.
		askers := l.declarers(src)
		var via [][]string
		for _, path := range paths {
			if len(path) >= 2 && askers[path[len(path)-2]] {
				via = append(via, path)
			}
		}
		if len(via) > 0 {
			paths = via
		}
		for _, path := range paths {
			path[len(path)-1] += " (replaces " + src + ")"
		}
	}
	// The edge that named the package says how, when its name is more
	// than the package's own: a Helm chart's image names the template
	// that deploys it ("web/templates/deployment.yaml").
	labels := map[string]*resolve.Package{}
	for _, p := range g.Packages {
		labels[p.Label()] = p
	}
	for _, path := range paths {
		if len(path) < 2 {
			continue
		}
		parent := labels[path[len(path)-2]]
		if parent == nil {
			continue
		}
		for _, e := range parent.Dependencies {
			t := g.Packages[e.Target]
			if t == nil || t.Label() != path[len(path)-1] || e.Name == "" {
				continue
			}
			if e.Name != t.Source[strings.LastIndex(t.Source, "/")+1:] {
				path[len(path)-1] += " (via " + e.Name + ")"
			}
			break
		}
	}
	ans.Paths = append(ans.Paths, paths...)
	return ans, nil
}

// declarers returns the labels (as Graph().Paths writes them) of the
// packages that declare a dependency on the repository src, partial
// references qualified relative to the declaring package.
func (l *Lock) declarers(src string) map[string]bool {
	out := map[string]bool{}
	g := l.Graph()
	for _, p := range g.Packages {
		parent, err := ociref.Parse(p.Source)
		if err != nil {
			continue
		}
		for _, d := range p.Dependencies {
			if r, err := ociref.Qualify(d.Ref, parent); err == nil && r.Repo() == src {
				out[p.Label()] = true
			}
		}
	}
	return out
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
