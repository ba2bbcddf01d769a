package resolve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Output formats of WriteGraph.
const (
	OutputTree = "tree"
	OutputJSON = "json"
	OutputDot  = "dot"
	OutputPlan = "plan"
)

// WriteGraph writes g to w as a tree, JSON, Graphviz dot, or an install
// plan.
func WriteGraph(w io.Writer, g *Graph, output string) error {
	switch output {
	case "", OutputTree:
		return writeTree(w, g)
	case OutputJSON:
		// What json.Encoder with SetIndent writes, byte for byte, made a
		// third faster: Indent sizes its buffer once, where the encoder
		// grows its own as it goes (1.1 MB for a closure of 1,000
		// bundles).
		raw, err := json.Marshal(g.Report())
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			return err
		}
		b.WriteByte('\n')
		_, err = w.Write(b.Bytes())
		return err
	case OutputDot:
		return writeDot(w, g)
	case OutputPlan:
		return writePlan(w, g)
	}
	return fmt.Errorf("unknown output %q: use tree, json, dot or plan", output)
}

// GraphReport is the JSON shape of a graph.
type GraphReport struct {
	Roots    []string          `json:"roots"`
	Packages []PackageReport   `json:"packages"`
	Plan     []string          `json:"plan"`
	Replaced map[string]string `json:"replaced,omitempty"`
	Warnings []string          `json:"warnings,omitempty"`
}

// PackageReport is the JSON shape of a package.
type PackageReport struct {
	Source       string         `json:"source"`
	Ref          string         `json:"ref,omitempty"`
	Kind         string         `json:"kind"`
	Version      string         `json:"version,omitempty"`
	Tags         []string       `json:"tags,omitempty"`
	Digest       string         `json:"digest"`
	MediaType    string         `json:"mediaType"`
	Size         int64          `json:"size"`
	Dependencies []EdgeReport   `json:"dependencies,omitempty"`
	Replaces     []string       `json:"replaces,omitempty"`
	Images       []ImageReport  `json:"images,omitempty"`
	Mixins       map[string]any `json:"mixins,omitempty"`
	// ReadFrom is where the package was read, when a mirror of its
	// source served it (Package.ReadFrom).
	ReadFrom string `json:"readFrom,omitempty"`
}

// EdgeReport is the JSON shape of a dependency edge.
type EdgeReport struct {
	Name       string `json:"name"`
	Ref        string `json:"ref,omitempty"`
	Constraint string `json:"constraint,omitempty"`
	Resolved   string `json:"resolved"`
	Role       string `json:"role,omitempty"`
	Use        string `json:"use,omitempty"`
}

// ImageReport is the JSON shape of an image a package carries.
type ImageReport struct {
	Name   string `json:"name"`
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
}

// Report returns the graph's JSON shape, packages sorted by source.
func (g *Graph) Report() GraphReport {
	rep := GraphReport{Roots: g.Roots, Replaced: g.Replaced, Warnings: g.Warnings}
	for _, s := range g.Sources() {
		p := g.Packages[s]
		pr := PackageReport{
			Source: p.Source, Ref: p.Ref, Kind: p.Kind, Version: p.Version, Tags: p.Tags,
			Digest: p.Descriptor.Digest.String(), MediaType: p.Descriptor.MediaType, Size: p.Descriptor.Size,
			Replaces: p.Replaces, ReadFrom: p.ReadFrom,
		}
		for _, e := range p.Dependencies {
			pr.Dependencies = append(pr.Dependencies, EdgeReport{Name: e.Name, Ref: e.Ref, Constraint: e.Constraint, Resolved: g.Resolved(e), Role: e.Role, Use: e.Use})
		}
		if p.Meta != nil {
			for _, im := range p.Meta.Images {
				pr.Images = append(pr.Images, ImageReport{Name: im.Name, Ref: im.Ref, Digest: im.Descriptor.Digest.String()})
			}
			// The mixins a bundle records (custom."sh.porter".mixins):
			// version, and the source and binaries when it records them.
			for _, m := range p.Meta.Mixins {
				if pr.Mixins == nil {
					pr.Mixins = map[string]any{}
				}
				rec := map[string]any{"version": m.Version}
				if m.URL != "" {
					rec["url"] = m.URL
				}
				if len(m.Binaries) > 0 {
					rec["binaries"] = m.Binaries
				}
				pr.Mixins[m.Name] = rec
			}
		}
		rep.Packages = append(rep.Packages, pr)
	}
	if plan, err := g.Plan(); err == nil {
		for _, p := range plan {
			rep.Plan = append(rep.Plan, p.Source+"@"+p.Descriptor.Digest.String())
		}
	}
	return rep
}

