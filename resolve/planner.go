package resolve

// Planner is a format (the Rules of the packages it read) that installs
// its packages as instances it orders and names itself, rather than once
// each in Graph.Plan's order: KUDO, where every KudoOperator task creates
// an instance of its own, named after its parent's (KEP-29). `ferry
// resolve -o plan` prints a Planner's instances in place of its packages.
type Planner interface {
	Rules
	// PlanInstances returns, in install order, the instances that
	// installing the package id of g creates: its dependencies of the
	// format's own kind and itself last. It returns none when id is only
	// installed as such a dependency of another package of g (its
	// instances are that package's).
	PlanInstances(g *Graph, id string) ([]Instance, error)
}

// Instance is one installed instance of a Planner's plan.
type Instance struct {
	// ID is the package's ID in the graph; for a package carried inside
	// another (a KUDO folder dependency), the carrying package's.
	ID string
	// Operator is the name of what is installed; it differs from the
	// package's own name for a package carried inside another.
	Operator string
	// Name is the instance's name.
	Name string
	// Parent is the name of the instance that creates this one; empty
	// for a top-level instance.
	Parent string
	// Local is set, and ID empty, for an instance of a package of the
	// inputs that is not in the graph (an InputPlanner's local package):
	// the package as the inputs name it. Kind and Version are then its
	// kind and version.
	Local   string
	Kind    string
	Version string
}

// InputPlanner is a Planner whose inputs can name packages that are not
// packages of the graph, not being published (KUDO's local operator
// folders and tarballs), whose instances the graph's packages are
// dependencies of. Resolve keeps the formats of its options that are
// InputPlanners with the graph, and `ferry resolve -o plan` prints their
// instances after the graph's plan, in the inputs' order, as the install
// plans them.
type InputPlanner interface {
	Planner
	// PlanInputs returns, in install order, the instances that
	// installing the inputs' own packages creates (theirs and those of
	// g's packages their tasks install). PlanInstances returns none for
	// a package of g these install.
	PlanInputs(g *Graph) ([]Instance, error)
}
