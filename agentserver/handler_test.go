package agentserver_test

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// approvalGraph is the reference transcript's graph: plan → research (a
// subgraph: gather → pick, which asks) → review (asks) → finalize.
func approvalGraph(t testing.TB, opts ...engine.CompileOption) *engine.Graph {
	t.Helper()
	topic := engine.LastValue[string]("topic")
	notes := engine.List[string]("notes")
	chosen := engine.LastValue[string]("chosen")
	log := engine.List[string]("log")
	sub, err := engine.NewGraph("research", topic, notes, chosen).
		AddNode("gather", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(notes.Add("fact A about "+topic.Get(s), "fact B about "+topic.Get(s))), nil
		}).
		AddNode("pick", func(ctx context.Context, s engine.State) (engine.Output, error) {
			ans, err := engine.Interrupt(ctx, map[string]any{"question": "Which note should we keep?"})
			if err != nil {
				return nil, err
			}
			return engine.Updates(chosen.Set(fmt.Sprint(ans))), nil
		}).
		AddEdge(engine.START, "gather").AddEdge("gather", "pick").AddEdge("pick", engine.END).Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	g, err := engine.NewGraph("approval", topic, notes, chosen, log).
		AddNode("plan", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(log.Add("plan:" + topic.Get(s))), nil
		}).
		AddSubgraph("research", sub).
		AddNode("review", func(ctx context.Context, s engine.State) (engine.Output, error) {
			ans, err := engine.Interrupt(ctx, map[string]any{"question": "Approve this draft?"})
			if err != nil {
				return nil, err
			}
			return engine.Updates(log.Add(fmt.Sprint("review:", ans))), nil
		}).
		AddNode("finalize", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(log.Add("published")), nil
		}).
		AddEdge(engine.START, "plan").AddEdge("plan", "research").AddEdge("research", "review").
		AddEdge("review", "finalize").AddEdge("finalize", engine.END).Compile(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// newApproval serves the demo graphs and the approval graph compiled with
// opts (none: Python LangGraph's reference).
func newApproval(t *testing.T, opts ...engine.CompileOption) *server {
	t.Helper()
	saver := memory.New()
	graphs := demoGraphs(t)
	graphs["approval"] = approvalGraph(t, opts...)
	h, err := agentserver.New(graphs, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &server{t: t, srv: srv, saver: saver}
}

func ids(v any, key string) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, str(x, key))
	}
	return out
}

