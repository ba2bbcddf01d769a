package kudo

import (
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/resolve"
)

// Node is one operator package of a dependency graph, for Plan.
type Node struct {
	// Name is the operator's name (operator.yaml name).
	Name string
	// Children are the operators its KudoOperator tasks install, in
	// the deploy plan's order.
	Children []Child
}

// Child is one KudoOperator task of a Node.
type Child struct {
	// Key is the child's key in the Graph.
	Key string
	// Task is the task's name.
	Task string
	// InstanceName is the task's spec.instanceName, if any.
	InstanceName string
	// ParameterFile is the task's spec.parameterFile, if any.
	ParameterFile string
}

// Graph maps a package key (its source and version, say) to its node.
type Graph map[string]*Node

// Step is one instance of the install plan.
type Step struct {
	// Key is the package's key in the Graph.
	Key string
	// Operator is the operator's name.
	Operator string
	// Instance is the instance's name in KEP-29's hierarchy (aa.bb.ee).
	Instance string
	// Cluster is the name KUDO's server gives the Instance object it
	// creates (ClusterInstanceName): the top-level instance's name, a
	// dependency's task instanceName, else PARENT-OPERATOR.
	Cluster string
	// Parent is the instance whose task creates this one; empty for the
	// top-level instance.
	Parent string
	// Task and ParameterFile are the parent's task creating it.
	Task          string
	ParameterFile string
}

// Plan returns the install order of the operator root of g and its
// dependencies, with their instance names: KEP-29's topological order
// (keps/0029-operator-dependencies.md "Server-Side": a depth-first walk
// of the deploy plans' operator-tasks, each dependency before the
// operator needing it; for AA needing BB and CC, BB needing EE and GG:
// EE, GG, BB, CC, AA), and its hierarchical instance names (the same
// section: "Instance-EE would be named aa.bb.ee"): the parent's instance
// name, ".", and the task's instanceName or else the operator's name.
// instance is the top-level instance's name (empty: the root operator's
// name). One package reached twice is two instances (the KEP's non-goal
// of sharing an instance). A cycle is an error printing it
// ("aa -> bb -> aa"). Two instances of the plan with one name, in the
// KEP's hierarchy or as KUDO's server names them (Step.Cluster), are an
// error naming both tasks (see CheckUnique).
func Plan(g Graph, root, instance string) ([]Step, error) {
	steps, err := plan(g, root, instance)
	if err != nil {
		return nil, err
	}
	if err := CheckUnique(steps); err != nil {
		return nil, err
	}
	return steps, nil
}

// ClusterInstanceName is the name KUDO's server gives the Instance a
// KudoOperator task creates (kudobuilder/kudo
// pkg/engine/task/task_kudo_operator.go, dependencyInstanceName): the
// task's instanceName as written, else "PARENT-OPERATOR", PARENT being
// the creating instance's own name in the cluster.
func ClusterInstanceName(parent, instanceName, operator string) string {
	if instanceName != "" {
		return instanceName
	}
	return parent + "-" + operator
}

// CheckUnique fails when two steps would be one instance: the same name
// in KEP-29's hierarchy, or the same name in the cluster. KUDO's server
// applies a task's Instance by name, patching one that exists
// (pkg/engine/task/task_kudo_operator.go, applyInstance), so two tasks
// naming one instance would silently become one instance with the last
// task's parameters; the KEP leaves distinct names to the operator
// developer ("an operator developer would have to give both instances
// distinct spec.instanceNames in order for them not to collide"). The
// error, marked errkind.BadInput, names both tasks and their operators.
func CheckUnique(steps []Step) error {
	what := func(s Step) string {
		if s.Parent == "" {
			return fmt.Sprintf("the top-level instance of %s", s.Operator)
		}
		if s.Task == "" {
			return fmt.Sprintf("%s (instance %s)", s.Operator, s.Instance)
		}
		return fmt.Sprintf("task %q of instance %s (operator %s)", s.Task, s.Parent, s.Operator)
	}
	byInstance := map[string]Step{}
	byCluster := map[string]Step{}
	for _, s := range steps {
		if prev, ok := byInstance[s.Instance]; ok {
			return errkind.Markf(errkind.BadInput, "%s and %s would both be instance %s: give the tasks distinct spec.instanceName (KEP-29: two tasks installing one operator are two instances, which need distinct names)", what(prev), what(s), s.Instance)
		}
		byInstance[s.Instance] = s
		if s.Cluster == "" {
			continue
		}
		if prev, ok := byCluster[s.Cluster]; ok {
			return errkind.Markf(errkind.BadInput, "%s and %s would both create the Instance %q: KUDO names a task's instance by its spec.instanceName, else PARENT-OPERATOR, and applies one Instance for both; give the tasks distinct spec.instanceName", what(prev), what(s), s.Cluster)
		}
		byCluster[s.Cluster] = s
	}
	return nil
}

