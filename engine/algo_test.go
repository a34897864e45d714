package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// algoGraph is the graph the table tests of planTasks and applyWrites run
// on: nodes declared zeta, alpha, mid (so declaration and name order
// differ), a deferred fin after a join of all three, and three channels.
func algoGraph(t *testing.T) *Graph {
	t.Helper()
	log := List[string]("log")
	key := LastValue[string]("key")
	eph := Ephemeral[string]("eph")
	nop := func(context.Context, State) (Output, error) { return nil, nil }
	g, err := NewGraph("algo", log, key, eph).
		AddNode("zeta", nop).AddNode("alpha", nop).AddNode("mid", nop).
		AddNode("fin", nop, Defer()).
		AddEdge(START, "zeta").AddEdge(START, "alpha").AddEdge(START, "mid").
		AddJoin([]string{"zeta", "alpha", "mid"}, "fin").
		AddConditionalEdges("mid", func(context.Context, State) (Route, error) { return Route{}, nil }, SendsTo("alpha")).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// freshState is g's channels as a run starts them.
func freshState(g *Graph) *chanState {
	st := &chanState{ch: make([]channel, len(g.specs)), ver: make([]int64, len(g.specs)), seen: newSeen(g)}
	for i, s := range g.specs {
		st.ch[i] = s.newCh()
	}
	return st
}

// set writes v to channel name as a step would, with version ver.
func (st *chanState) set(t *testing.T, g *Graph, name string, v any, ver int64) {
	t.Helper()
	i := g.chanIdx[name]
	if _, err := st.ch[i].update([]any{v}); err != nil {
		t.Fatal(err)
	}
	st.ver[i] = ver
}

func taskList(tasks []*task) []string {
	var out []string
	for _, t := range tasks {
		if t.push {
			out = append(out, fmt.Sprintf("push%d:%s", t.idx, t.name))
		} else {
			out = append(out, t.name)
		}
	}
	return out
}

func TestPlanTasks(t *testing.T) {
	g := algoGraph(t)
	const v1 = 1 << versionShift
	cases := []struct {
		name    string
		prepare func(t *testing.T, st *chanState)
		updated []string // nil: unknown
		want    []string
		err     string
	}{
		{"nothing written", func(*testing.T, *chanState) {}, nil, nil, ""},
		{"the start channel triggers START", func(t *testing.T, st *chanState) {
			st.set(t, g, START, Values{}, v1)
		}, nil, []string{START}, ""},
		{"unknown changes: every node, in declaration order", func(t *testing.T, st *chanState) {
			for _, n := range []string{"mid", "zeta", "alpha"} {
				st.set(t, g, "branch:to:"+n, nil, v1)
			}
		}, nil, []string{"zeta", "alpha", "mid"}, ""},
		{"known changes: the nodes they trigger, by name", func(t *testing.T, st *chanState) {
			for _, n := range []string{"mid", "zeta", "alpha"} {
				st.set(t, g, "branch:to:"+n, nil, v1)
			}
		}, []string{"branch:to:zeta", "branch:to:mid"}, []string{"mid", "zeta"}, ""},
		{"a version the node has seen does not trigger it", func(t *testing.T, st *chanState) {
			st.set(t, g, "branch:to:alpha", nil, v1)
			st.set(t, g, "branch:to:mid", nil, v1)
			st.seen.ensure("alpha")[g.chanIdx["branch:to:alpha"]] = v1
		}, nil, []string{"mid"}, ""},
		{"Sends come first, in Send order", func(t *testing.T, st *chanState) {
			st.set(t, g, "branch:to:zeta", nil, v1)
			i := g.chanIdx["__pregel_tasks"]
			if _, err := st.ch[i].update([]any{Send{Node: "mid"}, Send{Node: "alpha"}}); err != nil {
				t.Fatal(err)
			}
			st.ver[i] = v1
		}, nil, []string{"push0:mid", "push1:alpha", "zeta"}, ""},
		{"a Send to an unknown node", func(t *testing.T, st *chanState) {
			i := g.chanIdx["__pregel_tasks"]
			if _, err := st.ch[i].update([]any{Send{Node: "nowhere"}}); err != nil {
				t.Fatal(err)
			}
		}, nil, nil, `Send to unknown node "nowhere"`},
		{"an unfinished join does not trigger", func(t *testing.T, st *chanState) {
			i := g.chanIdx["join:alpha+mid+zeta:fin"]
			if _, err := st.ch[i].update([]any{"alpha", "mid"}); err != nil {
				t.Fatal(err)
			}
			st.ver[i] = v1
		}, nil, nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := freshState(g)
			c.prepare(t, st)
			var updated []int
			if c.updated != nil {
				updated = []int{}
				for _, n := range c.updated {
					updated = append(updated, g.chanIdx[n])
				}
			}
			var pool taskPool
			tasks, err := planTasks(g, st, updated, stepIDs{needed: true, cpID: "cp", step: 1}, &pool, &algoBufs{})
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := taskList(tasks); !slices.Equal(got, c.want) {
				t.Errorf("tasks %v, want %v", got, c.want)
			}
			for _, tk := range tasks {
				if len(tk.id) != 36 {
					t.Errorf("task %s has id %q", tk.name, tk.id)
				}
			}
		})
	}
	// Ids depend on the step's checkpoint, step and path, not on order.
	st := freshState(g)
	st.set(t, g, "branch:to:zeta", nil, v1)
	id := func(ids stepIDs) string {
		tasks, err := planTasks(g, st, nil, ids, &taskPool{}, &algoBufs{})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("%v, %v", tasks, err)
		}
		return tasks[0].id
	}
	base := stepIDs{needed: true, cpID: "cp", step: 1}
	if first, again := id(base), id(base); first != again || id(base) == id(stepIDs{needed: true, cpID: "cp2", step: 1}) || id(base) == id(stepIDs{needed: true, cpID: "cp", step: 2}) {
		t.Error("task ids must be stable for a step and differ across checkpoints and steps")
	}
	if id(stepIDs{}) != "" {
		t.Error("tasks get ids only when needed")
	}
}

