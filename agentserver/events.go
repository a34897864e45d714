package agentserver

import (
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/weftstudio/weft/engine"
)

// chainEvents makes the events stream mode: LangChain's stream events
// (on_chain_start, on_chain_end) for the run's graph ("LangGraph"), each
// node a task runs and each subgraph, as LangGraph's server sends them,
// from the engine's task events. A task that stops at an interrupt, or
// fails, has no on_chain_end, as there. Chat models' own events
// (on_chat_model_stream …) are not made: the engine reports a model's
// tokens as messages, not as runs of their own.
type chainEvents struct {
	runID string
	meta  map[string]any // the run's metadata, on every event
	// started maps a running task (by id) to its chain: its run id, name,
	// metadata and input; sub maps a subgraph's namespace to the chain of
	// its graph, started at its first event.
	started map[string]*chain
	sub     map[string]*chain
}

type chain struct {
	runID, name string
	tags        []string
	meta        map[string]any
	input       any
	outputs     any // a subgraph's last values
}

func newChainEvents(runID string, meta map[string]any) *chainEvents {
	return &chainEvents{runID: runID, meta: meta, started: map[string]*chain{}, sub: map[string]*chain{}}
}

func (c *chain) event(kind string, data map[string]any) map[string]any {
	return map[string]any{"event": kind, "name": c.name, "run_id": c.runID, "tags": c.tags, "metadata": c.meta, "data": data}
}

// start is the graph's on_chain_start with the run's input as the request
// gave it.
func (ce *chainEvents) start(input any, emit func(string, any)) {
	root := &chain{runID: ce.runID, name: "LangGraph", tags: []string{}, meta: ce.meta, input: input}
	emit("events", root.event("on_chain_start", map[string]any{"input": input}))
}

// end is the graph's on_chain_end with its state as the run left it.
func (ce *chainEvents) end(values any, emit func(string, any)) {
	root := &chain{runID: ce.runID, name: "LangGraph", tags: []string{}, meta: ce.meta}
	emit("events", root.event("on_chain_end", map[string]any{"output": values}))
}

// handle turns one engine event into stream events: a task's start and
// result, and a subgraph's start (its first event) and end (the end of
// the task that ran it, its output the subgraph's last values).
func (ce *chainEvents) handle(ev engine.Event, emit func(string, any)) {
	if ev.NS != "" && ce.sub[ev.NS] == nil {
		if parent := ce.started[taskOfNS(ev.NS)]; parent != nil {
			sg := &chain{runID: uuid.NewString(), name: "LangGraph", tags: []string{}, meta: parent.meta, input: parent.input}
			ce.sub[ev.NS] = sg
			emit("events", sg.event("on_chain_start", map[string]any{"input": sg.input}))
		}
	}
	switch {
	case ev.Mode == engine.ModeValues && ev.NS != "" && ev.Values != nil:
		if sg := ce.sub[ev.NS]; sg != nil {
			sg.outputs = wireValues(ev.Values)
		}
	case ev.Mode == engine.ModeTasks && !ev.Task.Done:
		t := ev.Task
		ns := t.Name + ":" + t.ID
		if ev.NS != "" {
			ns = ev.NS + "|" + ns
		}
		meta := make(map[string]any, len(ce.meta)+6)
		for k, v := range ce.meta {
			meta[k] = v
		}
		triggers := t.Triggers
		if triggers == nil {
			triggers = []string{}
		}
		meta["langgraph_step"], meta["langgraph_node"], meta["langgraph_triggers"] = ev.Step, t.Name, triggers
		meta["langgraph_path"], meta["langgraph_checkpoint_ns"], meta["checkpoint_ns"] = taskPath(t.Path), ns, ns
		var input any = t.Input
		if v, ok := t.Input.(engine.Values); ok {
			input = wireValues(v)
		}
		c := &chain{runID: uuid.NewString(), name: t.Name, tags: []string{"graph:step:" + strconv.Itoa(ev.Step)}, meta: meta, input: input}
		ce.started[t.ID] = c
		emit("events", c.event("on_chain_start", map[string]any{"input": input}))
	case ev.Mode == engine.ModeTasks:
		t := ev.Task
		c := ce.started[t.ID]
		delete(ce.started, t.ID)
		if c == nil || t.Error != "" || len(t.Interrupts) > 0 {
			return
		}
		w := wireWrites(t.Result)
		if w == nil {
			w = map[string]any{}
		}
		var output any = w
		// A subgraph's task: its graph ends first, and both answer the
		// subgraph's state, as LangGraph's subgraph returns it.
		for ns, sg := range ce.sub {
			if taskOfNS(ns) != t.ID {
				continue
			}
			if sg.outputs != nil {
				output = sg.outputs
			}
			emit("events", sg.event("on_chain_end", map[string]any{"output": output, "input": sg.input}))
			delete(ce.sub, ns)
		}
		emit("events", c.event("on_chain_end", map[string]any{"output": output, "input": c.input}))
	}
}

// taskOfNS is the id of the task that runs the subgraph of namespace ns
// ("research:<task id>", the last segment of a nested one).
func taskOfNS(ns string) string {
	last := ns[strings.LastIndex(ns, "|")+1:]
	return last[strings.Index(last, ":")+1:]
}
