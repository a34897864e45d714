package agui

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// TestThreadHeldElsewhere: a thread whose lease another process holds gets
// 409 naming the holder, before anything is read or run.
func TestThreadHeldElsewhere(t *testing.T) {
	saver := memory.New()
	ts := newTestServer(t, []*engine.Graph{gateGraph(t, nil)}, saver)
	url := ts.URL + "/agents/gate"
	lease, err := saver.AcquireLease(context.Background(), "held", "build-7 pid 4242 (weft worker)", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s := post(t, url, input("held", "run-1", "state", map[string]any{"count": 5}))
	if s.status != http.StatusConflict || !strings.Contains(s.body, `thread "held" is being run by build-7 pid 4242 (weft worker) since`) {
		t.Fatalf("held thread: %d %s", s.status, s.body)
	}
	if rec := threadRecord(t, saver, "held"); rec != "" {
		t.Fatalf("a refused request wrote:\n%s", rec)
	}
	if err := saver.ReleaseLease(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	if s := post(t, url, input("held", "run-2", "state", map[string]any{"count": 5})); s.status != 200 || s.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("after release: %d %v", s.status, s.types())
	}
	if ls, _ := saver.Leases(context.Background()); len(ls) != 0 {
		t.Errorf("the request left its lease: %+v", ls)
	}
}

// TestContinuesStepCutShort: a server killed mid-step leaves the latest
// checkpoint with the finished tasks' writes and nothing in Next. A request
// with nothing new must run the rest (apply the step, then the join), not
// answer RUN_FINISHED success.
func TestContinuesStepCutShort(t *testing.T) {
	saver := &checkpointtest.StepCutShort{Saver: memory.New()}
	out := engine.List[string]("out")
	g, err := engine.NewGraph("fan", out).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(out.Add("a")), nil }).
		AddNode("b", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(out.Add("b")), nil }).
		AddNode("join", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(out.Add("join after " + strings.Join(out.Get(s), "+"))), nil
		}).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").
		AddJoin([]string{"a", "b"}, "join").
		Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("cut"), engine.BreakBefore("a", "b")); err != nil {
		t.Fatal(err)
	}
	saver.Cut = true
	if _, err := g.Invoke(ctx, nil, engine.WithThread("cut"), engine.WithDurability(engine.DurabilitySync)); err == nil {
		t.Fatal("the step's checkpoint was stored")
	}
	saver.Cut = false
	snap, _ := g.GetState(ctx, engine.WithThread("cut"))
	if len(snap.Next) != 0 || snap.Done() {
		t.Fatalf("setup: Next %v Done %v", snap.Next, snap.Done())
	}

	ts := newTestServer(t, []*engine.Graph{g}, saver)
	s := post(t, ts.URL+"/agents/fan", input("cut", "run-1"))
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	if len(s.find("STEP_STARTED")) == 0 {
		t.Errorf("nothing ran: %v", s.types())
	}
	snap, _ = g.GetState(ctx, engine.WithThread("cut"))
	got, _ := snap.Values["out"].([]string)
	if !snap.Done() || len(got) != 3 || got[2] != "join after a+b" {
		t.Errorf("after the request: Done %v, out %v; want a, b, then the join", snap.Done(), got)
	}
	fin := s.last()
	if o, _ := fin["outcome"].(map[string]any); fin["type"] != "RUN_FINISHED" || o["type"] != "success" {
		t.Errorf("last event %v", fin)
	}
}
