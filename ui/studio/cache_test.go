package studio

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/store"
)

// The writer's research is cached by its angle, in the node cache the
// SQLite store keeps: a second thread on the same topic is served from it
// (the events say so, and the graph marks the node as cached), and Run →
// Clear the node cache makes the next thread research again.
func TestNodeCacheInTheStudio(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "cache.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := openStudio(t, test.NewTempApp(t), Config{Store: st, StoreName: "cache.db", Graphs: demoGraphs(t)})
	idle(t, s)
	cachedRows := func(thread string) (cached, research int) {
		t.Helper()
		act(func() { s.startThread(thread, s.m.graph().Example) })
		idle(t, s)
		act(func() { test.Tap(s.tb.run) }) // to the review
		idle(t, s)
		for _, r := range s.m.scope().events {
			if r.Node == "research" && r.Mode == "updates" {
				research++
				if strings.Contains(r.Text, "(cached: not run") {
					cached++
				}
			}
		}
		return cached, research
	}
	if c, n := cachedRows("c-1"); c != 0 || n != 3 {
		t.Fatalf("first thread: %d of %d research updates cached, want 0 of 3", c, n)
	}
	if c, n := cachedRows("c-2"); c != 3 || n != 3 {
		t.Fatalf("second thread on the same topic: %d of %d research updates cached, want all 3", c, n)
	}
	if g := s.gp.view.Geometry(); g == nil {
		t.Error("no graph drawn")
	} else if n, ok := g.Node("research"); !ok || n.Note != "cached" {
		t.Errorf("the graph's research node %+v, without its cache policy", n)
	}
	act(s.clearCache)
	idle(t, s)
	if c, n := cachedRows("c-3"); c != 0 || n != 3 {
		t.Errorf("after Clear the node cache: %d of %d research updates cached, want none", c, n)
	}
}
