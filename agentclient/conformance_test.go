package agentclient_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/lgserver"
)

// target is a server the conformance run drives: its address and how it
// makes a run slow.
type target struct {
	url  string
	slow func(ms int, topic string) agentclient.RunRequest
	// schemas asks for the graph's schemas, which LangGraph.js extracts
	// from TypeScript on the first call: minutes on a loaded machine,
	// too slow to ask of it in every test run.
	schemas bool
}

// delayed is a run of the approval graph whose plan node sleeps ms first
// (both servers' graphs read configurable.delay_ms).
func delayed(ms int, topic string) agentclient.RunRequest {
	return agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": topic},
		Config: &agentclient.RunConfig{Configurable: map[string]any{"delay_ms": ms}}}
}

// TestAgainstLangGraph drives LangGraph's own dev server (LangGraph.js
// 1.7.3 under @langchain/langgraph-cli 1.5.1) with the client.
func TestAgainstLangGraph(t *testing.T) {
	s := lgserver.Start(t)
	conformance(t, target{url: s.URL, slow: delayed})
	t.Run("agent tokens", func(t *testing.T) { agentTokens(t, s.URL) })
}

// TestAgainstWeft drives Weft's own agentserver, serving the same
// approval graph written with the engine, with the same calls.
func TestAgainstWeft(t *testing.T) {
	h, err := agentserver.New(map[string]*engine.Graph{"approval": lgserver.ApprovalGraph(t)}, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	conformance(t, target{url: srv.URL, schemas: true, slow: delayed})
}

// approvalValues are the approval graph's values that the run checks.
type approvalValues struct {
	Topic  string   `json:"topic"`
	Notes  []string `json:"notes"`
	Chosen string   `json:"chosen"`
	Log    []string `json:"log"`
}

func valuesOf(t *testing.T, raw json.RawMessage) approvalValues {
	t.Helper()
	var v approvalValues
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("values %s: %v", raw, err)
	}
	return v
}

// interruptsIn finds the __interrupt__ entries of an updates event.
func interruptsIn(t *testing.T, ev agentclient.Event) []agentclient.Interrupt {
	t.Helper()
	var v struct {
		Interrupts []agentclient.Interrupt `json:"__interrupt__"`
	}
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		return nil
	}
	return v.Interrupts
}

