package studio

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
)

// openLangGraph opens a fixture store written by LangGraph itself
// (checkpoint/langgraph/testdata), read-only.
func openLangGraph(t *testing.T, name string) *langgraph.Reader {
	t.Helper()
	path := testenv.LangGraphFixture(t, name+".sqlite")
	r, err := langgraph.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestLangGraphStoreInTheStudio: a LangGraph store opens on its own
// graphs (inferred from its threads), a thread waiting inside a subgraph
// shows its question, and everything that would run or write is disabled
// and, asked for by key, refused with the sentence saying what would do it.
func TestLangGraphStoreInTheStudio(t *testing.T) {
	for _, name := range []string{"py-sqlite", "js-sqlite"} {
		t.Run(name, func(t *testing.T) {
			s := newStudio(t, openLangGraph(t, name))
			idle(t, s)
			if len(s.m.graphs) < 2 || slices.ContainsFunc(s.m.graphs, func(g Graph) bool { return !g.Graph.IsView() }) {
				t.Fatalf("%d graphs, not all views", len(s.m.graphs))
			}
			if !slices.Equal(s.tb.graphSel.Options[:1], []string{s.m.graphs[0].Graph.Name()}) {
				t.Errorf("graph list %v", s.tb.graphSel.Options)
			}
			i := slices.IndexFunc(s.m.graphs, func(g Graph) bool { return strings.Contains(g.Graph.Name(), "review") })
			if i < 0 {
				t.Fatalf("no graph with the review subgraph among %v", s.tb.graphSel.Options)
			}
			act(func() { s.m.setGraph(i) })
			idle(t, s)
			if !slices.ContainsFunc(s.m.threads, func(r threadRow) bool { return r.ID == "subgraph-interrupt-pending" }) {
				t.Fatalf("thread list of %q lacks subgraph-interrupt-pending (%d rows)", s.m.graph().Graph.Name(), len(s.m.threads))
			}
			act(func() { s.m.setThread("subgraph-interrupt-pending") })
			idle(t, s)
			sc := s.m.scope()
			if q := sc.pending(); len(q) != 1 || q[0].Node != "review" || q[0].ID == "" { // LangGraph shows the question on the root task that runs the subgraph
				t.Fatalf("pending %+v", q)
			}
			if !s.tb.run.Disabled() || !s.tb.step.Disabled() || !s.tb.newBtn.Disabled() || !s.ip.resumeB.Disabled() || !s.insp.forkB.Disabled() || !s.insp.rerunB.Disabled() {
				t.Errorf("enabled: run %v, step %v, new %v, resume %v, fork %v, rerun %v", !s.tb.run.Disabled(), !s.tb.step.Disabled(),
					!s.tb.newBtn.Disabled(), !s.ip.resumeB.Disabled(), !s.insp.forkB.Disabled(), !s.insp.rerunB.Disabled())
			}
			if _, ok := s.insp.values["draft"]; !ok {
				t.Errorf("the state shows %v, not the thread's draft", s.insp.values)
			}
			if !strings.Contains(s.sb.text.Text, "read-only") {
				t.Errorf("status line %q", s.sb.text.Text)
			}
			if len(s.ip.items) != 1 || !s.ip.items[0].answer.Disabled() {
				t.Errorf("%d cards; the answer field takes input on a read-only thread", len(s.ip.items))
			}
			head := sc.head
			act(s.Run)
			idle(t, s)
			if txt := overlayText(s.Window()); !strings.Contains(txt, "LangGraph program that wrote them") {
				t.Errorf("Run on a view said %q", txt)
			}
			if s.m.scope().head != head {
				t.Error("the thread moved")
			}

			// parallel-interrupts: both questions asked at step 0 were
			// answered there, which LangGraph keeps on that checkpoint.
			i = slices.IndexFunc(s.m.graphs, func(g Graph) bool { return strings.Contains(g.Graph.Name(), "ask_a, ask_b") })
			if i < 0 {
				t.Fatalf("no parallel-interrupts graph among %v", s.tb.graphSel.Options)
			}
			act(func() { s.m.setGraph(i) })
			idle(t, s)
			act(func() { s.m.setThread("parallel-interrupts") })
			idle(t, s)
			g, store := s.sess.current()
			var first string
			for snap, err := range g.WithSaver(store).HistorySeq(context.Background(), checkpoint.ListOptions{}, engine.WithThread("parallel-interrupts")) {
				if err != nil {
					t.Fatal(err)
				}
				if snap.Metadata.Step == 0 {
					first = snap.Ref.CheckpointID
				}
			}
			act(func() { s.m.selectCheckpoint(first) })
			idle(t, s)
			answered := 0
			for _, r := range s.insp.taskRows {
				if strings.HasPrefix(r[0], "ask_") && strings.Contains(r[0], "answered, wrote") {
					answered++
				}
			}
			if answered != 2 {
				t.Errorf("step 0's tasks: %v", s.insp.taskRows)
			}

			// messages-tools: LangChain's messages, as LangGraph stored
			// them, in the Chat tab, the tool's answer under its call.
			i = slices.IndexFunc(s.m.graphs, func(g Graph) bool { return strings.Contains(g.Graph.Name(), "tools") })
			if i < 0 {
				t.Fatalf("no agent graph among %v", s.tb.graphSel.Options)
			}
			act(func() { s.m.setGraph(i) })
			idle(t, s)
			act(func() { s.m.setThread("messages-tools") })
			idle(t, s)
			if !slices.Contains(s.insp.tabs.Items, s.insp.chatTab) {
				t.Fatal("no Chat tab on messages-tools")
			}
			act(func() { s.insp.tabs.Select(s.insp.chatTab) })
			var roles []string
			results := 0
			act(func() {
				for _, b := range s.insp.chat.bubbles {
					roles = append(roles, b.msg.Role)
					results += len(b.results)
				}
			})
			if !slices.Equal(roles, []string{"system", "user", "assistant", "assistant"}) || results == 0 {
				t.Errorf("the chat shows %q with %d tool results", roles, results)
			}
		})
	}
}

// A LangGraph thread whose head applies a pending write by a reducer the
// store does not keep says so in the inspector's title (node-error: its
// finished branch's list written over a list written once).
func TestLangGraphGuessedReducerShown(t *testing.T) {
	s := newStudio(t, openLangGraph(t, "js-sqlite"))
	idle(t, s)
	for i := range s.m.graphs {
		act(func() { s.m.setGraph(i) })
		idle(t, s)
		if s.m.hasThread("node-error") {
			break
		}
	}
	act(func() { s.m.setThread("node-error") })
	idle(t, s)
	if got := s.insp.title.Text; !strings.Contains(got, "reducer guessed for results") {
		t.Errorf("inspector title %q does not say the reducer of results is guessed", got)
	}
	act(func() { s.m.setThread("chain") })
	idle(t, s)
	if got := s.insp.title.Text; strings.Contains(got, "guessed") {
		t.Errorf("chain's title %q says a reducer is guessed", got)
	}
}
