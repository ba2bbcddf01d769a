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
}