// conformance is one run of the client against a server: discovery, a
// run to the subgraph's interrupt, answers by id and plain, a refused
// stale resume, history and its paging, a fork with update_state, a
// replay answered differently, a cancelled run, a joined background run,
// a cut stream resumed, and the server's errors as typed values.
func conformance(t *testing.T, tg target) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := agentclient.New(tg.url, agentclient.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}

	t.Run("discovery", func(t *testing.T) {
		if err := c.Ok(ctx); err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil || info.Version == "" {
			t.Fatalf("info %+v, %v", info, err)
		}
		as, err := c.SearchAssistants(ctx, agentclient.AssistantSearch{GraphID: "approval"})
		if err != nil || len(as) != 1 || as[0].GraphID != "approval" || as[0].AssistantID == "" {
			t.Fatalf("assistants search for approval: %+v, %v", as, err)
		}
		a, err := c.GetAssistant(ctx, "approval")
		if err != nil || a.AssistantID != as[0].AssistantID {
			t.Fatalf("assistant by graph id: %+v, %v", a, err)
		}
		g, err := c.GetGraph(ctx, "approval", -1)
		if err != nil {
			t.Fatal(err)
		}
		var nodes []string
		for _, n := range g.Nodes {
			nodes = append(nodes, n.ID)
		}
		if !slices.Contains(nodes, "research:pick") || slices.Contains(nodes, "research") {
			t.Errorf("x-ray nodes %v, want research:pick inlined", nodes)
		}
		if tg.schemas {
			sc, err := c.GetSchemas(ctx, "approval")
			if err != nil || !strings.Contains(string(sc.StateSchema), "topic") {
				t.Errorf("schemas: %+v, %v", sc, err)
			}
		}
		if g, err = c.GetGraph(ctx, "approval", 0); err != nil || !slices.ContainsFunc(g.Nodes, func(n agentclient.GraphNode) bool { return n.ID == "research" }) {
			t.Errorf("drawing without x-ray: %+v, %v", g, err)
		}
	})

	th, err := c.CreateThread(ctx, agentclient.ThreadCreate{Metadata: map[string]any{"owner": "conformance"}})
	if err != nil || th.ThreadID == "" {
		t.Fatalf("create thread: %+v, %v", th, err)
	}
	tid := th.ThreadID
	var pickID, reviewHead string

	t.Run("run to the subgraph's interrupt", func(t *testing.T) {
		st, err := c.Stream(ctx, tid, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "otters"},
			StreamMode: []string{"updates"}, StreamSubgraphs: true})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 || evs[0].Mode != "metadata" || st.RunID() == "" {
			t.Fatalf("events %v, run %q: want metadata first and a run id", names(evs), st.RunID())
		}
		var sub, root []agentclient.Interrupt
		for _, ev := range evs {
			if ev.Mode != "updates" {
				continue
			}
			if len(ev.Namespace) == 1 && strings.HasPrefix(ev.Namespace[0], "research:") {
				sub = append(sub, interruptsIn(t, ev)...)
			} else if ev.Namespace == nil {
				root = append(root, interruptsIn(t, ev)...)
			}
		}
		if len(sub) != 1 || len(root) != 1 || sub[0].ID != root[0].ID {
			t.Fatalf("interrupts in the subgraph %v and at the root %v, want the same one in both; events %v", sub, root, names(evs))
		}
		pickID = root[0].ID
		state, err := c.GetState(ctx, tid, agentclient.StateQuery{Subgraphs: true})
		if err != nil {
			t.Fatal(err)
		}
		its := state.Interrupts()
		if !slices.Equal(state.Next, []string{"research"}) || len(its) != 1 || its[0].ID != pickID {
			t.Fatalf("state next %v, interrupts %v; want research and %s", state.Next, its, pickID)
		}
		var q struct {
			Options []string `json:"options"`
		}
		if err := json.Unmarshal(its[0].Value, &q); err != nil || !slices.Equal(q.Options, []string{"fact A about otters", "fact B about otters"}) {
			t.Errorf("the pick question %s: %v", its[0].Value, err)
		}
		thr, err := c.GetThread(ctx, tid)
		if err != nil || thr.Status != "interrupted" {
			t.Errorf("thread %+v, %v: want interrupted", thr, err)
		}
	})

	t.Run("answer by id, refuse a stale resume, answer review", func(t *testing.T) {
		if pickID == "" {
			t.Skip("no interrupt to answer")
		}
		state, err := c.GetState(ctx, tid, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		first := state.Checkpoint.CheckpointID
		st, err := c.Resume(ctx, tid, first, agentclient.ResumeByID(map[string]any{pickID: "fact B about otters"}),
			agentclient.RunRequest{AssistantID: "approval", StreamMode: []string{"updates"}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		var review []agentclient.Interrupt
		for _, ev := range evs {
			review = append(review, interruptsIn(t, ev)...)
		}
		if len(review) != 1 || !strings.Contains(string(review[0].Value), "Draft on otters using fact B about otters") {
			t.Fatalf("after answering pick: interrupts %s, events %v", showInterrupts(review), names(evs))
		}
		// The thread has moved on: resuming from the checkpoint seen
		// before is refused, naming both.
		_, err = c.Resume(ctx, tid, first, agentclient.Command{Resume: "fact A about otters"}, agentclient.RunRequest{AssistantID: "approval"})
		var moved *agentclient.ThreadMovedError
		if !errors.As(err, &moved) || !errors.Is(err, agentclient.ErrThreadMoved) || moved.Expected != first || moved.Head == first || !slices.Equal(moved.HeadNext, []string{"review"}) {
			t.Fatalf("stale resume: %v, want a ThreadMovedError at review", err)
		}
		state, err = c.GetState(ctx, tid, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		reviewHead = state.Checkpoint.CheckpointID
		if reviewHead != moved.Head {
			t.Errorf("the refusal named head %s; the state says %s", moved.Head, reviewHead)
		}
		st, err = c.Resume(ctx, tid, reviewHead, agentclient.Command{Resume: "yes"}, agentclient.RunRequest{AssistantID: "approval"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Collect(); err != nil {
			t.Fatal(err)
		}
	})

	var history []agentclient.StateSnapshot
	t.Run("history", func(t *testing.T) {
		final := waitFor(t, ctx, c, tid, func(s *agentclient.StateSnapshot) bool { return len(s.Next) == 0 })
		v := valuesOf(t, final.Values)
		if want := []string{"plan:otters", `review:"yes"`, "published"}; !slices.Equal(v.Log, want) || v.Chosen != "fact B about otters" {
			t.Fatalf("final values %+v, want log %v", v, want)
		}
		var err error
		history, err = c.History(ctx, tid, agentclient.HistoryQuery{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		var steps []string
		for _, h := range history {
			steps = append(steps, fmt.Sprintf("%d:%s:%s", h.Step(), h.Source(), strings.Join(h.Next, ",")))
		}
		want := []string{"4:loop:", "3:loop:finalize", "2:loop:review", "1:loop:research", "0:loop:plan", "-1:input:__start__"}
		if !slices.Equal(steps, want) {
			t.Fatalf("history %v, want %v", steps, want)
		}
		for i, h := range history[:len(history)-1] {
			if h.ParentID() != history[i+1].Checkpoint.CheckpointID {
				t.Errorf("history[%d]'s parent %s, want %s", i, h.ParentID(), history[i+1].Checkpoint.CheckpointID)
			}
		}
		page, err := c.History(ctx, tid, agentclient.HistoryQuery{Limit: 2, Before: history[1].Checkpoint.CheckpointID})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) != 2 || page[0].Checkpoint.CheckpointID != history[2].Checkpoint.CheckpointID || page[1].Checkpoint.CheckpointID != history[3].Checkpoint.CheckpointID {
			t.Errorf("history before %s: %d snapshots, want steps 2 and 1", history[1].Checkpoint.CheckpointID, len(page))
		}
		inputs, err := c.History(ctx, tid, agentclient.HistoryQuery{Metadata: map[string]any{"source": "input"}})
		if err != nil || len(inputs) != 1 || inputs[0].Step() != -1 {
			t.Errorf("history by metadata source input: %d snapshots, %v; want the input checkpoint", len(inputs), err)
		}
		at, err := c.GetState(ctx, tid, agentclient.StateQuery{CheckpointID: history[2].Checkpoint.CheckpointID})
		if err != nil || !slices.Equal(at.Next, []string{"review"}) || at.Checkpoint.CheckpointID != history[2].Checkpoint.CheckpointID {
			t.Errorf("state at step 2: %+v, %v", at, err)
		}
	})

	t.Run("fork with update_state", func(t *testing.T) {
		if len(history) < 4 {
			t.Skip("no history")
		}
		atResearch := history[3] // step 1, next research
		ref, err := c.UpdateState(ctx, tid, agentclient.StateUpdate{Values: map[string]any{"topic": "beavers"}, AsNode: "plan", CheckpointID: atResearch.Checkpoint.CheckpointID})
		if err != nil {
			t.Fatal(err)
		}
		fork, err := c.GetState(ctx, tid, agentclient.StateQuery{CheckpointID: ref.CheckpointID})
		if err != nil {
			t.Fatal(err)
		}
		if fork.Source() != "update" || fork.ParentID() != atResearch.Checkpoint.CheckpointID || !slices.Equal(fork.Next, []string{"research"}) {
			t.Errorf("fork checkpoint: source %s, parent %s, next %v", fork.Source(), fork.ParentID(), fork.Next)
		}
		st, err := c.Stream(ctx, tid, agentclient.RunRequest{AssistantID: "approval", CheckpointID: ref.CheckpointID, StreamMode: []string{"updates"}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		var its []agentclient.Interrupt
		for _, ev := range evs {
			its = append(its, interruptsIn(t, ev)...)
		}
		if len(its) != 1 || !strings.Contains(string(its[0].Value), "fact A about beavers") {
			t.Errorf("the fork's run asked %v, want the pick question about beavers", its)
		}
	})

	t.Run("replay answered differently", func(t *testing.T) {
		if len(history) < 3 {
			t.Skip("no history")
		}
		atReview := history[2]
		st, err := c.Stream(ctx, tid, agentclient.RunRequest{AssistantID: "approval", CheckpointID: atReview.Checkpoint.CheckpointID, StreamMode: []string{"updates"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Collect(); err != nil {
			t.Fatal(err)
		}
		head, err := c.GetState(ctx, tid, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(head.Next, []string{"review"}) || len(head.Interrupts()) != 1 {
			t.Fatalf("after the replay: next %v, interrupts %v", head.Next, head.Interrupts())
		}
		st, err = c.Resume(ctx, tid, head.Checkpoint.CheckpointID, agentclient.Command{Resume: "no"}, agentclient.RunRequest{AssistantID: "approval", StreamMode: []string{"values"}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		last := evs[len(evs)-1]
		if v := valuesOf(t, last.Data); !slices.Equal(v.Log, []string{"plan:otters", `review:"no"`, "rejected"}) {
			t.Errorf("the replay's answer: log %v, want the new answer rejected", v.Log)
		}
	})

	t.Run("breakpoint after plan, continued", func(t *testing.T) {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Wait(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "owls"}, InterruptAfter: []string{"plan"}}); err != nil {
			t.Fatal(err)
		}
		head, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(head.Next, []string{"research"}) || len(head.Interrupts()) != 0 {
			t.Fatalf("at the breakpoint: next %v, interrupts %v", head.Next, head.Interrupts())
		}
		st, err := c.Resume(ctx, th.ThreadID, head.Checkpoint.CheckpointID, agentclient.Command{}, agentclient.RunRequest{AssistantID: "approval", StreamMode: []string{"updates"}})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		var its []agentclient.Interrupt
		for _, ev := range evs {
			its = append(its, interruptsIn(t, ev)...)
		}
		if len(its) != 1 || !strings.Contains(string(its[0].Value), "fact A about owls") {
			t.Fatalf("continued past the breakpoint: %s, want the pick question", showInterrupts(its))
		}
		// An answer with an update: both reach the thread.
		head, err = c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		st, err = c.Resume(ctx, th.ThreadID, head.Checkpoint.CheckpointID,
			agentclient.Command{Resume: "fact A about owls", Update: map[string]any{"log": []string{"edited"}}},
			agentclient.RunRequest{AssistantID: "approval"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Collect(); err != nil {
			t.Fatal(err)
		}
		head, err = c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if v := valuesOf(t, head.Values); v.Chosen != "fact A about owls" || !slices.Contains(v.Log, "edited") || !slices.Equal(head.Next, []string{"review"}) {
			t.Errorf("after an answer with an update: %+v, next %v", v, head.Next)
		}
	})

	t.Run("cancel a slow run", func(t *testing.T) {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		run, err := c.CreateRun(ctx, th.ThreadID, tg.slow(8000, "cancel me"))
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != "pending" && run.Status != "running" {
			t.Errorf("a new background run is %s", run.Status)
		}
		waitRun(t, ctx, c, th.ThreadID, run.RunID, "running")
		// The thread is busy: a second run is refused as a conflict.
		_, err = c.Wait(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "second"}, MultitaskStrategy: "reject"})
		if !errors.Is(err, agentclient.ErrConflict) || errors.Is(err, agentclient.ErrInvalid) {
			t.Errorf("a second run on a busy thread: %v, want ErrConflict", err)
		}
		if err := c.CancelRun(ctx, th.ThreadID, run.RunID, agentclient.CancelOptions{Wait: true, Action: "interrupt"}); err != nil {
			t.Fatal(err)
		}
		got, err := c.GetRun(ctx, th.ThreadID, run.RunID)
		if err != nil || got.Status != "interrupted" {
			t.Errorf("the cancelled run: %+v, %v", got, err)
		}
		// Stopped before the subgraph asked anything.
		state, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
		if err != nil || len(state.Interrupts()) != 0 {
			t.Errorf("after the cancel: %+v, %v; want no interrupt asked", state, err)
		}
		if err := c.CancelRun(ctx, th.ThreadID, "00000000-0000-0000-0000-000000000000", agentclient.CancelOptions{}); !errors.Is(err, agentclient.ErrNotFound) {
			t.Errorf("cancelling an unknown run: %v, want ErrNotFound", err)
		}
	})

	t.Run("join a background run", func(t *testing.T) {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		req := tg.slow(500, "joined")
		req.StreamMode = []string{"updates"}
		req.StreamResumable = true
		run, err := c.CreateRun(ctx, th.ThreadID, req)
		if err != nil {
			t.Fatal(err)
		}
		// Follow its events from the first while it runs. (On
		// LangGraph.js a join discards the events kept for a finished
		// run: follow first, then join.)
		st, err := c.JoinStream(ctx, th.ThreadID, run.RunID, "-1")
		if err != nil {
			t.Fatal(err)
		}
		evs, err := st.Collect()
		if err != nil {
			t.Fatal(err)
		}
		var its []agentclient.Interrupt
		for _, ev := range evs {
			its = append(its, interruptsIn(t, ev)...)
		}
		if len(evs) == 0 || evs[0].Mode != "metadata" || len(its) != 1 || !strings.Contains(string(its[0].Value), "Which note") {
			t.Errorf("the run's events from the first: %v", names(evs))
		}
		out, err := c.JoinRun(ctx, th.ThreadID, run.RunID)
		if err != nil {
			t.Fatal(err)
		}
		// LangGraph.js answers the parent's values when a subgraph
		// interrupted, Weft {"__interrupt__": […]}; the state tells.
		if v := valuesOf(t, out); !strings.Contains(string(out), "__interrupt__") && (len(v.Log) != 1 || !strings.HasPrefix(v.Log[0], "plan:")) {
			t.Errorf("joined values %s", out)
		}
		if state, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{}); err != nil || !slices.Equal(state.Next, []string{"research"}) || len(state.Interrupts()) != 1 {
			t.Errorf("after the join: %+v, %v; want the pick question pending", state, err)
		}
		runs, err := c.ListRuns(ctx, th.ThreadID, 0)
		if err != nil || !slices.ContainsFunc(runs, func(r agentclient.Run) bool { return r.RunID == run.RunID }) {
			t.Errorf("runs of the thread %+v, %v", runs, err)
		}
	})

	t.Run("a cut stream is resumed", func(t *testing.T) {
		cutStream(t, ctx, tg.url)
	})

	t.Run("search and delete threads", func(t *testing.T) {
		found, err := c.SearchThreads(ctx, agentclient.ThreadSearch{Metadata: map[string]any{"owner": "conformance"}, Limit: 10})
		if err != nil || len(found) != 1 || found[0].ThreadID != tid || found[0].Status != "idle" && found[0].Status != "interrupted" {
			t.Errorf("threads by metadata: %+v, %v; want only %s", found, err, tid)
		}
		if err := c.DeleteThread(ctx, tid); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetThread(ctx, tid); !errors.Is(err, agentclient.ErrNotFound) {
			t.Errorf("a deleted thread: %v, want ErrNotFound", err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := c.GetState(ctx, "00000000-0000-0000-0000-000000000000", agentclient.StateQuery{})
		var ae *agentclient.Error
		if !errors.Is(err, agentclient.ErrNotFound) || !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(ae.Message, "00000000-0000-0000-0000-000000000000") {
			t.Errorf("unknown thread: %v, want a 404 naming it", err)
		}
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Stream(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "x"}, StreamMode: []string{"bogus"}})
		if !errors.Is(err, agentclient.ErrInvalid) || !errors.As(err, &ae) || !strings.Contains(ae.Message, "stream_mode") {
			t.Errorf("a bogus stream mode: %v, want ErrInvalid naming stream_mode", err)
		}
	})
}

// cutStream runs approval through a proxy that cuts the first streamed
// answer after three events, and checks that the client resumed it from
// the run's stream with no event lost or repeated.
func cutStream(t *testing.T, ctx context.Context, upstream string) {
	var cut atomic.Bool
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header = r.Header.Clone()
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		if !strings.HasSuffix(r.URL.Path, "/runs/stream") || cut.Load() {
			_, _ = io.Copy(flushWriter{w}, resp.Body)
			return
		}
		rd := bufio.NewReader(resp.Body)
		for events := 0; events < 3; {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			_, _ = io.WriteString(w, line)
			if line == "\n" || line == "\r\n" {
				events++
			}
		}
		w.(http.Flusher).Flush()
		cut.Store(true)
		panic(http.ErrAbortHandler) // drop the connection mid-stream
	}))
	defer proxy.Close()
	c, err := agentclient.New(proxy.URL)
	if err != nil {
		t.Fatal(err)
	}
	th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stream(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "cut"},
		StreamMode: []string{"updates"}, StreamSubgraphs: true, StreamResumable: true, OnDisconnect: "continue"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil {
		t.Fatal(err)
	}
	if !cut.Load() || st.Reconnects() != 1 {
		t.Fatalf("cut %v, reconnects %d: the proxy did not cut the stream", cut.Load(), st.Reconnects())
	}
	for i, ev := range evs {
		if ev.ID != fmt.Sprint(i) {
			t.Fatalf("event %d has id %q: events lost or repeated across the cut; ids %v", i, ev.ID, ids(evs))
		}
	}
	var its []agentclient.Interrupt
	for _, ev := range evs {
		if ev.Namespace == nil {
			its = append(its, interruptsIn(t, ev)...)
		}
	}
	if len(evs) <= 3 || len(its) != 1 {
		t.Errorf("events %v: want the run's events past the cut, up to its interrupt", names(evs))
	}
}

type flushWriter struct{ w http.ResponseWriter }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.w.(http.Flusher).Flush()
	return n, err
}

// agentTokens streams LangGraph's tool-loop agent in messages-tuple mode
// and puts its answer back together from the tokens.
func agentTokens(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := agentclient.New(base)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stream(ctx, "", agentclient.RunRequest{AssistantID: "agent",
		Input:      map[string]any{"messages": []any{map[string]any{"role": "user", "content": "what is 2+3?"}}},
		StreamMode: []string{"messages-tuple"}})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := st.Collect()
	if err != nil {
		t.Fatal(err)
	}
	var answer strings.Builder
	tokens := 0
	for _, ev := range evs {
		if ev.Mode != "messages" {
			continue
		}
		var tuple []json.RawMessage
		if err := ev.Decode(&tuple); err != nil || len(tuple) != 2 {
			t.Fatalf("messages event %s: %v, want [chunk, metadata]", ev.Data, err)
		}
		var chunk struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		}
		var meta struct {
			Node string `json:"langgraph_node"`
		}
		if json.Unmarshal(tuple[0], &chunk) != nil || json.Unmarshal(tuple[1], &meta) != nil {
			continue
		}
		if (chunk.Type == "ai" || chunk.Type == "AIMessageChunk") && meta.Node == "agent" && chunk.Content != "" {
			answer.WriteString(chunk.Content)
			tokens++
		}
	}
	if answer.String() != "The answer is 5." || tokens < 4 {
		t.Errorf("the agent's tokens make %q in %d tokens, want %q word by word", answer.String(), tokens, "The answer is 5.")
	}
}

// waitFor polls a thread's state until ok says so.
func waitFor(t *testing.T, ctx context.Context, c *agentclient.Client, thread string, ok func(*agentclient.StateSnapshot) bool) *agentclient.StateSnapshot {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		s, err := c.GetState(ctx, thread, agentclient.StateQuery{})
		if err != nil {
			t.Fatal(err)
		}
		th, err := c.GetThread(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if th.Status != "busy" && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s: state never came (next %v, status %s)", thread, s.Next, th.Status)
		}
	}
}

// waitRun polls a run until it has the status.
func waitRun(t *testing.T, ctx context.Context, c *agentclient.Client, thread, run, status string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		r, err := c.GetRun(ctx, thread, run)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == status {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s stayed %s, never %s", run, r.Status, status)
		}
	}
}

func names(evs []agentclient.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Name)
	}
	return out
}

func ids(evs []agentclient.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func showInterrupts(its []agentclient.Interrupt) string {
	var b strings.Builder
	for _, it := range its {
		fmt.Fprintf(&b, "[%s: %s]", it.ID, it.Value)
	}
	return b.String()
}