func TestDiscovery(t *testing.T) {
	s := newApproval(t)
	if code, v := s.call("GET", "/ok", ""); code != 200 || get(v, "ok") != true {
		t.Errorf("/ok: %d %v", code, v)
	}
	if code, v := s.call("GET", "/info", ""); code != 200 || get(v, "flags", "assistants") != true || get(v, "flags", "crons") != false {
		t.Errorf("/info: %d %v", code, v)
	}
	code, v := s.call("POST", "/assistants/search", `{"limit": 10}`)
	if got := ids(v, "graph_id"); code != 200 || !slices.Equal(got, []string{"approval", "map-reduce", "tool-agent", "writing-assistant"}) {
		t.Errorf("assistants/search: %d %v", code, got)
	}
	if code, v := s.call("POST", "/assistants/search", `{"graph_id": "approval"}`); code != 200 || len(v.([]any)) != 1 {
		t.Errorf("assistants/search by graph_id: %d %v", code, v)
	}
	if code, v := s.call("POST", "/assistants/count", `{}`); code != 200 || v != 4.0 {
		t.Errorf("assistants/count: %d %v", code, v)
	}
	if code, v := s.call("GET", "/assistants/writing-assistant", ""); code != 200 || str(v, "assistant_id") != "writing-assistant" || str(v, "graph_id") != "writing-assistant" {
		t.Errorf("assistants/get: %d %v", code, v)
	}
	if code, v := s.call("GET", "/assistants/nope", ""); code != 404 || !strings.Contains(str(v, "detail"), "nope") {
		t.Errorf("unknown assistant: %d %v", code, v)
	}
	// The drawing: a subgraph node is one node, or inlined with x-ray.
	_, v = s.call("GET", "/assistants/approval/graph", "")
	if got := ids(get(v, "nodes"), "id"); !slices.Equal(got, []string{"__start__", "finalize", "plan", "research", "review", "__end__"}) {
		t.Errorf("graph nodes %v", got)
	}
	_, v = s.call("GET", "/assistants/approval/graph?xray=true", "")
	nodes := ids(get(v, "nodes"), "id")
	if !slices.Contains(nodes, "research:gather") || !slices.Contains(nodes, "research:pick") || slices.Contains(nodes, "research") {
		t.Errorf("x-ray nodes %v", nodes)
	}
	var edges []string
	for _, e := range get(v, "edges").([]any) {
		edges = append(edges, str(e, "source")+">"+str(e, "target"))
	}
	for _, want := range []string{"plan>research:gather", "research:gather>research:pick", "research:pick>review"} {
		if !slices.Contains(edges, want) {
			t.Errorf("x-ray edges %v lack %s", edges, want)
		}
	}
	_, v = s.call("GET", "/assistants/writing-assistant/graph", "")
	for _, e := range get(v, "edges").([]any) {
		if str(e, "source") == "review" && get(e, "conditional") != true {
			t.Errorf("review's edges are conditional: %v", e)
		}
	}
	code, v = s.call("GET", "/assistants/approval/schemas", "")
	if code != 200 || str(v, "state_schema", "properties", "topic", "type") != "string" || str(v, "state_schema", "properties", "notes", "type") != "array" {
		t.Errorf("schemas: %d %v", code, v)
	}
	for _, c := range []struct{ method, path string }{{"DELETE", "/assistants/approval"}, {"POST", "/runs/crons"}, {"POST", "/runs/batch"}} {
		if code, v := s.call(c.method, c.path, ""); code != 501 || !strings.Contains(str(v, "detail"), "not built") {
			t.Errorf("%s %s, not built: %d %v", c.method, c.path, code, v)
		}
	}
	if code, v := s.call("GET", "/nowhere", ""); code != 404 || !strings.Contains(str(v, "detail"), "not part of") {
		t.Errorf("an unknown path: %d %v", code, v)
	}
}

// newThread creates a thread with metadata and returns its id.
func (s *server) newThread(md string) string {
	s.t.Helper()
	code, v := s.call("POST", "/threads", `{"metadata": `+md+`}`)
	if code != 200 || str(v, "status") != "idle" {
		s.t.Fatalf("create thread: %d %v", code, v)
	}
	return str(v, "thread_id")
}

