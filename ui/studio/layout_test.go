package studio

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
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

// relayout lays the window out again at WindowSize (or its minimum, as a
// real window grows to), twice so wrapped labels settle at their widths.
func relayout(s *Studio) {
	for range 2 {
		act(func() {
			c := s.win.Content()
			c.Resize(WindowSize.Max(c.MinSize()))
		})
	}
}

// The window never asks for more than it opens at, which fits a 1366×768
// screen with its title bar and a taskbar: not for a long
// inspector header, a failed build with its shape change in the Build tab,
// nor a question waiting.
func TestWindowFitsTheScreen(t *testing.T) {
	if WindowSize.Width > 1366 || WindowSize.Height > 768-48 {
		t.Fatalf("the window opens at %v: too big for a 1366×768 screen with a title bar and a taskbar", WindowSize)
	}
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t)})
	if got := s.Window().Canvas().Size(); got != WindowSize {
		t.Errorf("the window opens at %v, want %v", got, WindowSize)
	}
	s.WaitIdle()
	fits := func(after string) {
		t.Helper()
		relayout(s)
		if m := s.win.Content().MinSize(); m.Width > WindowSize.Width || m.Height > WindowSize.Height {
			t.Errorf("after %s the window asks for %.0f×%.0f", after, m.Width, m.Height)
		}
	}
	startThread(t, s, "w-1")
	fits("starting a thread")
	step(t, s)
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	for left := 3; left > 0; left-- {
		shiftF10(s)
		waitFor(t, "a task stop", func() bool {
			w := s.m.waiting()
			return w != nil && w.Info.Phase == engine.PhaseTask && len(w.Info.Pending) == left
		})
	}
	shiftF10(s)
	waitPhase(t, s, engine.PhaseBarrier)
	fits("Step into at a barrier of three writes")
	shiftF10(s)
	idle(t, s)
	act(func() {
		s.insp.title.SetText("This checkpoint could not be read: " + strings.Repeat("a long reason ", 150))
	})
	fits("a long header")
	act(func() {
		s.ShowBuild(Build{N: 2, Running: 1, At: time.Now(), Errors: []BuildError{{File: "./main.go", Line: 1, Msg: "undefined: x"}}})
		s.build.change.SetText(strings.Repeat("node added; ", 120))
		s.build.change.Show()
	})
	fits("a shape change on the Build tab")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.m.scope().pending()) == 0 {
		t.Fatal("no interrupt after Run")
	}
	fits("an interrupt")
}

// menuBarH is the height of the main menu the real window draws above its
// content (Fyne's desktop driver, measured under Xvfb); the test driver
// draws none.
const menuBarH = 28

// layoutAt lays the window's content out afresh at size (a Resize to the
// size it has already lays nothing out).
func layoutAt(s *Studio, size fyne.Size) {
	act(func() {
		c := s.win.Content()
		c.Resize(size.SubtractWidthHeight(1, 1))
		c.Resize(size)
	})
}

// At an interrupt after a step into, the inspector keeps minRows rows of
// state: the Step tab's barrier (hidden, but still holding the barrier's
// writes) and the question once pushed the divider up and left the state
// two and a half rows. The bottom tabs keep one height through the step
// into's phases and the question, so what the user reads stays in place.
func TestInspectorKeepsItsRows(t *testing.T) {
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t)})
	s.WaitIdle()
	real := fyne.NewSize(WindowSize.Width, WindowSize.Height-menuBarH)
	row := widget.NewLabel("Mg").MinSize().Height + theme.Padding()
	var tabsH float32
	check := func(at string) {
		t.Helper()
		layoutAt(s, real)
		act(func() {
			if h := s.insp.tree.Size().Height; h < minRows*row {
				t.Errorf("%s: the state tree is %.0f px tall, %.1f rows; want at least %d", at, h, h/row, minRows)
			}
			h := s.tabs.Size().Height
			if tabsH == 0 {
				tabsH = h
			} else if h != tabsH {
				t.Errorf("%s: the bottom tabs are %.0f px tall, were %.0f", at, h, tabsH)
			}
			if m := s.win.Content().MinSize(); m.Height > real.Height {
				t.Errorf("%s: the window asks for %.0f px of height under its menu, has %.0f", at, m.Height, real.Height)
			}
		})
	}
	startThread(t, s, "w-1")
	check("a new thread")
	step(t, s)
	shiftF10(s)
	waitPhase(t, s, engine.PhasePlan)
	check("the plan")
	for left := 3; left > 0; left-- {
		shiftF10(s)
		waitFor(t, "a task stop", func() bool {
			w := s.m.waiting()
			return w != nil && w.Info.Phase == engine.PhaseTask && len(w.Info.Pending) == left
		})
	}
	check("a task")
	shiftF10(s)
	waitPhase(t, s, engine.PhaseBarrier)
	check("the barrier")
	shiftF10(s)
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.m.scope().pending()) == 0 {
		t.Fatal("no interrupt after Run")
	}
	if s.tabs.Selected().Text != "Interrupt" {
		t.Fatalf("the %s tab is open at a question", s.tabs.Selected().Text)
	}
	check("the question")
}

// A thread row's subtitle fits the thread list at the window's default
// width (it was one line cut after "6 checkpoint"), the thread's status
// first.
func TestThreadSubtitleFits(t *testing.T) {
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: demoGraphs(t)})
	s.WaitIdle()
	startThread(t, s, "tide-pools")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	layoutAt(s, WindowSize)
	act(func() {
		l := s.th.list
		row := l.CreateItem()
		l.UpdateItem(0, row)
		row.Resize(fyne.NewSize(l.Size().Width, row.MinSize().Height))
		row.(*fyne.Container).Layout.Layout(row.(*fyne.Container).Objects, row.Size())
		box := row.(*fyne.Container).Objects[0].(*fyne.Container)
		box.Layout.Layout(box.Objects, box.Size())
		lb := box.Objects[1].(*widget.Label)
		lines := strings.Split(lb.Text, "\n")
		for _, line := range lines {
			size := theme.Size(theme.SizeNameCaptionText)
			if w := fyne.MeasureText(line, size, lb.TextStyle).Width; w > lb.Size().Width-2*theme.InnerPadding() {
				t.Errorf("%q is %.0f px wide: cut in a %.0f px label", line, w, lb.Size().Width)
			}
		}
		if !strings.HasPrefix(lines[0], "waiting") {
			t.Errorf("the subtitle reads %q: want the status first", lines)
		}
	})
}
