package agentview_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/lgserver"
)

// TestViewIsTheServersView runs the approval graph on LangGraph's own dev
// server to its subgraph's interrupt, then reads it through the view as
// the studio does, and checks every read against what the server itself
// answers: the graphs and their drawing, the thread list, the head with
// its subgraph's state and interrupt, the history of both namespaces,
// a subgraph checkpoint, pending writes, and the refusals.
func TestViewIsTheServersView(t *testing.T) {
	srv := lgserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var tids []string
	for _, topic := range []string{"otters", "kelp"} {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Stream(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": topic}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Collect(); err != nil {
			t.Fatal(err)
		}
		tids = append(tids, th.ThreadID)
	}
	never, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	tid := tids[1] // kelp, the newest run

	v, err := agentview.Open(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if d := v.Describe(); !strings.Contains(d, "LangGraph server") || !strings.Contains(d, srv.URL) {
		t.Errorf("Describe() = %q", d)
	}
	var names []string
	var approval *engine.Graph
	for _, g := range v.Graphs() {
		names = append(names, g.Name)
		if g.Name == "approval" {
			approval = g.Graph
		}
	}
	if !slices.Equal(names, []string{"agent", "approval"}) || approval == nil {
		t.Fatalf("graphs %v, want agent and approval", names)
	}
	topo := approval.Topology()
	var research *engine.Topology
	var nodes []string
	for _, n := range topo.Nodes {
		nodes = append(nodes, n.Name)
		if n.Name == "research" {
			research = n.Subgraph
		}
	}
	if !slices.Contains(nodes, "review") || research == nil || !slices.ContainsFunc(research.Nodes, func(n engine.TopoNode) bool { return n.Name == "pick" }) {
		t.Fatalf("drawing nodes %v, research's subgraph %+v: want review, and pick inside research", nodes, research)
	}

	sv := v.Saver()
	ts, ok := sv.(checkpoint.ThreadSearcher)
	if !ok {
		t.Fatal("the saver cannot list threads")
	}
	page, err := ts.SearchThreads(ctx, checkpoint.ThreadQuery{Filter: map[string]any{engine.MetaGraph: "approval"}})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, in := range page.Threads {
		listed = append(listed, in.ThreadID)
		if in.Err != nil || in.LatestMeta.Extra[engine.MetaGraph] != "approval" || in.Latest.CheckpointID == "" {
			t.Errorf("listed %+v: want its head and the approval tag", in)
		}
	}
	if !slices.Equal(listed, []string{tids[1], tids[0]}) || page.More {
		t.Errorf("approval's threads %v (more %v), want %v newest first", listed, page.More, []string{tids[1], tids[0]})
	}
	page, err = ts.SearchThreads(ctx, checkpoint.ThreadQuery{Filter: map[string]any{engine.MetaGraph: nil}})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].ThreadID != never.ThreadID || page.Threads[0].Latest.CheckpointID != "" {
		t.Errorf("threads of no graph: %+v, %v; want only %s, without a head", page.Threads, err, never.ThreadID)
	}
	page, err = ts.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: 1})
	if err != nil || len(page.Threads) != 1 || !page.More {
		t.Fatalf("first page of one: %+v, %v", page, err)
	}
	next, err := ts.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: 5, After: &page.Threads[0]})
	if err != nil || len(next.Threads) != 2 || next.More || next.Threads[0].ThreadID == page.Threads[0].ThreadID {
		t.Errorf("the page after %s: %+v, %v", page.Threads[0].ThreadID, next, err)
	}
	page, err = ts.SearchThreads(ctx, checkpoint.ThreadQuery{Search: strings.ToUpper(tids[0][len(tids[0])-6:])})
	if err != nil || len(page.Threads) != 1 || page.Threads[0].ThreadID != tids[0] {
		t.Errorf("search by id: %+v, %v", page.Threads, err)
	}

	// The head, with the subgraph waiting inside research.
	want, err := c.GetState(ctx, tid, agentclient.StateQuery{Subgraphs: true})
	if err != nil {
		t.Fatal(err)
	}
	head, err := approval.GetState(ctx, engine.WithThread(tid), engine.WithSubgraphs())
	if err != nil {
		t.Fatal(err)
	}
	if head.Ref.CheckpointID != want.Checkpoint.CheckpointID || !slices.Equal(head.Next, []string{"research"}) || head.Values["topic"] != "kelp" {
		t.Fatalf("head %s next %v values %v, want %s [research] topic kelp", head.Ref.CheckpointID, head.Next, head.Values, want.Checkpoint.CheckpointID)
	}
	if head.Parent == nil || head.Parent.CheckpointID != want.ParentID() || head.Metadata.Source != checkpoint.SourceLoop || head.Metadata.Step != want.Step() {
		t.Errorf("head parent %v, metadata %+v; want parent %s, loop step %d", head.Parent, head.Metadata, want.ParentID(), want.Step())
	}
	wantIts := want.Interrupts()
	open := head.OpenInterrupts()
	if len(wantIts) != 1 || len(open) != 1 || open[0].ID != wantIts[0].ID || open[0].Node != "research" {
		t.Fatalf("open interrupts %+v, server's %+v", open, wantIts)
	}
	var q map[string]any
	_ = json.Unmarshal(wantIts[0].Value, &q)
	if got, _ := json.Marshal(open[0].Value); string(got) != string(mustJSON(t, q)) {
		t.Errorf("interrupt value %s, want %s", got, mustJSON(t, q))
	}
	task := head.Tasks[0]
	if task.Name != "research" || task.Path != "pull:research" || task.State == nil || !strings.HasPrefix(task.NS, "research:") {
		t.Fatalf("research task %+v: want its path, namespace and state", task)
	}
	sub := task.State
	if !slices.Equal(sub.Next, []string{"pick"}) || sub.Ref.NS != task.NS || len(sub.Tasks) != 1 || len(sub.Tasks[0].Interrupts) != 1 || sub.Tasks[0].Interrupts[0].NS != task.NS {
		t.Errorf("subgraph state %+v: want pick next with its interrupt in %s", sub, task.NS)
	}

	// History: the root's, then the subgraph's namespace, as the server
	// lists them.
	var wantIDs []string
	hist, err := c.History(ctx, tid, agentclient.HistoryQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hist {
		wantIDs = append(wantIDs, h.Checkpoint.CheckpointID)
	}
	var gotIDs []string
	for sn, err := range approval.HistorySeq(ctx, checkpoint.ListOptions{}, engine.WithThread(tid)) {
		if err != nil {
			t.Fatal(err)
		}
		gotIDs = append(gotIDs, sn.Ref.CheckpointID)
	}
	if !slices.Equal(gotIDs, wantIDs) || len(gotIDs) < 3 {
		t.Errorf("history %v, want the server's %v", gotIDs, wantIDs)
	}
	var subIDs []string
	for sn, err := range approval.HistorySeq(ctx, checkpoint.ListOptions{}, engine.WithThread(tid), engine.WithNamespace(task.NS)) {
		if err != nil {
			t.Fatal(err)
		}
		subIDs = append(subIDs, sn.Ref.CheckpointID)
		if sn.Ref.NS != task.NS {
			t.Errorf("subgraph checkpoint %s in namespace %q, want %q", sn.Ref.CheckpointID, sn.Ref.NS, task.NS)
		}
	}
	if len(subIDs) < 2 || subIDs[0] != sub.Ref.CheckpointID {
		t.Errorf("subgraph history %v, want it to start at the waiting checkpoint %s", subIDs, sub.Ref.CheckpointID)
	}
	limited := 0
	for _, err := range sv.List(ctx, checkpoint.ListOptions{ThreadID: tid, Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		limited++
	}
	if limited != 2 {
		t.Errorf("List with Limit 2 gave %d", limited)
	}

	// A checkpoint's stored outcomes, as the timeline marks them.
	tp, err := sv.Get(ctx, checkpoint.Ref{ThreadID: tid, CheckpointID: head.Ref.CheckpointID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(tp.PendingWrites, func(w checkpoint.PendingWrite) bool {
		return w.Channel == checkpoint.Interrupt && w.TaskPath == "pull:research"
	}) {
		t.Errorf("head's pending writes %+v: want the interrupt", tp.PendingWrites)
	}
	if string(tp.Checkpoint.ChannelValues["topic"]) != `"kelp"` {
		t.Errorf("head's stored topic %s", tp.Checkpoint.ChannelValues["topic"])
	}
	if len(hist) > 1 {
		old := hist[len(hist)-1].Checkpoint.CheckpointID
		past, err := approval.GetState(ctx, engine.WithThread(tid), engine.WithCheckpoint(old))
		if err != nil || past.Ref.CheckpointID != old {
			t.Errorf("state at %s: %+v, %v", old, past, err)
		}
	}

	// Refusals and a missing thread.
	// The server runs the graph (run_test.go, and the studio's test);
	// answers left for workers are a Weft store's alone.
	if _, err := approval.SubmitAnswer(ctx, engine.Command{Resume: "x"}, engine.WithThread(tid)); !errors.Is(err, engine.ErrView) || err.Error() != agentview.Runs {
		t.Errorf("SubmitAnswer on the view: %v, want ErrView saying %q", err, agentview.Runs)
	}
	if _, err := sv.Put(ctx, checkpoint.Ref{ThreadID: tid}, checkpoint.Checkpoint{}, checkpoint.Metadata{}, nil); !errors.Is(err, checkpoint.ErrReadOnly) {
		t.Errorf("Put: %v, want ErrReadOnly", err)
	}
	if err := sv.DeleteThread(ctx, tid); !errors.Is(err, checkpoint.ErrReadOnly) {
		t.Errorf("DeleteThread: %v, want ErrReadOnly", err)
	}
	if _, err := approval.GetState(ctx, engine.WithThread("0b7d5a53-0000-4000-8000-00000000f41c")); !errors.Is(err, checkpoint.ErrNotFound) || !strings.Contains(err.Error(), "0b7d5a53-0000-4000-8000-00000000f41c") {
		t.Errorf("a missing thread: %v, want ErrNotFound naming it", err)
	}
	if _, err := sv.Get(ctx, checkpoint.Ref{ThreadID: never.ThreadID}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("a thread that never ran: %v, want ErrNotFound", err)
	}

	// Runs another client started: followed as they go, and cancelled.
	if !approval.ViewFollows() {
		t.Fatal("the server's graph does not follow runs started elsewhere")
	}
	if _, err := approval.FollowView(ctx, tid, func(engine.Event) {}); !errors.Is(err, engine.ErrNoRun) {
		t.Errorf("following an idle thread: %v, want ErrNoRun", err)
	}
	background := func(topic string, delay int) string {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateRun(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": topic},
			Config: &agentclient.RunConfig{Configurable: map[string]any{"delay_ms": delay}}, StreamMode: []string{"updates", "tasks"}}); err != nil {
			t.Fatal(err)
		}
		return th.ThreadID
	}
	slow := background("slow", 1500)
	var seen []string
	var mu sync.Mutex
	if _, err := approval.FollowView(ctx, slow, func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Update != nil:
			seen = append(seen, "update "+ev.Update.Node)
		case ev.Task != nil && !ev.Task.Done:
			seen = append(seen, "start "+ev.Task.Name)
		}
	}); err != nil {
		t.Fatalf("following a background run: %v", err)
	}
	mu.Lock()
	if !slices.Contains(seen, "update plan") || !slices.Contains(seen, "start research") {
		t.Errorf("followed events %v: want plan's update and research's start", seen)
	}
	mu.Unlock()
	if st, err := approval.GetState(ctx, engine.WithThread(slow)); err != nil || !slices.Equal(st.Next, []string{"research"}) {
		t.Errorf("after the followed run: %+v, %v; want it waiting in research", st, err)
	}
	stuck := background("cancel me", 20000)
	if err := approval.CancelView(ctx, stuck); err != nil {
		t.Fatalf("cancelling a background run: %v", err)
	}
	if th, err := c.GetThread(ctx, stuck); err != nil || th.Status == "busy" {
		t.Errorf("after the cancel the thread is %+v, %v", th, err)
	}
	if err := approval.CancelView(ctx, stuck); !errors.Is(err, engine.ErrNoRun) {
		t.Errorf("cancelling again: %v, want ErrNoRun", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