func TestApplyWritesTable(t *testing.T) {
	g := algoGraph(t)
	const v1 = 1 << versionShift
	pull := func(name string, writes ...cwrite) *task {
		n := g.nodes[g.nodeIdx[name]]
		return &task{name: name, node: n, triggers: n.triggers, path: n.pullPath, writes: writes}
	}
	push := func(idx int, name string, writes ...cwrite) *task {
		return &task{name: name, node: g.nodes[g.nodeIdx[name]], push: true, idx: idx, writes: writes}
	}
	w := func(ch string, v any) cwrite { return cwrite{g.chanIdx[ch], v} }
	get := func(st *chanState, ch string) any { v, _ := st.ch[g.chanIdx[ch]].get(); return v }
	cases := []struct {
		name  string
		setup func(t *testing.T, st *chanState)
		tasks func() []*task
		check func(t *testing.T, st *chanState, updated []string)
		err   string
	}{
		{"writes apply in path order: pulls by name, then pushes by index", nil, func() []*task {
			return []*task{push(1, "alpha", w("log", []string{"p1"})), pull("zeta", w("log", []string{"zeta"})),
				push(0, "alpha", w("log", []string{"p0"})), pull("alpha", w("log", []string{"alpha"}), w("log", []string{"alpha2"}))}
		}, func(t *testing.T, st *chanState, _ []string) {
			if got := fmt.Sprint(get(st, "log")); got != "[alpha alpha2 zeta p0 p1]" {
				t.Errorf("log = %s", got)
			}
		}, ""},
		{"every channel bumped by one apply gets one new version", func(t *testing.T, st *chanState) {
			st.set(t, g, "branch:to:zeta", nil, v1)
		}, func() []*task { return []*task{pull("zeta", w("key", "k"), w("log", []string{"x"}))} },
			func(t *testing.T, st *chanState, updated []string) {
				k, l := st.ver[g.chanIdx["key"]], st.ver[g.chanIdx["log"]]
				if k != l || VersionStep(k) != 2 {
					t.Errorf("versions key %x log %x, want one version of step 2", k, l)
				}
				if !slices.Equal(updated, []string{"log", "key"}) {
					t.Errorf("updated %v", updated)
				}
			}, ""},
		{"triggers are marked seen and consumed", func(t *testing.T, st *chanState) {
			st.set(t, g, "branch:to:zeta", nil, v1)
		}, func() []*task { return []*task{pull("zeta")} },
			func(t *testing.T, st *chanState, _ []string) {
				i := g.chanIdx["branch:to:zeta"]
				if st.seen.get("zeta")[i] != v1 {
					t.Errorf("zeta saw %x, want %x", st.seen.get("zeta")[i], v1)
				}
				if st.ch[i].available() {
					t.Error("the step cleared zeta's ephemeral trigger")
				}
			}, ""},
		{"a step clears ephemeral values nobody wrote", func(t *testing.T, st *chanState) {
			st.set(t, g, "eph", "e", v1)
		}, func() []*task { return []*task{pull("zeta")} },
			func(t *testing.T, st *chanState, _ []string) {
				if st.ch[g.chanIdx["eph"]].available() {
					t.Error("eph survived a step")
				}
			}, ""},
		{"writes without triggers (a Command's) do not make a step", func(t *testing.T, st *chanState) {
			st.set(t, g, "eph", "e", v1)
		}, func() []*task { return []*task{{name: "__null__", writes: []cwrite{w("key", "k")}}} },
			func(t *testing.T, st *chanState, updated []string) {
				if get(st, "eph") != "e" || get(st, "key") != "k" || !slices.Equal(updated, []string{"key"}) {
					t.Errorf("eph %v key %v updated %v", get(st, "eph"), get(st, "key"), updated)
				}
			}, ""},
		{"when nothing triggers a node, channels finish: a deferred node's join opens", func(t *testing.T, st *chanState) {
			i := g.chanIdx["join:alpha+mid+zeta:fin"]
			if _, err := st.ch[i].update([]any{"alpha", "mid"}); err != nil {
				t.Fatal(err)
			}
			st.ver[i] = v1
		}, func() []*task { return []*task{pull("zeta", w("join:alpha+mid+zeta:fin", "zeta"))} },
			func(t *testing.T, st *chanState, updated []string) {
				if !st.ch[g.chanIdx["join:alpha+mid+zeta:fin"]].available() || !slices.Contains(updated, "join:alpha+mid+zeta:fin") {
					t.Errorf("the join did not open: updated %v", updated)
				}
			}, ""},
		{"two values for a LastValue", nil, func() []*task {
			return []*task{pull("alpha", w("key", "a")), pull("zeta", w("key", "z"))}
		}, nil, "At key 'key'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := freshState(g)
			if c.setup != nil {
				c.setup(t, st)
			}
			before := slices.Clone(st.ver)
			updated, err := applyWrites(g, st, c.tasks(), &algoBufs{})
			if c.err != "" {
				var iu *InvalidUpdateError
				if !errors.As(err, &iu) || iu.Key != "key" {
					t.Fatalf("err = %v, want an InvalidUpdateError at key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range st.ver {
				if v != before[i] && v <= slices.Max(before) {
					t.Errorf("channel %s: version %x not above every earlier one", g.specs[i].name, v)
				}
			}
			var names []string
			for _, i := range updated {
				names = append(names, g.specs[i].name)
			}
			c.check(t, st, names)
		})
	}
}
