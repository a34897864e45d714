package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

type user struct{ ID string }

// A node sees where it runs and the run's typed context, in a subgraph too.
func TestRuntimeAndRunContext(t *testing.T) {
	k := engine.List[string]("seen")
	type seen struct {
		rt  engine.Runtime
		ctx user
		ok  bool
	}
	got := map[string]seen{}
	record := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		rt, ok := engine.RuntimeOf(ctx)
		if !ok {
			return nil, errors.New("no runtime inside a node")
		}
		u, uok := engine.RunContext[user](ctx)
		if _, wrong := engine.RunContext[string](ctx); wrong {
			return nil, errors.New("RunContext[string] found a user")
		}
		got[rt.Node] = seen{rt, u, uok}
		return engine.Updates(k.Add(rt.Node)), nil
	}
	sub, err := engine.NewGraph("sub", k).AddNode("inner", record).AddEdge(engine.START, "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	saver := memory.New()
	g, err := engine.NewGraph("g", k).AddNode("a", record).AddSubgraph("s", sub).
		AddEdge(engine.START, "a").AddEdge("a", "s").Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	var taskIDs = map[string]string{}
	_, err = g.Invoke(context.Background(), engine.Values{"seen": []string{}}, engine.WithThread("t1"), engine.WithRunID("run-7"),
		engine.WithRunContext(user{ID: "u42"}), engine.WithObserver(engine.ModeTasks, func(ev engine.Event) {
			if !ev.Task.Done {
				taskIDs[ev.Task.Name] = ev.Task.ID
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := engine.RuntimeOf(context.Background()); ok {
		t.Error("RuntimeOf outside a node reported a runtime")
	}
	hist, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint a's step started from is the one whose next task is a.
	var fromA *engine.Snapshot
	for _, s := range hist {
		if len(s.Next) == 1 && s.Next[0] == "a" {
			fromA = s
		}
	}
	a := got["a"]
	// A new run under the default limit of 25: a, the first node after
	// START, runs on step 1 and may be followed by 24 more.
	want := engine.Runtime{ThreadID: "t1", CheckpointID: fromA.Ref.CheckpointID, Step: fromA.Metadata.Step + 1, Node: "a", TaskID: taskIDs["a"], RunID: "run-7",
		RemainingSteps: 25 - (fromA.Metadata.Step + 1)}
	if a.rt != want {
		t.Errorf("runtime of a:\n got %+v\nwant %+v", a.rt, want)
	}
	if !a.ok || a.ctx.ID != "u42" {
		t.Errorf("run context of a = %+v, %v", a.ctx, a.ok)
	}
	in := got["inner"]
	if !strings.HasPrefix(in.rt.NS, "s:") || in.rt.Node != "inner" || in.rt.RunID != "run-7" || in.rt.ThreadID != "t1" {
		t.Errorf("runtime inside the subgraph: %+v", in.rt)
	}
	if !in.ok || in.ctx.ID != "u42" {
		t.Errorf("run context inside the subgraph = %+v, %v", in.ctx, in.ok)
	}
}

// A node and its route read RemainingSteps and IsLastStep from their
// Runtime: a loop whose route goes to END on the last step finishes
// without a RecursionLimitError, and the route sees what its node saw.
// The values are in no checkpoint.
func TestRemainingStepsAndIsLastStep(t *testing.T) {
	log := engine.List[string]("log")
	var routed []string
	g, err := engine.NewGraph("loop", log).
		AddNode("work", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			rt, _ := engine.RuntimeOf(ctx)
			return engine.Updates(log.Add(fmt.Sprintf("%d/%v", rt.RemainingSteps, rt.IsLastStep))), nil
		}).
		AddEdge(engine.START, "work").
		AddConditionalEdges("work", func(ctx context.Context, _ engine.State) (engine.Route, error) {
			rt, ok := engine.RuntimeOf(ctx)
			if !ok {
				return engine.Route{}, errors.New("no runtime in a route")
			}
			routed = append(routed, fmt.Sprintf("%d/%v", rt.RemainingSteps, rt.IsLastStep))
			if rt.IsLastStep {
				return engine.To(engine.END), nil
			}
			return engine.To("work"), nil
		}, engine.Targets("work", engine.END)).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("t"), engine.WithRecursionLimit(4))
	if err != nil {
		t.Fatalf("a route ending on the last step: %v", err)
	}
	want := []string{"3/false", "2/false", "1/true"}
	if got := fmt.Sprint(res.Values["log"]); got != fmt.Sprint(want) {
		t.Errorf("the node saw %s, want %v", got, want)
	}
	if fmt.Sprint(routed) != fmt.Sprint(want) {
		t.Errorf("the route saw %v, want %v", routed, want)
	}
	// A second run on the thread counts from its own first step.
	routed = nil
	if res, err = g.Invoke(ctx, engine.Values{}, engine.WithThread("t"), engine.WithRecursionLimit(3)); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(res.Values["log"]); got != fmt.Sprint(append(want, "2/false", "1/true")) {
		t.Errorf("after a second run the log is %s", got)
	}
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range hist {
		if len(s.Values) > 1 {
			t.Errorf("checkpoint at step %d holds %v: only log is state", s.Metadata.Step, s.Values)
		}
	}
}

// A node over its time limit fails with an error naming the node and the
// limit, and its retry policy runs it again.
func TestNodeTimeout(t *testing.T) {
	k := engine.LastValue[string]("k")
	var attempts atomic.Int32
	slowOnce := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		if attempts.Add(1) == 1 {
			<-ctx.Done() // the first attempt hangs until the limit
			return nil, ctx.Err()
		}
		return engine.Updates(k.Set("done")), nil
	}
	build := func(fn engine.NodeFunc, opts ...engine.NodeOption) *engine.Graph {
		g, err := engine.NewGraph("g", k).AddNode("slow", fn, opts...).AddEdge(engine.START, "slow").Compile()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	ctx := context.Background()

	g := build(slowOnce, engine.WithTimeout(20*time.Millisecond))
	_, err := g.Invoke(ctx, engine.Values{"k": ""})
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Node != "slow" || te.Limit != 20*time.Millisecond {
		t.Fatalf("err = %v, want a TimeoutError of node slow after 20ms", err)
	}
	if !strings.Contains(err.Error(), `node "slow" timed out after 20ms`) {
		t.Errorf("message %q", err)
	}

	attempts.Store(0)
	g = build(slowOnce, engine.WithTimeout(20*time.Millisecond), engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2}))
	res, err := g.Invoke(ctx, engine.Values{"k": ""})
	if err != nil || res.Values["k"] != "done" || attempts.Load() != 2 {
		t.Fatalf("with a retry: %v, %v after %d attempts", err, res, attempts.Load())
	}

	// A node that ignores its context still fails once it returns late.
	g = build(func(ctx context.Context, _ engine.State) (engine.Output, error) {
		time.Sleep(40 * time.Millisecond)
		return engine.Updates(k.Set("late")), nil
	}, engine.WithTimeout(10*time.Millisecond))
	if _, err := g.Invoke(ctx, engine.Values{"k": ""}); !errors.As(err, &te) {
		t.Errorf("a late node: err = %v, want a TimeoutError", err)
	}

	// Cancelling the run is not a timeout.
	cctx, cancel := context.WithCancel(ctx)
	g = build(func(ctx context.Context, _ engine.State) (engine.Output, error) {
		cancel()
		<-ctx.Done()
		return nil, ctx.Err()
	}, engine.WithTimeout(time.Hour))
	if _, err := g.Invoke(cctx, engine.Values{"k": ""}); !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Errorf("cancelled run: err = %v, want context.Canceled", err)
	}
}

