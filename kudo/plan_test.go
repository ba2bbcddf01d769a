package kudo

import (
	"slices"
	"strings"
	"testing"
)

// kepTree is KEP-29's example (keps/0029-operator-dependencies.md
// "Server-Side"): AA needs BB and CC; BB needs EE and GG.
func kepTree() Graph {
	return Graph{
		"aa": {Name: "aa", Children: []Child{{Key: "bb", Task: "bb"}, {Key: "cc", Task: "cc"}}},
		"bb": {Name: "bb", Children: []Child{{Key: "ee", Task: "ee"}, {Key: "gg", Task: "gg"}}},
		"cc": {Name: "cc"},
		"ee": {Name: "ee"},
		"gg": {Name: "gg"},
	}
}

func TestPlan(t *testing.T) {
	named := kepTree()
	named["bb"].Children[1].InstanceName = "my-gg"
	shared := kepTree()
	// CC installs EE's package too: two instances.
	shared["cc"].Children = []Child{{Key: "ee", Task: "ee"}}
	cyclic := kepTree()
	cyclic["bb"].Children = append(cyclic["bb"].Children, Child{Key: "aa", Task: "back"})
	self := Graph{"aa": {Name: "aa", Children: []Child{{Key: "aa", Task: "me"}}}}
	for _, tc := range []struct {
		name      string
		g         Graph
		instance  string
		operators []string
		instances []string
		err       string
	}{
		{name: "KEP tree", g: kepTree(), operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc", "aa"}},
		{name: "top-level instance name", g: kepTree(), instance: "prod", operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"prod.bb.ee", "prod.bb.gg", "prod.bb", "prod.cc", "prod"}},
		{name: "task instanceName", g: named, operators: []string{"ee", "gg", "bb", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.my-gg", "aa.bb", "aa.cc", "aa"}},
		{name: "one package twice", g: shared, operators: []string{"ee", "gg", "bb", "ee", "cc", "aa"}, instances: []string{"aa.bb.ee", "aa.bb.gg", "aa.bb", "aa.cc.ee", "aa.cc", "aa"}},
		{name: "cycle", g: cyclic, err: "cyclic operator dependency: aa -> bb -> aa"},
		{name: "self", g: self, err: "cyclic operator dependency: aa -> aa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps, err := Plan(tc.g, "aa", tc.instance)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ops, insts []string
			for _, s := range steps {
				ops = append(ops, s.Operator)
				insts = append(insts, s.Instance)
			}
			if !slices.Equal(ops, tc.operators) || !slices.Equal(insts, tc.instances) {
				t.Fatalf("plan = %v %v\nwant %v %v", ops, insts, tc.operators, tc.instances)
			}
			if last := steps[len(steps)-1]; last.Parent != "" {
				t.Fatalf("top-level step has parent %q", last.Parent)
			}
		})
	}
}
