package studio

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/lgserver"
)

// BenchmarkServerTimeline1000 opens a thread of 1,000 checkpoints on
// LangGraph's dev server in the studio, as a click in the thread list
// does: the newest headers first, then the rest a page of history at a
// time, the lanes laid out and the head's state in the inspector. (The
// thread is the approval graph at its subgraph's question, then 995
// state edits as plan, each a checkpoint.)
//
//	go test ./ui/studio -run '^$' -bench ServerTimeline1000 -benchtime 5x
func BenchmarkServerTimeline1000(b *testing.B) {
	srv := lgserver.Start(b)
	ctx := context.Background()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Wait(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "otters"}}); err != nil {
		b.Fatal(err)
	}
	hist, err := c.History(ctx, th.ThreadID, agentclient.HistoryQuery{Limit: 100})
	if err != nil {
		b.Fatal(err)
	}
	for i := len(hist); i < 1000; i++ {
		if _, err := c.UpdateState(ctx, th.ThreadID, agentclient.StateUpdate{Values: map[string]any{"topic": i}, AsNode: "plan"}); err != nil {
			b.Fatal(err)
		}
	}
	sv, err := store.Open(ctx, srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	s := openStudio(b, test.NewTempApp(b), Config{Store: sv})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) })
	idle(b, s)
	i := slices.IndexFunc(s.m.graphs, func(g Graph) bool { return g.Graph.Name() == "approval" })
	act(func() { s.m.setGraph(i) })
	idle(b, s)
	b.ResetTimer()
	for range b.N {
		act(func() { s.m.setThread("") })
		act(func() { s.m.setThread(th.ThreadID) })
		idle(b, s)
	}
	b.StopTimer()
	var n int
	var complete bool
	act(func() { n, complete = s.m.scope().tl.count(), s.m.scope().complete })
	if n != 1000 || !complete {
		b.Fatalf("timeline holds %d checkpoints (complete %v), want 1000", n, complete)
	}
	if v := s.tview(); v == nil || v.Snap.Values["topic"] != float64(999) {
		b.Fatalf("head not loaded: %+v", v)
	}
}

// BenchmarkStreamedTaskShown measures a streamed task's start from the
// moment its event reaches the window's run observer (as a server run's
// events do, converted) to the graph panel lighting the node: the
// observer's batching (flushEvery) and the model's update. It reports
// the 90th percentile too; what the driver then paints is not counted.
//
//	go test ./ui/studio -run '^$' -bench StreamedTaskShown -benchtime 50x
func BenchmarkStreamedTaskShown(b *testing.B) {
	s := newStudio(b, nil)
	shown := make(chan struct{}, 1)
	act(func() {
		s.m.subscribe(chLive, func(part) { // after the graph panel's own
			select {
			case shown <- struct{}{}:
			default:
			}
		})
		s.m.startRun(kindRun, "t")
	})
	sc := s.m.scope()
	obs := &runObserver{s: s, sc: sc}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		obs.observe(engine.Event{Mode: engine.ModeTasks, Task: &engine.TaskEvent{Name: "plan", Done: i%2 == 1}})
		<-shown
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