func TestThreads(t *testing.T) {
	s := newApproval(t)
	a := s.newThread(`{"owner": "ci"}`)
	b := s.newThread(`{"owner": "other"}`)
	if code, v := s.call("GET", "/threads/"+a, ""); code != 200 || get(v, "metadata", "owner") != "ci" {
		t.Errorf("get thread: %d %v", code, v)
	}
	if code, v := s.call("POST", "/threads", `{"thread_id": "`+a+`"}`); code != 409 {
		t.Errorf("creating an existing thread: %d %v", code, v)
	}
	// Run a to its first interrupt: its status and values change.
	if code, _ := s.call("POST", "/threads/"+a+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "otters"}}`); code != 200 {
		t.Fatalf("run: %d", code)
	}
	_, v := s.call("POST", "/threads/search", `{"metadata": {"owner": "ci"}}`)
	if got := ids(v, "thread_id"); !slices.Equal(got, []string{a}) || str(v, 0, "status") != "interrupted" {
		t.Errorf("search by metadata: %v", v)
	}
	_, v = s.call("POST", "/threads/search", `{"status": "idle", "select": ["thread_id", "status"]}`)
	if got := ids(v, "thread_id"); !slices.Equal(got, []string{b}) || len(v.([]any)[0].(map[string]any)) != 2 {
		t.Errorf("search by status with select: %v", v)
	}
	_, v = s.call("POST", "/threads/search", `{"values": {"topic": "otters"}}`)
	if got := ids(v, "thread_id"); !slices.Equal(got, []string{a}) {
		t.Errorf("search by values: %v", got)
	}
	if code, v := s.call("POST", "/threads/count", `{}`); code != 200 || v != 2.0 {
		t.Errorf("count: %d %v", code, v)
	}
	// A copy has the same state under a new id.
	code, v := s.call("POST", "/threads/"+a+"/copy", `{}`)
	c := str(v, "thread_id")
	if code != 200 || c == "" || c == a || str(v, "status") != "interrupted" || get(v, "values", "topic") != "otters" {
		t.Errorf("copy: %d %v", code, v)
	}
	if code, _ := s.call("DELETE", "/threads/"+b, ""); code != 204 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := s.call("GET", "/threads/"+b, ""); code != 404 {
		t.Errorf("a deleted thread: %d", code)
	}
	if code, v := s.call("GET", "/threads/00000000-0000-0000-0000-000000000000", ""); code != 404 || !strings.Contains(str(v, "detail"), "not found") {
		t.Errorf("unknown thread: %d %v", code, v)
	}
}

// TestInterruptsAndResume follows the transcript's approval run: the
// subgraph's interrupt in its namespace and at the root, the state's task,
// resume plain and by id.
func TestInterruptsAndResume(t *testing.T) {
	eachReference(t, testInterruptsAndResume)
}

// eachReference runs test with the approval graph compiled under Python
// LangGraph's reference (the default) and under LangGraph.js's, whose
// servers answer an interrupt in different shapes (engine doc, B1, B2).
func eachReference(t *testing.T, test func(t *testing.T, s *server, js bool)) {
	t.Run("python", func(t *testing.T) { test(t, newApproval(t), false) })
	t.Run("js", func(t *testing.T) { test(t, newApproval(t, engine.WithReference(engine.LangGraphJS)), true) })
}

func testInterruptsAndResume(t *testing.T, s *server, js bool) {
	tid := s.newThread(`{}`)
	code, evs, hd := s.stream("/threads/"+tid+"/runs/stream", `{"assistant_id": "approval", "input": {"topic": "otters"},
		"stream_mode": ["updates", "tasks", "checkpoints", "values"], "stream_subgraphs": true}`)
	if code != 200 || len(evs) == 0 || evs[0].Name != "metadata" || str(evs[0].Data, "run_id") == "" {
		t.Fatalf("stream: %d %v", code, evs)
	}
	if loc := hd.Get("Content-Location"); loc != "/threads/"+tid+"/runs/"+str(evs[0].Data, "run_id") {
		t.Errorf("Content-Location %q", loc)
	}
	var names []string
	var subInterrupt, rootInterrupt bool
	for _, ev := range evs {
		names = append(names, ev.Name)
		if get(ev.Data, "__interrupt__") != nil && strings.HasPrefix(ev.Name, "updates|research:") {
			subInterrupt = true
		}
		if ev.Name == "updates" && get(ev.Data, "__interrupt__", 0, "id") != nil {
			rootInterrupt = true
		}
	}
	if !subInterrupt || !rootInterrupt {
		t.Errorf("the interrupt in the subgraph's namespace %v and at the root %v: %v", subInterrupt, rootInterrupt, names)
	}
	for _, want := range []string{"tasks", "checkpoints", "values", "updates|research:"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("events %v lack %s", names, want)
		}
	}
	// The last values chunk at the interrupt: Python LangGraph's is the
	// state with "__interrupt__"; LangGraph.js's server sends
	// "__interrupt__" alone (the recorded exchange).
	var last *sseEvent
	for k := range evs {
		if evs[k].Name == "values" {
			last = &evs[k]
		}
	}
	if last == nil || get(last.Data, "__interrupt__", 0, "id") == nil {
		t.Fatalf("last values event %v: want __interrupt__", last)
	}
	if m := last.Data.(map[string]any); js && len(m) != 1 || !js && m["topic"] != "otters" {
		t.Errorf("last values event %v: want %s", m, map[bool]string{true: "only __interrupt__", false: "the state with __interrupt__"}[js])
	}
	_, st := s.call("GET", "/threads/"+tid+"/state", "")
	if !slices.Equal(anyStrings(get(st, "next")), []string{"research"}) || str(st, "tasks", 0, "interrupts", 0, "value", "question") != "Which note should we keep?" ||
		!strings.HasPrefix(str(st, "tasks", 0, "checkpoint", "checkpoint_ns"), "research:") {
		t.Errorf("state at the subgraph interrupt: %v", st)
	}
	// The subgraph's own state, inlined or read by its namespace.
	_, sub := s.call("GET", "/threads/"+tid+"/state?subgraphs=true", "")
	if !slices.Equal(anyStrings(get(sub, "tasks", 0, "state", "next")), []string{"pick"}) {
		t.Errorf("state?subgraphs=true: the research task's state %v", get(sub, "tasks", 0, "state"))
	}
	ns := str(st, "tasks", 0, "checkpoint", "checkpoint_ns")
	_, h := s.call("POST", "/threads/"+tid+"/history", `{"checkpoint": {"checkpoint_ns": "`+ns+`"}}`)
	if hs, _ := h.([]any); len(hs) == 0 || str(hs[0], "checkpoint", "checkpoint_ns") != ns || !slices.Equal(anyStrings(get(hs[0], "next")), []string{"pick"}) {
		t.Errorf("history of namespace %s: %v", ns, h)
	}
	// Resume plain: the next interrupt is review's.
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"resume": "fact A about otters"}}`)
	id := str(v, "__interrupt__", 0, "id")
	if code != 200 || str(v, "__interrupt__", 0, "value", "question") != "Approve this draft?" {
		t.Fatalf("resume 1: %d %v", code, v)
	}
	// runs/wait answers the run's outcome: Python's is the state with the
	// interrupts, as its invoke returns it; LangGraph.js's the interrupts.
	if _, ok := v.(map[string]any)["chosen"]; ok == js {
		t.Errorf("resume 1 (js %v): %v", js, v)
	}
	// Resume by interrupt id.
	code, v = s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"resume": {"`+id+`": "yes"}}}`)
	if code != 200 || !slices.Equal(anyStrings(get(v, "log")), []string{"plan:otters", "review:yes", "published"}) || get(v, "chosen") != "fact A about otters" {
		t.Errorf("resume by id: %d %v", code, v)
	}
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// TestHistoryAndTimeTravel: history newest first with limit, before and a
// metadata filter; a fork with update_state and a replay with
// checkpoint_id write new checkpoints beside the old.
func TestHistoryAndTimeTravel(t *testing.T) {
	s := newApproval(t)
	tid := s.newThread(`{}`)
	s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "owls"}}`)
	s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"resume": "fact A about owls"}}`)
	s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"resume": "yes"}}`)
	_, hist := s.call("POST", "/threads/"+tid+"/history", `{"limit": 50}`)
	var steps []string
	for _, h := range hist.([]any) {
		steps = append(steps, fmt.Sprint(get(h, "metadata", "step"), ":", str(h, "metadata", "source"), ":", strings.Join(anyStrings(get(h, "next")), ",")))
	}
	if want := []string{"4:loop:", "3:loop:finalize", "2:loop:review", "1:loop:research", "0:loop:plan", "-1:input:__start__"}; !slices.Equal(steps, want) {
		t.Errorf("history %v, want %v", steps, want)
	}
	_, st := s.call("GET", "/threads/"+tid+"/state", "")
	if str(hist, 0, "checkpoint", "checkpoint_id") != str(st, "checkpoint", "checkpoint_id") || str(hist, 0, "parent_checkpoint", "checkpoint_id") != str(hist, 1, "checkpoint", "checkpoint_id") {
		t.Errorf("history head %v, state %v", get(hist, 0, "checkpoint"), get(st, "checkpoint"))
	}
	review := str(hist, 2, "checkpoint", "checkpoint_id")
	_, page := s.call("POST", "/threads/"+tid+"/history", `{"limit": 2, "before": "`+review+`"}`)
	if len(page.([]any)) != 2 || str(page, 0, "checkpoint", "checkpoint_id") != str(hist, 3, "checkpoint", "checkpoint_id") {
		t.Errorf("history before %s: %v", review, page)
	}
	if _, g := s.call("GET", "/threads/"+tid+"/history?limit=1", ""); len(g.([]any)) != 1 {
		t.Errorf("GET history limit 1: %v", g)
	}
	_, f := s.call("POST", "/threads/"+tid+"/history", `{"metadata": {"source": "input"}}`)
	if len(f.([]any)) != 1 || str(f, 0, "metadata", "source") != "input" {
		t.Errorf("history filtered by source: %v", f)
	}
	if _, past := s.call("GET", "/threads/"+tid+"/state/"+review, ""); !slices.Equal(anyStrings(get(past, "next")), []string{"review"}) {
		t.Errorf("state at a past checkpoint: %v", past)
	}
	// Fork: rewrite the topic as plan at the checkpoint before research.
	research := str(hist, 3, "checkpoint", "checkpoint_id")
	code, up := s.call("POST", "/threads/"+tid+"/state", `{"values": {"topic": "owls-fork"}, "as_node": "plan", "checkpoint_id": "`+research+`"}`)
	fork := str(up, "checkpoint", "checkpoint_id")
	if code != 200 || fork == "" {
		t.Fatalf("update_state: %d %v", code, up)
	}
	_, fs := s.call("GET", "/threads/"+tid+"/state", "")
	if str(fs, "metadata", "source") != "update" || str(fs, "parent_checkpoint", "checkpoint_id") != research || get(fs, "values", "topic") != "owls-fork" {
		t.Errorf("the fork: %v", fs)
	}
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": null, "checkpoint_id": "`+fork+`"}`)
	if code != 200 || !strings.Contains(fmt.Sprint(get(v, "__interrupt__", 0, "value")), "Which note") {
		t.Errorf("run from the fork: %d %v", code, v)
	}
	// Replay: from the checkpoint before review, the run asks again.
	code, v = s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": null, "checkpoint_id": "`+review+`"}`)
	if code != 200 || str(v, "__interrupt__", 0, "value", "question") != "Approve this draft?" {
		t.Errorf("replay: %d %v", code, v)
	}
	_, rs := s.call("GET", "/threads/"+tid+"/state", "")
	if str(rs, "metadata", "source") != "fork" || !slices.Equal(anyStrings(get(rs, "next")), []string{"review"}) {
		t.Errorf("after the replay: source %q next %v", str(rs, "metadata", "source"), get(rs, "next"))
	}
}

