package studio

import (
	"fmt"
	"testing"
	"time"
)

// stepThreads shows the threads panel with 40 threads and returns a
// function that moves thread 0 one step: the model's thread list changes
// in that row only, as when a run in the window takes a step.
func stepThreads(t testing.TB) func() {
	m := aloneModel(t)
	p := newThreadsPanel(m, &actions{})
	showAlone(t, p, 300, 700)
	rows := make([]threadRow, 40)
	now := time.Now()
	for i := range rows {
		rows[i] = threadRow{ID: fmt.Sprintf("thread-%02d-0b9f3c2e-5a1d-4c8e-9f00-1234567890ab", i), Step: i, Count: i + 1, Status: "waiting", Updated: now}
	}
	act(func() { m.setThreads(rows, false) })
	step := 0
	return func() {
		step++
		next := append([]threadRow(nil), rows...)
		next[0].Step, next[0].Count = step, step+1
		act(func() { m.setThreads(next, false) })
		if len(p.shown) != 40 || p.shown[0].Step != step {
			t.Fatalf("the list shows %d rows, the first at step %d; want 40 and %d", len(p.shown), p.shown[0].Step, step)
		}
	}
}

// TestThreadsPanelStepRedrawsOneRow: a step of one thread does not lay out
// the text of every row again. Each row's labels measured and cut their
// text anew on every step (62,000 allocations and 23 ms on a 2-core
// machine for 40 threads), and the list was hidden and shown, which
// refreshed it twice.
func TestThreadsPanelStepRedrawsOneRow(t *testing.T) {
	step := stepThreads(t)
	step()
	if n := testing.AllocsPerRun(5, step); n > 15000 {
		t.Fatalf("a step of one of 40 threads allocates %.0f times in the thread list; every row is laid out again", n)
	}
}

// BenchmarkThreadsPanelStep is what the thread list costs the window's
// goroutine when one of 40 threads takes a step.
func BenchmarkThreadsPanelStep(b *testing.B) {
	step := stepThreads(b)
	b.ReportAllocs()
	for b.Loop() {
		step()
	}
}