// Calls a node records stream as they happen and stay with the task's
// records: History shows them at the checkpoint the step started from,
// across attempts and for a task that failed.
func TestRecordedCallsInHistory(t *testing.T) {
	k := engine.LastValue[string]("k")
	var attempts atomic.Int32
	ask := func(ctx context.Context, _ engine.State) (engine.Output, error) {
		n := attempts.Add(1)
		engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallModel, Name: "m", Provider: "fake", InputTokens: int(n),
			Request: []engine.CallMessage{{Message: engine.Message{Role: engine.RoleUser, Content: "hi"}}}})
		if n == 1 {
			return nil, errors.New("flaky")
		}
		engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallTool, Name: "search", ToolCallID: "c1",
			Args: engine.CallText{Text: `{"q":"x"}`}, Result: engine.CallText{Text: "found"}})
		return engine.Updates(k.Set("ok")), nil
	}
	saver := memory.New()
	g, err := engine.NewGraph("g", k).AddNode("ask", ask, engine.WithRetry(engine.RetryPolicy{MaxAttempts: 2})).
		AddEdge(engine.START, "ask").Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	var live []engine.CallEvent
	_, err = g.Invoke(context.Background(), engine.Values{"k": ""}, engine.WithThread("t"),
		engine.WithObserver(engine.ModeCalls, func(ev engine.Event) { live = append(live, *ev.Call) }))
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 3 || live[0].Node != "ask" || live[0].TaskID == "" || live[2].Record.Kind != engine.CallTool {
		t.Fatalf("streamed calls: %+v", live)
	}
	task := historyTask(t, g, "t", "ask")
	if task == nil {
		t.Fatal("no snapshot has the ask task")
	}
	if len(task.Calls) != 3 || task.Calls[0].InputTokens != 1 || task.Calls[1].InputTokens != 2 ||
		task.Calls[2].Name != "search" || task.Calls[2].Result.Text != "found" || task.Calls[2].ToolCallID != "c1" {
		t.Errorf("stored calls: %+v", task.Calls)
	}
	if task.ID != live[0].TaskID || len(task.Result) != 1 {
		t.Errorf("task %s with result %v; streamed task id %s", task.ID, task.Result, live[0].TaskID)
	}

	// A task that fails for good keeps its calls next to its error.
	attempts.Store(-10)
	failing, err := engine.NewGraph("g", k).AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
		engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallModel, Name: "m", Error: "boom"})
		return nil, errors.New("boom")
	}).AddEdge(engine.START, "ask").Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Invoke(context.Background(), engine.Values{"k": ""}, engine.WithThread("f")); err == nil {
		t.Fatal("the failing node did not fail")
	}
	st, err := failing.GetState(context.Background(), engine.WithThread("f"))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tasks) != 1 || st.Tasks[0].Error == "" || len(st.Tasks[0].Calls) != 1 || st.Tasks[0].Calls[0].Error != "boom" {
		t.Errorf("failed task: %+v", st.Tasks)
	}
	// The run resumes past the stored calls (they are no state write).
	if _, err := g.Invoke(context.Background(), nil, engine.WithThread("f")); err != nil {
		t.Errorf("resuming a thread with stored calls: %v", err)
	}
}