// TestRunOptions: interrupt_before stops before a node; goto and update in
// a command; stateless runs leave no thread; messages-tuple streams the
// tool agent's messages.
func TestRunOptions(t *testing.T) {
	eachReference(t, testRunOptions)
}

func testRunOptions(t *testing.T, s *server, js bool) {
	// A static breakpoint (B1): LangGraph.js's server answers
	// {"__interrupt__": []} (the recorded exchange); Python LangGraph's
	// run returns its state and no values chunk reports the stop. Both
	// stream one updates chunk {"__interrupt__": []}.
	tid := s.newThread(`{}`)
	code, evs, _ := s.stream("/threads/"+tid+"/runs/stream", `{"assistant_id": "approval", "input": {"topic": "x"}, "interrupt_before": ["research"], "stream_mode": ["updates", "values"]}`)
	var stops []string
	for _, ev := range evs {
		if ints, ok := get(ev.Data, "__interrupt__").([]any); ok && len(ints) == 0 {
			stops = append(stops, ev.Name)
		}
	}
	if want := map[bool][]string{true: {"updates", "values"}, false: {"updates"}}[js]; code != 200 || !slices.Equal(stops, want) {
		t.Errorf("interrupt_before streamed: %d, chunks {\"__interrupt__\": []} in %v, want in %v", code, stops, want)
	}
	tid = s.newThread(`{}`)
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "x"}, "interrupt_before": ["research"]}`)
	if ints, ok := get(v, "__interrupt__").([]any); js && (code != 200 || !ok || len(ints) != 0 || len(v.(map[string]any)) != 1) {
		t.Fatalf("interrupt_before: %d %v, want {\"__interrupt__\": []} as LangGraph.js's server answers a breakpoint", code, v)
	}
	if !js && (code != 200 || get(v, "__interrupt__") != nil || !slices.Equal(anyStrings(get(v, "log")), []string{"plan:x"})) {
		t.Fatalf("interrupt_before: %d %v, want the state as Python LangGraph returns it at a breakpoint", code, v)
	}
	_, st := s.call("GET", "/threads/"+tid+"/state", "")
	if !slices.Equal(anyStrings(get(st, "next")), []string{"research"}) || len(get(st, "tasks", 0, "interrupts").([]any)) != 0 {
		t.Errorf("stopped before research: %v", st)
	}
	// A command with goto and update at the breakpoint: the update
	// applies at once, and finalize runs beside the pending research
	// (which asks); once research is answered, review follows it.
	code, v = s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"goto": "finalize", "update": {"chosen": "none"}}}`)
	_, st = s.call("GET", "/threads/"+tid+"/state", "")
	if js {
		// LangGraph.js (B5): the command's writes make an input checkpoint
		// from which the run goes on: finalize's write is applied, research
		// asks. (Whether LangGraph.js's server then answers runs/wait with
		// the state, as here, or the interrupts is not recorded.)
		if code != 200 || get(st, "values", "chosen") != "none" || !slices.Equal(anyStrings(get(st, "next")), []string{"research"}) || str(st, "tasks", 0, "interrupts", 0, "value", "question") != "Which note should we keep?" {
			t.Errorf("goto with update (js): %d %v; state %v", code, v, st)
		}
	} else if code != 200 || get(v, "__interrupt__") == nil || get(st, "values", "chosen") != "none" {
		t.Errorf("goto with update: %d %v; state values %v", code, v, get(st, "values"))
	}
	if !js {
		s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "command": {"resume": "fact A about x"}}`)
		_, st = s.call("GET", "/threads/"+tid+"/state", "")
		if log := anyStrings(get(st, "values", "log")); !slices.Equal(log, []string{"plan:x", "published"}) || !slices.Equal(anyStrings(get(st, "next")), []string{"review"}) {
			t.Errorf("after goto finalize and the resume: log %v next %v, want finalize to have run", log, get(st, "next"))
		}
	}
	// A stateless run leaves no thread behind.
	code, v = s.call("POST", "/runs/wait", `{"assistant_id": "tool-agent", "input": {"messages": [{"role": "user", "content": "what is 2+3?"}]}}`)
	msgs, _ := get(v, "messages").([]any)
	if code != 200 || len(msgs) < 2 || str(msgs[0], "type") != "human" {
		t.Errorf("stateless run: %d %v", code, v)
	}
	if _, n := s.call("POST", "/threads/count", `{}`); n != 2.0 { // the two breakpoint threads
		t.Errorf("threads after a stateless run: %v", n)
	}
	if code, _ := s.call("POST", "/runs/wait", `{"assistant_id": "approval", "input": {"topic": "kept"}, "on_completion": "keep"}`); code != 200 {
		t.Errorf("a stateless run kept: %d", code)
	}
	if _, v := s.call("POST", "/threads/search", `{"values": {"topic": "kept"}}`); len(v.([]any)) != 1 {
		t.Errorf("the kept stateless run's thread: %v", v)
	}
	code, evs, _ = s.stream("/runs/stream", `{"assistant_id": "tool-agent", "input": {"messages": [{"role": "user", "content": "what is 2+3?"}]}, "stream_mode": "messages-tuple"}`)
	var chunks int
	for _, ev := range evs {
		if ev.Name == "messages" {
			chunks++
			if str(ev.Data, 0, "type") == "" || str(ev.Data, 1, "langgraph_node") == "" {
				t.Errorf("messages event %v: want [chunk, metadata]", ev.Data)
			}
		}
	}
	if code != 200 || chunks == 0 {
		t.Errorf("messages-tuple: %d, %d message events in %v", code, chunks, evs)
	}
}

// TestBadRequests: each refusal has LangGraph's status code and a
// sentence, and stores nothing.
func TestBadRequests(t *testing.T) {
	s := newApproval(t)
	tid := s.newThread(`{}`)
	s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "x"}}`)
	before := checkpoints(t, s.saver)
	cases := []struct {
		path, body string
		code       int
		says       string
	}{
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "nope", "input": {}}`, 404, "Assistant"},
		{"/threads/00000000-0000-0000-0000-000000000000/runs/wait", `{"assistant_id": "approval", "input": {}}`, 404, "not found"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "input": null, "checkpoint_id": "nope"}`, 404, "Checkpoint"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "command": {}}`, 422, "command"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "command": "resume"}`, 422, "command"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "command": {"goto": "nowhere"}}`, 400, "nowhere"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "input": {"topic": "y"}, "command": {"resume": 1}}`, 400, "not both"},
		{"/threads/" + tid + "/runs/stream", `{"assistant_id": "approval", "input": {"topic": "x"}, "stream_mode": ["bogus"]}`, 422, "bogus"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "input": {"nokey": 1}}`, 400, "nokey"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "input": {}, "multitask_strategy": "later"}`, 422, "later"},
		{"/threads/" + tid + "/state", `{"values": {"topic": "z"}, "checkpoint_id": "nope"}`, 404, "Checkpoint"},
		{"/threads/" + tid + "/state", `{"values": {"topic": "z"}, "as_node": "ghost"}`, 400, "ghost"},
		{"/threads/" + tid + "/runs/wait", `{"assistant_id": "approval", "input": `, 422, "malformed"},
	}
	for _, c := range cases {
		code, v := s.call("POST", c.path, c.body)
		if code != c.code || !strings.Contains(str(v, "detail"), c.says) {
			t.Errorf("POST %s %s: %d %v, want %d saying %q", c.path, c.body, code, v, c.code, c.says)
		}
	}
	if after := checkpoints(t, s.saver); after != before {
		t.Errorf("refused requests stored checkpoints: %d before, %d after", before, after)
	}
	// Resume with nothing waiting, on a finished thread.
	done := s.newThread(`{}`)
	s.call("POST", "/threads/"+done+"/runs/wait", `{"assistant_id": "writing-assistant", "input": {"topic": "x"}}`)
	s.call("POST", "/threads/"+done+"/runs/wait", `{"assistant_id": "writing-assistant", "command": {"resume": "approve"}}`)
	before = checkpoints(t, s.saver)
	if code, v := s.call("POST", "/threads/"+done+"/runs/wait", `{"assistant_id": "writing-assistant", "command": {"resume": "approve"}}`); code != 400 || !strings.Contains(str(v, "detail"), "no interrupt waiting") {
		t.Errorf("resume with nothing waiting: %d %v", code, v)
	}
	if code, v := s.call("POST", "/threads/"+done+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "x"}}`); code != 409 {
		t.Errorf("another assistant's thread: %d %v", code, v)
	}
	if after := checkpoints(t, s.saver); after != before {
		t.Errorf("refused requests stored checkpoints: %d before, %d after", before, after)
	}
	if code, raw := s.raw("POST", "/threads", ""); code != 200 {
		t.Errorf("a bodiless POST /threads: %d %s", code, raw)
	}
}

// checkpoints counts the store's checkpoints.
func checkpoints(t *testing.T, saver checkpoint.Saver) int {
	t.Helper()
	n := 0
	for _, err := range saver.List(context.Background(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestStudioMessages: messages mode gives each message's start, its text
// accumulated chunk by chunk, and each message complete, with values.
func TestStudioMessages(t *testing.T) {
	s := newApproval(t)
	code, evs, _ := s.stream("/runs/stream", `{"assistant_id": "tool-agent", "input": {"messages": [{"role": "user", "content": "what is 2+3?", "id": "u1"}]}, "stream_mode": "messages"}`)
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	var names []string
	last := map[string]string{} // message id → its last partial content
	partials := 0
	for _, ev := range evs {
		names = append(names, ev.Name)
		if ev.Name == "messages/partial" {
			id, c := str(ev.Data, 0, "id"), str(ev.Data, 0, "content")
			if !strings.HasPrefix(c, last[id]) {
				t.Errorf("message %s: partial %q does not extend %q", id, c, last[id])
			}
			last[id] = c
			partials++
		}
	}
	if len(names) < 2 || names[1] != "messages/complete" || str(evs[1].Data, 0, "id") != "u1" || str(evs[1].Data, 0, "type") != "human" {
		t.Errorf("the input message is complete first: %v", names)
	}
	for _, want := range []string{"messages/metadata", "messages/partial", "values"} {
		if !slices.Contains(names, want) {
			t.Errorf("events %v lack %s", names, want)
		}
	}
	if grown := slices.ContainsFunc(slices.Collect(maps.Values(last)), func(c string) bool { return len(c) > 0 }); partials < 2 || !grown {
		t.Errorf("%d partial events, contents %v", partials, last)
	}
	// Every streamed message is completed.
	partialIDs, completeIDs := map[string]bool{}, map[string]bool{}
	for _, ev := range evs {
		switch ev.Name {
		case "messages/partial":
			partialIDs[str(ev.Data, 0, "id")] = true
		case "messages/complete":
			completeIDs[str(ev.Data, 0, "id")] = true
		}
	}
	for id := range partialIDs {
		if !completeIDs[id] {
			t.Errorf("message %s streamed but never complete (complete: %v)", id, completeIDs)
		}
	}
}
