package studio

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// Panels are widgets of their own: built on a model and stub actions,
// without a Studio, they show what the model holds and report what the
// user does.
func TestPanelsStandAlone(t *testing.T) {
	test.NewTempApp(t)
	m := newModel(demoGraphs(t), memory.New(), "alone.db")
	m.setGraph(0)
	var resumed []any
	var stepped int
	a := &actions{
		step:   func() { stepped++ },
		resume: func(one any, _ map[string]any) { resumed = append(resumed, one) },
	}
	tb := newToolbar(m, a)
	tl := newTimelinePanel(m)
	ip := newInterruptPanel(m, a)
	sb := newStatusBar(m)
	w := test.NewTempWindow(t, container.NewVBox(tb, tl, ip, sb))
	w.Resize(fyne.NewSize(900, 700))

	test.Tap(tb.step)
	if stepped != 1 {
		t.Errorf("Step tapped: %d steps asked", stepped)
	}
	// A thread with two checkpoints, the second waiting for an answer.
	m.update(func() {
		m.setThread("x")
		sc := m.scope()
		m.mergeHeaders(sc, []checkpoint.Header{header("01", "", -1), header("02", "01", 0)})
		m.selectCheckpoint("02")
		m.setView(sc, "02", &view{Latest: true, Snap: &engine.Snapshot{
			Ref:        checkpoint.Ref{ThreadID: "x", CheckpointID: "02"},
			Interrupts: []engine.PendingInterrupt{{ID: "i1", Node: "review", Value: map[string]any{"question": "OK?", "options": []any{"yes", "no"}}}},
			Tasks: []engine.TaskState{{ID: "t1", Name: "review",
				Interrupts: []engine.PendingInterrupt{{ID: "i1", Node: "review", Value: map[string]any{"question": "OK?", "options": []any{"yes", "no"}}}}}},
			CreatedAt: time.Now(),
		}})
	})
	if tl.info.Text == emptyTimeline || len(ip.items) != 1 {
		t.Fatalf("timeline %q, %d questions", tl.info.Text, len(ip.items))
	}
	if got := sb.String(); got != "alone.db · writing assistant · thread x · step 0 · waiting" {
		t.Errorf("status %q", got)
	}
	test.Tap(ip.items[0].choices[1])
	if len(resumed) != 1 || resumed[0] != "no" {
		t.Errorf("answers sent: %v", resumed)
	}
	// Another thread: the panels empty themselves.
	m.setThread("y")
	if tl.info.Text != emptyTimeline || len(ip.items) != 0 {
		t.Errorf("after switching threads: timeline %q, %d questions", tl.info.Text, len(ip.items))
	}
}

// A thread listing read while the window ran a step does not undo the
// window's newer rows, nor drop a thread it just started.
func TestNewerRowsWin(t *testing.T) {
	listed := []threadRow{{ID: "a", Latest: "01", Count: 2}, {ID: "b", Latest: "05", Count: 9}}
	mine := []threadRow{{ID: "new", Latest: "07", Count: 2}, {ID: "a", Latest: "03", Count: 6}, {ID: "b", Latest: "04", Count: 8}}
	got := newerRows(listed, mine)
	want := []threadRow{{ID: "new", Latest: "07", Count: 2}, {ID: "a", Latest: "03", Count: 6}, {ID: "b", Latest: "05", Count: 9}}
	if len(got) != len(want) {
		t.Fatalf("rows %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