func plan(g Graph, root, instance string) ([]Step, error) {
	n, ok := g[root]
	if !ok {
		return nil, fmt.Errorf("plan: no operator %q in the graph", root)
	}
	if instance == "" {
		instance = n.Name
	}
	var out []Step
	var visit func(key string, step Step, path []string) error
	visit = func(key string, step Step, path []string) error {
		n, ok := g[key]
		if !ok {
			return fmt.Errorf("plan: %s: no operator %q in the graph", strings.Join(names(g, path), " -> "), key)
		}
		for i, k := range path {
			if k == key {
				return fmt.Errorf("cyclic operator dependency: %s", strings.Join(names(g, append(append([]string(nil), path[i:]...), key)), " -> "))
			}
		}
		path = append(path, key)
		for _, c := range n.Children {
			cn, ok := g[c.Key]
			if !ok {
				return fmt.Errorf("plan: %s: task %q names no operator in the graph (%q)", strings.Join(names(g, path), " -> "), c.Task, c.Key)
			}
			name := c.InstanceName
			if name == "" {
				name = cn.Name
			}
			child := Step{Key: c.Key, Operator: cn.Name, Instance: step.Instance + "." + name, Parent: step.Instance, Task: c.Task, ParameterFile: c.ParameterFile,
				Cluster: ClusterInstanceName(step.Cluster, c.InstanceName, cn.Name)}
			if err := visit(c.Key, child, path); err != nil {
				return err
			}
		}
		out = append(out, step)
		return nil
	}
	if err := visit(root, Step{Key: root, Operator: n.Name, Instance: instance, Cluster: instance}, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// names returns the operator names of keys.
func names(g Graph, keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		if n, ok := g[k]; ok {
			out[i] = n.Name
		} else {
			out[i] = k
		}
	}
	return out
}

// LocalGraph returns the graph of a package read with its folder
// dependencies (o, as Read and ReadInput return it): each operator keyed
// by its position in the tree ("kafka", "kafka/zookeeper-operator").
// Tasks naming a repository package or a tarball URL become leaves keyed
// by their reference, named by their reference's last element; the
// caller replaces them with the resolved packages' own graphs.
func LocalGraph(o *Operator) (Graph, string) {
	g := Graph{}
	var add func(o *Operator, key string)
	add = func(o *Operator, key string) {
		n := &Node{Name: o.Name}
		g[key] = n
		for _, t := range o.Tasks {
			c := Child{Task: t.Task, InstanceName: t.InstanceName, ParameterFile: t.ParameterFile}
			if t.Local != nil {
				c.Key = key + "/" + t.Task
				add(t.Local, c.Key)
			} else {
				c.Key = t.Ref
				if _, ok := g[t.Ref]; !ok {
					g[t.Ref] = &Node{Name: refName(t.Ref)}
				}
			}
			n.Children = append(n.Children, c)
		}
	}
	add(o, o.Name)
	return g, o.Name
}

// refName is the operator name a package reference names: its last path
// element without tag (and, for a tarball, without version).
func refName(ref string) string {
	_, name, tarball, ok := SplitSource(strings.SplitN(ref, "@", 2)[0])
	if !ok {
		return ref
	}
	if tarball {
		return tarballName(name)
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	return name
}

// ResolvedGraph returns the Plan graph of the KUDO operators of a
// resolved closure: one node per operator package (keyed by its package
// ID), its folder dependencies nested below it ("ID/TASK"), and each
// task's child the package its dependency edge resolved to.
func ResolvedGraph(g *resolve.Graph) (Graph, error) {
	out := Graph{}
	for id, p := range g.Packages {
		if p.Kind != format.KindKudoOperator || p.Meta == nil {
			continue
		}
		op, ok := p.Meta.Data.(*Operator)
		if !ok {
			return nil, fmt.Errorf("%s: no KUDO operator data", p.Label())
		}
		edges := map[string]string{}
		for _, e := range p.Dependencies {
			edges[e.Name] = e.Target
		}
		var add func(o *Operator, key, prefix string) error
		add = func(o *Operator, key, prefix string) error {
			n := &Node{Name: o.Name}
			out[key] = n
			for _, t := range o.Tasks {
				c := Child{Task: t.Task, InstanceName: t.InstanceName, ParameterFile: t.ParameterFile}
				if t.Local != nil {
					c.Key = key + "/" + t.Task
					if err := add(t.Local, c.Key, prefix+t.Task+"."); err != nil {
						return err
					}
				} else {
					target, ok := edges[prefix+t.Task]
					if !ok {
						return fmt.Errorf("%s: task %q was not resolved", p.Label(), prefix+t.Task)
					}
					c.Key = target
				}
				n.Children = append(n.Children, c)
			}
			return nil
		}
		if err := add(op, id, ""); err != nil {
			return nil, err
		}
	}
	return out, nil
}

var _ resolve.Planner = Format{}

// PlanInstances is `ferry resolve -o plan` for a KUDO package: Plan over
// the resolved closure, the package's instance named after the operator.
// A package only some KUDO operator's task installs, or a local package
// of the inputs' (PlanInputs), has no instances of its own: they are its
// parents'. Steps of a folder dependency name the
// package carrying it.
func (f Format) PlanInstances(g *resolve.Graph, id string) ([]resolve.Instance, error) {
	if !TopLevel(g, id) {
		return nil, nil
	}
	pg, err := ResolvedGraph(g)
	if err != nil {
		return nil, err
	}
	local, err := f.localSection(g)
	if err != nil {
		return nil, err
	}
	if _, claimed, err := addLocal(g, pg, local); err != nil {
		return nil, err
	} else if claimed[id] {
		// A local package's task installs it: PlanInputs plans it.
		return nil, nil
	}
	steps, err := Plan(pg, id, "")
	if err != nil {
		return nil, err
	}
	out := make([]resolve.Instance, 0, len(steps))
	for _, s := range steps {
		out = append(out, resolve.Instance{ID: carrier(g, s.Key), Operator: s.Operator, Name: s.Instance, Parent: s.Parent})
	}
	return out, nil
}

// TopLevel reports whether the KUDO package id of g is installed as a
// top-level instance: it is a root of g, or no KUDO operator's task
// installs it.
func TopLevel(g *resolve.Graph, id string) bool {
	for _, r := range g.Roots {
		if r == id {
			return true
		}
	}
	for _, p := range g.Packages {
		if p.Kind != format.KindKudoOperator {
			continue
		}
		for _, e := range p.Dependencies {
			if e.Target != id {
				continue
			}
			if t := g.Packages[e.Target]; t != nil && t.Kind == format.KindKudoOperator {
				return false
			}
		}
	}
	return true
}

// carrier returns the package ID a Plan key belongs to: the key itself
// for a package, the package whose tarball holds it for a folder
// dependency ("ID/TASK/…").
func carrier(g *resolve.Graph, key string) string {
	for k := key; ; {
		if _, ok := g.Packages[k]; ok {
			return k
		}
		i := strings.LastIndexByte(k, '/')
		if i < 0 {
			return key
		}
		k = k[:i]
	}
}

var _ resolve.InputPlanner = Format{}

// PlanInputs is `ferry resolve -o plan` for the local packages of the
// inputs (a folder or .tgz ROOT, or in ferry.yaml's operators:), which
// are not packages of the graph: each planned as ferry install plans it
// (buildInstallPlan, from what RecordLock would lock), its instance, its
// folder dependencies' and those of the packages its tasks install, in
// KEP-29's order (Plan).
func (f Format) PlanInputs(g *resolve.Graph) ([]resolve.Instance, error) {
	local, err := f.localSection(g)
	if err != nil || len(local) == 0 {
		return nil, err
	}
	pg, err := ResolvedGraph(g)
	if err != nil {
		return nil, err
	}
	locals, _, err := addLocal(g, pg, local)
	if err != nil {
		return nil, err
	}
	var out []resolve.Instance
	for i := range local {
		steps, err := Plan(pg, localKey(i), local[i].Instance)
		if err != nil {
			return nil, err
		}
		for _, s := range steps {
			in := resolve.Instance{Operator: s.Operator, Name: s.Instance, Parent: s.Parent}
			if lo := locals[s.Key]; lo != nil {
				in.Local, in.Kind, in.Version = lo.Package, format.KindKudoOperator, versionTag(lo.AppVersion, lo.OperatorVersion)
			} else {
				in.ID = carrier(g, s.Key)
			}
			out = append(out, in)
		}
	}
	return out, nil
}
