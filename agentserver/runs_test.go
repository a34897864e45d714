package agentserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/lgserver"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// slowGraph counts to "until" one step at a time, each step taking a few
// milliseconds, so a run is still going when a test acts on it.
func slowGraph(t testing.TB) *engine.Graph {
	t.Helper()
	n := engine.LastValue[int]("n")
	until := engine.LastValue[int]("until")
	g, err := engine.NewGraph("slow", n, until).
		AddNode("tick", func(_ context.Context, s engine.State) (engine.Output, error) {
			time.Sleep(5 * time.Millisecond)
			return engine.Updates(n.Set(n.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "tick").
		AddConditionalEdges("tick", func(_ context.Context, s engine.State) (engine.Route, error) {
			if n.Get(s) >= until.Get(s) {
				return engine.To(engine.END), nil
			}
			return engine.To("tick"), nil
		}, engine.Targets("tick", engine.END)).
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func newSlow(t *testing.T) *server {
	t.Helper()
	saver := memory.New()
	h, err := agentserver.New(map[string]*engine.Graph{"slow": slowGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &server{t: t, srv: srv, saver: saver}
}

// background starts a run and returns its id.
func (s *server) background(tid, body string) string {
	s.t.Helper()
	code, v := s.call("POST", "/threads/"+tid+"/runs", body)
	if code != 200 || str(v, "status") != "pending" || str(v, "run_id") == "" {
		s.t.Fatalf("create run: %d %v", code, v)
	}
	return str(v, "run_id")
}

func TestCancelAndJoin(t *testing.T) {
	s := newSlow(t)
	tid := s.newThread(`{}`)
	rid := s.background(tid, `{"assistant_id": "slow", "input": {"until": 100000}}`)
	if code, v := s.call("GET", "/threads/"+tid, ""); code != 200 || str(v, "status") != "busy" {
		t.Errorf("thread during a run: %d %v", code, v)
	}
	// reject (the default) refuses a second run while the first goes on.
	if code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 1}}`); code != 422 || !strings.Contains(str(v, "detail"), "busy") {
		t.Errorf("a second run under reject: %d %v", code, v)
	}
	// Cancel once the run has made a step, so there is something to join.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, v := s.call("GET", "/threads/"+tid, ""); get(v, "values", "n") != nil {
			break
		}
	}
	if code, _ := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true&action=interrupt", ""); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	if code, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); code != 200 || str(v, "status") != "interrupted" {
		t.Errorf("a cancelled run: %d %v", code, v)
	}
	code, v := s.call("GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
	if n, _ := get(v, "n").(float64); code != 200 || n < 1 || n >= 100000 {
		t.Errorf("join of the cancelled run: %d %v", code, v)
	}
	if code, v := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel", ""); code != 409 {
		t.Errorf("cancelling an ended run: %d %v", code, v)
	}
	// The run's stream, joined late: every event, or those after Last-Event-ID.
	all := s.joinStream(tid, rid, "")
	if len(all) < 3 || all[0].Name != "metadata" {
		t.Fatalf("joined stream: %v", all)
	}
	if after := s.joinStream(tid, rid, "1"); len(after) != len(all)-2 {
		t.Errorf("Last-Event-ID 1: %d events, want %d", len(after), len(all)-2)
	}
	if code, _ := s.call("GET", "/threads/"+tid+"/runs/nope/join", ""); code != 404 {
		t.Errorf("join of an unknown run: %d", code)
	}
	if _, v := s.call("GET", "/threads/"+tid+"/runs", ""); len(v.([]any)) != 1 || str(v, 0, "run_id") != rid {
		t.Errorf("runs of the thread: %v", v)
	}
}

// joinStream reads GET …/runs/{rid}/stream.
func (s *server) joinStream(tid, rid, lastID string) []sseEvent {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.srv.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	return parseSSE(s.t, resp.Body)
}

// TestMultitask: interrupt stops the running run and starts the new one;
// enqueue waits for it to end.
func TestMultitask(t *testing.T) {
	s := newSlow(t)
	tid := s.newThread(`{}`)
	first := s.background(tid, `{"assistant_id": "slow", "input": {"until": 100000}}`)
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"n": 0, "until": 3}, "multitask_strategy": "interrupt"}`)
	if code != 200 || get(v, "n") != 3.0 {
		t.Errorf("the interrupting run: %d %v", code, v)
	}
	if _, r := s.call("GET", "/threads/"+tid+"/runs/"+first, ""); str(r, "status") != "interrupted" {
		t.Errorf("the interrupted run: %v", r)
	}
	// enqueue: the second run starts when the first ends, on its state.
	s.background(tid, `{"assistant_id": "slow", "input": {"n": 0, "until": 20}}`)
	code, v = s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 25}, "multitask_strategy": "enqueue"}`)
	if code != 200 || get(v, "n") != 25.0 {
		t.Errorf("the enqueued run: %d %v", code, v)
	}
}

// TestTwoServersOneStore: two servers on one store, as two workers: a
// run on one makes the thread busy on the other, which refuses a second
// run under reject and waits under enqueue.
func TestTwoServersOneStore(t *testing.T) {
	saver := memory.New()
	a, b := &server{t: t, saver: saver}, &server{t: t, saver: saver}
	for _, s := range []*server{a, b} {
		h, err := agentserver.New(map[string]*engine.Graph{"slow": slowGraph(t)}, saver)
		if err != nil {
			t.Fatal(err)
		}
		s.srv = httptest.NewServer(h)
		t.Cleanup(s.srv.Close)
	}
	tid := a.newThread(`{"team": "blue"}`)
	a.background(tid, `{"assistant_id": "slow", "input": {"n": 0, "until": 60}, "config": {"recursion_limit": 1000}}`)
	var status string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if code, v := b.call("GET", "/threads/"+tid, ""); code == 200 {
			status = str(v, "status")
			if get(v, "metadata", "team") != "blue" {
				t.Errorf("the other server sees metadata %v", get(v, "metadata"))
			}
			break
		}
	}
	if status != "busy" {
		t.Fatalf("the thread on the other server: status %q, want busy", status)
	}
	if code, v := b.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 70}}`); code != 422 {
		t.Errorf("a second run under reject on the other server: %d %v", code, v)
	}
	code, v := b.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "slow", "input": {"until": 65}, "multitask_strategy": "enqueue", "config": {"recursion_limit": 1000}}`)
	if code != 200 || get(v, "n") != 65.0 {
		t.Errorf("an enqueued run on the other server: %d %v", code, v)
	}
}

// TestStopRuns: a server shutting down stops its runs at a step boundary
// instead of waiting for them.
func TestStopRuns(t *testing.T) {
	saver := memory.New()
	h, err := agentserver.New(map[string]*engine.Graph{"slow": slowGraph(t)}, saver)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, srv: httptest.NewServer(h), saver: saver}
	t.Cleanup(s.srv.Close)
	tid := s.newThread(`{}`)
	rid := s.background(tid, `{"assistant_id": "slow", "input": {"until": 100000}, "config": {"recursion_limit": 200000}}`)
	h.StopRuns()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.call("GET", "/threads/"+tid+"/runs/"+rid+"/join", "")
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the run went on after StopRuns")
	}
	if _, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); str(v, "status") != "interrupted" {
		t.Errorf("a run stopped by StopRuns: %v", v)
	}
}

// TestCancelStopsTheNode: a cancel stops the running node at once (its
// context is cancelled, as LangGraph aborts it), so the step it was in
// stores nothing and the thread is idle, and a node reads the run's
// config.configurable; a run
// of a LangGraph.js graph stopped at an interrupt is a success there.
func TestCancelStopsTheNode(t *testing.T) {
	h, err := agentserver.New(map[string]*engine.Graph{"approval": lgserver.ApprovalGraph(t)}, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	s := &server{t: t, srv: srv}
	tid := s.newThread(`{}`)
	rid := s.background(tid, `{"assistant_id": "approval", "input": {"topic": "slow"}, "config": {"configurable": {"delay_ms": 20000}}}`)
	time.Sleep(200 * time.Millisecond) // into plan's delay
	start := time.Now()
	if code, _ := s.call("POST", "/threads/"+tid+"/runs/"+rid+"/cancel?wait=true", ""); code != 204 {
		t.Fatalf("cancel: %d", code)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("cancel took %v: the node ran on", d)
	}
	if _, v := s.call("GET", "/threads/"+tid+"/runs/"+rid, ""); str(v, "status") != "interrupted" {
		t.Errorf("the cancelled run: %v", v)
	}
	if _, th := s.call("GET", "/threads/"+tid, ""); str(th, "status") != "idle" {
		t.Errorf("the thread of the cancelled run is %q, want idle (nothing waits for an answer)", str(th, "status"))
	}
	if _, st := s.call("GET", "/threads/"+tid+"/state", ""); get(st, "values", "log") != nil && len(get(st, "values", "log").([]any)) != 0 {
		t.Errorf("the cancelled step stored its writes: %v", get(st, "values"))
	}
	code, v := s.call("POST", "/threads/"+tid+"/runs/wait", `{"assistant_id": "approval", "input": {"topic": "quick"}, "config": {"configurable": {"delay_ms": 1}}}`)
	if code != 200 || str(v, "__interrupt__", 0, "value", "question") != "Which note should we keep?" {
		t.Fatalf("a run after the cancel: %d %v", code, v)
	}
	_, runs := s.call("GET", "/threads/"+tid+"/runs", "")
	if str(runs, 0, "status") != "success" {
		t.Errorf("a LangGraph.js graph's run stopped at an interrupt: %v, want success", get(runs, 0))
	}
}

// TestEventsMode: stream_mode events gives LangChain's chain events for
// the graph, each node and the subgraph, a node that stops at an
// interrupt without its end, and the graph's end with its state.
func TestEventsMode(t *testing.T) {
	s := newApproval(t, engine.WithReference(engine.LangGraphJS))
	tid := s.newThread(`{}`)
	code, evs, _ := s.stream("/threads/"+tid+"/runs/stream", `{"assistant_id": "approval", "input": {"topic": "eels"}, "stream_mode": "events"}`)
	if code != 200 {
		t.Fatalf("stream: %d", code)
	}
	var got []string
	for _, ev := range evs[1:] {
		if ev.Name != "events" {
			t.Fatalf("event %s in the events mode", ev.Name)
		}
		got = append(got, str(ev.Data, "event")+":"+str(ev.Data, "name"))
	}
	want := []string{"on_chain_start:LangGraph", "on_chain_start:plan", "on_chain_end:plan", "on_chain_start:research",
		"on_chain_start:LangGraph", "on_chain_start:gather", "on_chain_end:gather", "on_chain_start:pick", "on_chain_end:LangGraph"}
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if str(evs[2].Data, "metadata", "langgraph_node") != "plan" || get(evs[2].Data, "tags", 0) != "graph:step:1" || get(evs[3].Data, "data", "output", "log", 0) != "plan:eels" {
		t.Errorf("plan's events: %v, %v", evs[2].Data, evs[3].Data)
	}
	if last := evs[len(evs)-1].Data; get(last, "data", "output", "topic") != "eels" || str(last, "run_id") != str(evs[0].Data, "run_id") {
		t.Errorf("the graph's end %v, want the state under the run's id", last)
	}
}