// Records are bounded: long texts are cut with their full size kept, long
// requests keep the first and newest messages, and a task keeps MaxCalls.
func TestRecordedCallsAreBounded(t *testing.T) {
	k := engine.LastValue[string]("k")
	long := strings.Repeat("é", engine.MaxCallText) // 2 bytes a character
	var msgs []engine.CallMessage
	msgs = append(msgs, engine.CallMessage{Message: engine.Message{Role: engine.RoleSystem, Content: "system"}})
	for range 40 {
		msgs = append(msgs, engine.CallMessage{Message: engine.Message{Role: engine.RoleUser, Content: long}})
	}
	shot := make([]byte, 1<<20)
	msgs[40].Attachments = []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Data: shot}}
	g, err := engine.NewGraph("g", k).AddNode("a", func(ctx context.Context, _ engine.State) (engine.Output, error) {
		engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallModel, Request: []engine.CallMessage{}}) // an empty request is no problem
		for range engine.MaxCalls + 2 {
			engine.RecordCall(ctx, engine.CallRecord{Kind: engine.CallModel, Name: "m", Request: msgs,
				Reply: &engine.CallMessage{Message: engine.Message{Role: engine.RoleAssistant, Content: long,
					ToolCalls: []engine.ToolCall{{ID: "1", Name: "t", Args: long}}}}})
		}
		return nil, nil
	}).AddEdge(engine.START, "a").Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(context.Background(), engine.Values{"k": ""}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	task := historyTask(t, g, "t", "a")
	if task == nil || len(task.Calls) != engine.MaxCalls || task.CallsDropped != 3 {
		t.Fatalf("task keeps %d calls, dropped %d", len(task.Calls), task.CallsDropped)
	}
	rec := task.Calls[1]
	if rec.Reply.Size != len(long) || len(rec.Reply.Content) > engine.MaxCallText || !strings.HasPrefix(long, rec.Reply.Content) {
		t.Errorf("reply cut to %d bytes, size %d", len(rec.Reply.Content), rec.Reply.Size)
	}
	if len(rec.Reply.ToolCalls[0].Args) > engine.MaxCallText {
		t.Errorf("tool call arguments kept whole: %d bytes", len(rec.Reply.ToolCalls[0].Args))
	}
	total := 0
	for _, m := range rec.Request {
		total += len(m.Content)
	}
	if rec.Request[0].Content != "system" || total > engine.MaxCallRequest || rec.Omitted != 41-len(rec.Request) || rec.Omitted == 0 {
		t.Errorf("request kept %d messages (%d bytes), omitted %d", len(rec.Request), total, rec.Omitted)
	}
	if rec.Request[1].Size != len(long) {
		t.Errorf("a cut request message records size %d, want %d", rec.Request[1].Size, len(long))
	}
	if a := rec.Request[len(rec.Request)-1].Attachments; len(a) != 1 || a[0].Data != nil || a[0].Size != len(shot) || a[0].MIMEType != "image/png" {
		t.Errorf("an attachment is recorded as %+v, want its kind and size without its bytes", a)
	}
	if msgs[40].Attachments[0].Data == nil {
		t.Error("bounding the record cleared the caller's attachment")
	}
}

// historyTask returns the task of node in the thread's history (the last
// one listed, the oldest), or nil.
func historyTask(t *testing.T, g *engine.Graph, thread, node string) *engine.TaskState {
	t.Helper()
	hist, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	var task *engine.TaskState
	for _, s := range hist {
		for i := range s.Tasks {
			if s.Tasks[i].Name == node {
				task = &s.Tasks[i]
			}
		}
	}
	return task
}
