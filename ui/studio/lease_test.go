package studio

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// TestThreadListShowsHolder: a thread another process is running shows as
// running, with who runs it and since when; once released it shows its
// own status again.
func TestThreadListShowsHolder(t *testing.T) {
	saver := memory.New()
	g := demoGraphs(t)[0].Graph.WithSaver(saver)
	if _, err := g.Invoke(context.Background(), engine.Values{"topic": "kelp"}, engine.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	lease, err := saver.AcquireLease(context.Background(), "t1", "desk pid 9 (weft worker)", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	s := newStudio(t, saver)
	idle(t, s)
	row := func() threadRow {
		for _, r := range s.m.threads {
			if r.ID == "t1" {
				return r
			}
		}
		t.Fatal("t1 is not listed")
		return threadRow{}
	}
	if r := row(); r.Status != "running" || !strings.HasPrefix(r.Holder, "desk pid 9 (weft worker) since ") {
		t.Fatalf("held thread row: %+v", r)
	}
	if err := saver.ReleaseLease(context.Background(), lease); err != nil {
		t.Fatal(err)
	}
	act(func() { s.refreshThreads(true) })
	idle(t, s)
	if r := row(); r.Status != "waiting" || r.Holder != "" {
		t.Fatalf("released thread row: %+v", r)
	}
}