func writeTree(w io.Writer, g *Graph) error {
	seen := map[string]bool{}
	var walk func(src, prefix, name string, last, top bool)
	walk = func(src, prefix, name string, last, top bool) {
		p := g.Packages[src]
		branch, childPrefix := "├── ", prefix+"│   "
		if last {
			branch, childPrefix = "└── ", prefix+"    "
		}
		if top {
			branch, childPrefix = "", ""
		}
		label := src
		if p != nil {
			label = fmt.Sprintf("%s (%s) %s", p.Label(), p.Kind, short(p.Descriptor.Digest.String()))
		}
		if name != "" && !strings.HasSuffix(src, "/"+name) && !strings.Contains(name, "/") {
			label = name + ": " + label
		}
		if seen[src] && p != nil && len(p.Dependencies) > 0 {
			fmt.Fprintf(w, "%s%s%s (see above)\n", prefix, branch, label)
			return
		}
		fmt.Fprintf(w, "%s%s%s\n", prefix, branch, label)
		seen[src] = true
		if p == nil {
			return
		}
		for i, e := range p.Dependencies {
			walk(e.Target, childPrefix, e.Name, i == len(p.Dependencies)-1, false)
		}
	}
	for _, r := range g.Roots {
		walk(r, "", "", true, true)
	}
	olds := make([]string, 0, len(g.Replaced))
	for old := range g.Replaced {
		olds = append(olds, old)
	}
	sort.Strings(olds)
	for _, old := range olds {
		fmt.Fprintf(w, "replaced: %s => %s\n", old, g.Replaced[old])
	}
	return nil
}

func short(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

func writeDot(w io.Writer, g *Graph) error {
	fmt.Fprintln(w, "digraph ferry {")
	fmt.Fprintln(w, "  rankdir=LR;")
	for _, s := range g.Sources() {
		p := g.Packages[s]
		fmt.Fprintf(w, "  %q [label=%q];\n", s, p.Label()+"\n"+p.Kind)
	}
	for _, s := range g.Sources() {
		for _, e := range g.Packages[s].Dependencies {
			fmt.Fprintf(w, "  %q -> %q [label=%q];\n", s, e.Target, e.Name)
		}
	}
	fmt.Fprintln(w, "}")
	return nil
}

func writePlan(w io.Writer, g *Graph) error {
	plan, err := g.Plan()
	if err != nil {
		return err
	}
	n := 0
	printInstance := func(in Instance) error {
		n++
		var line string
		if in.ID == "" {
			line = fmt.Sprintf("%d. %s %s %s (local %s) instance %s", n, in.Kind, in.Operator, in.Version, in.Local, in.Name)
		} else {
			q := g.Packages[in.ID]
			if q == nil {
				return fmt.Errorf("plan: instance %s names no package %s", in.Name, in.ID)
			}
			what := q.Pinned()
			if in.Operator != "" && q.Meta != nil && in.Operator != q.Meta.Name {
				what = in.Operator + " (in " + what + ")"
			}
			line = fmt.Sprintf("%d. %s %s instance %s", n, q.Kind, what, in.Name)
		}
		if in.Parent != "" {
			line += " (dependency of " + in.Parent + ")"
		}
		_, err := fmt.Fprintln(w, line)
		return err
	}
	for _, p := range plan {
		// A Planner's packages are printed as the instances it names
		// (planner.go); those installed as another's dependency with it.
		if pl, ok := p.rules.(Planner); ok {
			insts, err := pl.PlanInstances(g, p.ID)
			if err != nil {
				return err
			}
			for _, in := range insts {
				if err := printInstance(in); err != nil {
					return err
				}
			}
			continue
		}
		n++
		fmt.Fprintf(w, "%d. %s %s\n", n, p.Kind, p.Pinned())
	}
	// The inputs' own packages last (InputPlanner): what the graph
	// plans, their images, comes first, and the graph's packages they
	// install are planned with them (PlanInstances skips those).
	for _, ip := range g.inputPlanners {
		insts, err := ip.PlanInputs(g)
		if err != nil {
			return err
		}
		for _, in := range insts {
			if err := printInstance(in); err != nil {
				return err
			}
		}
	}
	return nil
}
