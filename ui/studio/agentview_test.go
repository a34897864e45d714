package studio

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint/store"
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
	if !s.tb.run.Disabled() || !s.tb.step.Disabled() || !s.tb.newBtn.Disabled() || !s.ip.resumeB.Disabled() || !s.insp.forkB.Disabled() {
		t.Errorf("enabled: run %v, step %v, new %v, resume %v, fork %v", !s.tb.run.Disabled(), !s.tb.step.Disabled(),
			!s.tb.newBtn.Disabled(), !s.ip.resumeB.Disabled(), !s.insp.forkB.Disabled())
	}
	if !strings.Contains(s.sb.text.Text, "read-only") {
		t.Errorf("status line %q", s.sb.text.Text)
	}
	act(s.Run)
	idle(t, s)
	if txt := overlayText(s.Window()); !strings.Contains(txt, "LangGraph server") {
		t.Errorf("Run on a server's graph said %q", txt)
	}
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
}
