package studio

import (
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/checkpoint/memory"
)

// splitOffsets reads every split the window remembers.
func splitOffsets(s *Studio) map[string]float64 {
	o := map[string]float64{}
	for k, sp := range s.splits {
		o[k] = sp.Offset
	}
	return o
}

// The dividers stay where they are while the user switches thread and
// tab and while a question arrives: a moving divider moves every click
// target under the user's pointer.
func TestSplitsStayPut(t *testing.T) {
	s := newStudio(t, memory.New())
	want := splitOffsets(s)
	check := func(after string) {
		t.Helper()
		for k, v := range splitOffsets(s) {
			if v != want[k] {
				t.Errorf("after %s: %s at %.2f, was %.2f", after, k, v, want[k])
			}
		}
	}
	startThread(t, s, "a")
	check("starting a thread")
	startThread(t, s, "b")
	act(func() { s.m.setThread("a") })
	idle(t, s)
	check("switching thread")
	for i := range s.tabs.Items {
		act(func() { s.tabs.SelectIndex(i) })
		check("switching tab " + s.tabs.Items[i].Text)
	}
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.m.scope().pending()) == 0 {
		t.Fatal("no interrupt after Run")
	}
	check("an interrupt")
}
