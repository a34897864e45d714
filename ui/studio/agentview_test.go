package studio

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/google/uuid"
	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/lgserver"
)

// TestLangGraphServerInTheStudio: -store http://… on LangGraph's own dev
// server opens on the server's graphs, drawn from its x-ray drawing; a
// thread run there to the interrupt inside its subgraph lists under its
// graph and shows the question and the subgraph's state; its timeline is
// the server's history; what the studio cannot yet ask a server for is
// disabled, and refused by key with the sentence saying what does it.
func TestLangGraphServerInTheStudio(t *testing.T) {
	srv := lgserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Stream(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "otters"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Collect(); err != nil {
		t.Fatal(err)
	}
	hist, err := c.History(ctx, th.ThreadID, agentclient.HistoryQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}

	sv, err := store.Open(ctx, srv.URL) // as -store and File → Open do
	if err != nil {
		t.Fatal(err)
	}
	s := newStudio(t, sv)
	idle(t, s)
	if !slices.Equal(s.tb.graphSel.Options, []string{"agent", "approval"}) {
		t.Fatalf("graph list %v, want the server's graphs", s.tb.graphSel.Options)
	}
	i := slices.IndexFunc(s.m.graphs, func(g Graph) bool { return g.Graph.Name() == "approval" })
	act(func() { s.m.setGraph(i) })
	idle(t, s)
	if !strings.Contains(s.m.graph().Description, "LangGraph server") {
		t.Errorf("description %q", s.m.graph().Description)
	}
	if len(s.m.threads) != 1 || s.m.threads[0].ID != th.ThreadID || s.m.threads[0].Status != "waiting" {
		t.Fatalf("threads %+v, want %s waiting", s.m.threads, th.ThreadID)
	}
	if _, where := threadSubtitle(s.m.threads[0]); strings.Contains(where, "checkpoints") {
		t.Errorf("the row claims a checkpoint count the server did not give: %q", where)
	}
	act(func() { s.m.setThread(th.ThreadID) })
	idle(t, s)
	sc := s.m.scope()
	if q := sc.pending(); len(q) != 1 || q[0].Node != "research" || q[0].ID == "" {
		t.Fatalf("pending %+v, want the pick question on research", q)
	}
	if sc.head != hist[0].Checkpoint.CheckpointID {
		t.Errorf("head %s, server's %s", sc.head, hist[0].Checkpoint.CheckpointID)
	}
	if v := sc.view; v == nil || len(v.Snap.Tasks) != 1 || v.Snap.Tasks[0].State == nil {
		t.Errorf("the research task carries no subgraph state: %+v", v)
	}
	if _, ok := s.insp.values["topic"]; !ok {
		t.Errorf("the state shows %v, not the thread's topic", s.insp.values)
	}
	// The server runs its graph: Run, Step, New, answers and fork are
	// offered; what only Weft's engine does is not, and says why.
	if s.tb.run.Disabled() || s.tb.step.Disabled() || s.tb.newBtn.Disabled() || s.insp.forkB.Disabled() || s.insp.rerunB.Disabled() {
		t.Errorf("disabled: run %v, step %v, new %v, fork %v, re-run %v", s.tb.run.Disabled(), s.tb.step.Disabled(),
			s.tb.newBtn.Disabled(), s.insp.forkB.Disabled(), s.insp.rerunB.Disabled())
	}
	if !s.tb.stepInto.Disabled() || !s.insp.whatIfB.Disabled() || !s.ip.leaveB.Disabled() {
		t.Errorf("enabled: step into %v, what-if %v, leave for workers %v", !s.tb.stepInto.Disabled(), !s.insp.whatIfB.Disabled(), !s.ip.leaveB.Disabled())
	}
	if !strings.Contains(s.sb.text.Text, "runs on the server") {
		t.Errorf("status line %q", s.sb.text.Text)
	}
	act(func() { s.startRun(kindStepInto, runRequest{}) })
	idle(t, s)
	if txt := overlayText(s.Window()); !strings.Contains(txt, "stepping into") {
		t.Errorf("Step into on a server's graph said %q", txt)
	}
	act(func() {
		ov := s.Window().Canvas().Overlays()
		ov.Top().Hide()
		ov.Remove(ov.Top())
	})

	// Safe resume: an answer naming a checkpoint that is no longer the
	// head is refused, and the thread is not moved.
	g := s.m.graph().Graph
	if _, err := g.UpdateState(ctx, engine.Updates(engine.Write{Channel: "log", Value: []any{"elsewhere"}}), "plan",
		engine.WithThread(th.ThreadID), engine.WithCheckpoint(hist[1].Checkpoint.CheckpointID)); err != nil {
		t.Fatal(err)
	}
	moved, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Invoke(ctx, engine.Command{Resume: "fact A about otters"}, engine.WithThread(th.ThreadID), engine.WithCheckpoint(sc.head))
	if !errors.Is(err, engine.ErrViewMoved) {
		t.Fatalf("a stale answer: %v, want ErrViewMoved", err)
	}
	after, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Checkpoint.CheckpointID != moved.Checkpoint.CheckpointID {
		t.Errorf("the refused answer moved the thread to %s", after.Checkpoint.CheckpointID)
	}

	// A second thread, started from the studio: one step, then the
	// question inside the subgraph answered on the card, then the review.
	id := uuid.NewString()
	act(func() { s.startThread(id, engine.Values{"topic": "kelp"}) })
	waitRun(t, s)
	sc = s.m.scope()
	if v := sc.view; v == nil || !slices.Equal(v.Snap.Next, []string{"research"}) {
		t.Fatalf("after the first step: %+v, want next research", sc.view)
	}
	act(s.Run)
	waitRun(t, s)
	sc = s.m.scope()
	if q := sc.pending(); len(q) != 1 || q[0].Node != "research" {
		t.Fatalf("after Run: pending %+v, want the pick question", q)
	}
	act(func() { s.resume("fact B about kelp", nil) })
	waitRun(t, s)
	sc = s.m.scope()
	if q := sc.pending(); len(q) != 1 || q[0].Node != "review" {
		t.Fatalf("after the answer: pending %+v, want the review question", q)
	}
	act(func() { s.resume(true, nil) })
	waitRun(t, s)
	done, err := c.GetState(ctx, id, agentclient.StateQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(done.Next) != 0 || !strings.Contains(string(done.Values), `"chosen":"fact B about kelp"`) || !strings.Contains(string(done.Values), "published") {
		t.Fatalf("the thread ended at %s with next %v", done.Values, done.Next)
	}

	// Edit & fork at the checkpoint after plan, as plan, then run the
	// new branch: the subgraph asks again, about the edited topic.
	hist2, err := c.History(ctx, id, agentclient.HistoryQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var afterPlan string
	for _, h := range hist2 {
		if slices.Equal(h.Next, []string{"research"}) {
			afterPlan = h.Checkpoint.CheckpointID
		}
	}
	var forkErr error
	act(func() {
		s.forkAt(s.m.scope(), afterPlan, "topic", []byte(`"reefs"`), "plan", true, func(err error) { forkErr = err })
	})
	idle(t, s)
	waitRun(t, s)
	if forkErr != nil {
		t.Fatal(forkErr)
	}
	sc = s.m.scope()
	if q := sc.pending(); len(q) != 1 || q[0].Node != "research" || !strings.Contains(toJSONString(q[0].Value), "reefs") {
		t.Fatalf("the fork's run asks %+v, want the pick question about reefs", q)
	}

	// Compare and watches on the server's thread: the fork against the
	// branch that was published, and a watch along the thread.
	forkHead, mainHead := sc.head, hist2[0].Checkpoint.CheckpointID
	act(func() { s.compareDialog(forkHead, mainHead) })
	idle(t, s)
	f, _ := inOverlays[*compareForm](s.win)
	if f == nil || f.cmp == nil {
		t.Fatalf("no comparison: %q", overlayText(s.Window()))
	}
	if f.cmp.Ancestor != afterPlan {
		t.Errorf("the branches part at %s, want %s (after plan)", f.cmp.Ancestor, afterPlan)
	}
	topicDiffers := false
	for _, d := range f.cmp.Channels {
		topicDiffers = topicDiffers || d.Channel == "topic" && !d.Equal
	}
	if !topicDiffers {
		t.Errorf("the comparison finds topic equal: %+v", f.cmp.Channels)
	}
	act(func() {
		ov := s.Window().Canvas().Overlays()
		ov.Remove(ov.Top())
	})
	w := s.dbg.watch
	typeInto(w.entry, "len(log)")
	act(w.add)
	idle(t, s)
	if len(s.m.dbg.Watches) != 1 {
		t.Fatalf("the watch was not added: %q", w.check.Text)
	}
	if v, _ := w.valueAt(0); v != "1" { // plan's one line; the edit as plan wrote topic alone
		t.Errorf("len(log) at the fork's head: %q", v)
	}
	if c := sc.dbg.cols; c == nil || c.Running || len(c.Rows) != sc.tl.count() {
		t.Errorf("watch columns %+v for %d checkpoints", c, sc.tl.count())
	}
	act(func() { s.m.removeWatch(0) })

	// Runs another client started in the background: the window follows
	// the selected thread's as it goes (its events in the log, the
	// thread read again as nodes write), and Esc cancels one on the
	// server.
	// A resumable run's stream joined late starts at the join: events
	// before it are not sent again (langgraph-server-api.md, 3.5).
	background := func(topic string, delay int, resumable bool) string {
		bid := uuid.NewString()
		if _, err := c.CreateThread(ctx, agentclient.ThreadCreate{ThreadID: bid}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CreateRun(ctx, bid, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": topic},
			Config: &agentclient.RunConfig{Configurable: map[string]any{"delay_ms": delay}}, StreamMode: []string{"updates", "tasks"}, StreamResumable: resumable}); err != nil {
			t.Fatal(err)
		}
		return bid
	}
	// until polls cond on the UI goroutine for up to a minute.
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			var ok bool
			act(func() { ok = cond() })
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within a minute", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	slow := background("tides", 4000, false)
	act(func() { s.m.setThread(slow) })
	// The question may show (a poll's read) a moment before the last
	// events are flushed to the list: both are waited for.
	var followed []string
	until("followed run reaching the pick question, plan's update in the events", func() bool {
		sc := s.m.scope()
		q := sc.pending()
		followed = followed[:0]
		for _, r := range sc.events {
			followed = append(followed, r.Mode+" "+r.Node)
		}
		return sc.thread == slow && len(q) == 1 && q[0].Node == "research" && strings.Contains(toJSONString(q[0].Value), "tides") &&
			slices.Contains(followed, "updates plan")
	})
	stuck := background("storms", 30000, true)
	act(func() { s.m.setThread(stuck) })
	// Its row says it runs, and the graph lights plan, which began before
	// the window looked (its start is not in the joined stream).
	until("slow run shown running", func() bool {
		i := slices.IndexFunc(s.m.threads, func(r threadRow) bool { return r.ID == stuck })
		return s.follow.thread == stuck && i >= 0 && s.m.threads[i].Status == "running" && s.m.scope().live["plan"]
	})
	if s.tb.cancel.Disabled() || !strings.Contains(s.sb.text.Text, "running elsewhere") {
		t.Errorf("while a run started elsewhere is followed: Cancel disabled %v, status line %q", s.tb.cancel.Disabled(), s.sb.text.Text)
	}
	act(s.Cancel)
	idle(t, s)
	runs, err := c.ListRuns(ctx, stuck, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Status != "interrupted" {
		t.Errorf("after Esc the server's run is %+v, want interrupted", runs)
	}
	if strings.Contains(s.sb.text.Text, "running elsewhere") || !s.tb.cancel.Disabled() {
		t.Errorf("after the followed run ended: status line %q, Cancel disabled %v", s.sb.text.Text, s.tb.cancel.Disabled())
	}

	// The agent graph, started and run from the studio: its model's
	// tokens stream in as message events, and the Chat tab shows the
	// conversation the server's state holds (LangChain's messages).
	ai := slices.IndexFunc(s.m.graphs, func(g Graph) bool { return g.Graph.Name() == "agent" })
	act(func() { s.m.setGraph(ai) })
	idle(t, s)
	aid := uuid.NewString()
	act(func() {
		s.startThread(aid, engine.Values{"messages": []any{map[string]any{"role": "user", "content": "2+3?"}}})
	})
	waitRun(t, s)
	act(s.Run)
	waitRun(t, s)
	sc = s.m.scope()
	var tokens int
	for _, r := range sc.events {
		if r.Mode == engine.ModeMessages.String() && r.Node == "agent" {
			tokens += r.Chunks
		}
	}
	if tokens < 2 {
		t.Errorf("the run's events hold %d streamed chunks from agent: %+v", tokens, sc.events)
	}
	if !slices.Contains(s.insp.tabs.Items, s.insp.chatTab) {
		t.Fatal("no Chat tab on the agent's thread")
	}
	act(func() { s.insp.tabs.Select(s.insp.chatTab) })
	var roles, texts []string
	var call, result string
	act(func() {
		for _, b := range s.insp.chat.bubbles {
			roles = append(roles, b.msg.Role)
			texts = append(texts, b.msg.Content)
			for _, tc := range b.msg.ToolCalls {
				call, result = tc.Name+" "+tc.Args, b.results[tc.ID].Content
			}
		}
	})
	// The tool's answer is drawn under the call that asked for it.
	if !slices.Equal(roles, []string{"user", "assistant", "assistant"}) || texts[0] != "2+3?" || texts[2] != "The answer is 5." {
		t.Errorf("the chat shows %q: %q", roles, texts)
	}
	if call != `add {"a":2,"b":3}` || result != "5" {
		t.Errorf("the tool call %q answered %q", call, result)
	}
}

// waitRun waits for the studio's run to end, failing after a minute.
func waitRun(t *testing.T, s *Studio) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		idle(t, s)
		var going bool
		act(func() { going = s.m.run.Going })
		if !going {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not end in a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func toJSONString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestLangGraphServerDown: a server that does not answer is an error
// dialog naming what failed, and the window stays usable (File → Open).
func TestLangGraphServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close() // nothing listens there now
	sv, err := store.Open(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	s := newStudio(t, sv)
	idle(t, s)
	txt := overlayText(s.Window())
	if !strings.Contains(txt, "Connecting to the LangGraph server") || !strings.Contains(txt, l.Addr().String()) {
		t.Errorf("the dialog says %q", txt)
	}
	if len(s.m.graphs) != 0 || s.m.note != "" {
		t.Errorf("graphs %d, note %q after the failure", len(s.m.graphs), s.m.note)
	}
	if !s.tb.run.Disabled() || !s.tb.step.Disabled() || !s.tb.newBtn.Disabled() {
		t.Errorf("with no graph: run disabled %v, step %v, new thread %v", s.tb.run.Disabled(), s.tb.step.Disabled(), s.tb.newBtn.Disabled())
	}
}

// A server that does not answer holds nothing up: the window stays
// usable while it is asked for its graphs, and opening another store
// stops asking it at once, with no late dialog about it.
func TestSlowServerHoldsNothing(t *testing.T) {
	asked := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case asked <- struct{}{}:
		default:
		}
		<-r.Context().Done() // answers never
	}))
	defer srv.Close()
	sv, err := store.Open(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := openStudio(t, test.NewTempApp(t), Config{Store: sv, StoreName: srv.URL, Graphs: demoGraphs(t)})
	<-asked
	var note string
	act(func() { note = s.m.note }) // the UI goroutine is free
	if !strings.Contains(note, "asking") {
		t.Errorf("while the server is asked, the note says %q", note)
	}
	act(func() { s.useStore(memory.New(), "local.db") })
	idle(t, s) // fails after 10 s if the server is still waited for (a minute)
	if len(s.m.graphs) != len(demoGraphs(t)) || s.m.storeName != "local.db" {
		t.Errorf("after opening another store: %d graphs, store %q", len(s.m.graphs), s.m.storeName)
	}
	if txt := overlayText(s.Window()); txt != "" {
		t.Errorf("a dialog about the server left behind: %q", txt)
	}
}
