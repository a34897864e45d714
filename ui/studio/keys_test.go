package studio

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// pressKey delivers a key the way the desktop driver does: to the focused
// widget when there is one, else to the window's handler.
func pressKey(w fyne.Window, name fyne.KeyName) {
	c := w.Canvas()
	ev := &fyne.KeyEvent{Name: name}
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
		return
	}
	if h := c.OnTypedKey(); h != nil {
		h(ev)
	}
}

// F10 steps and ←/→ travel whatever has the focus: after a click in the
// state tree, a list, a check box or the graph chooser (which all take
// the focus), and in a text field, which keeps its own arrows.
func TestKeysWorkWhateverHasFocus(t *testing.T) {
	s := newThread(t, "k-1")
	for _, c := range []struct {
		name string
		obj  fyne.Focusable
	}{
		{"state tree", s.insp.tree},
		{"thread list", s.th.list},
		{"diff list", s.insp.diff},
		{"events list", s.ev.list},
		{"break-on-every-node check", s.tb.breakAll},
		{"graph chooser", s.tb.graphSel},
		{"thread search field", s.th.search},
		{"Step button", s.tb.step},
	} {
		before := s.m.scope().tl.count()
		act(func() {
			s.win.Canvas().Focus(c.obj)
			pressKey(s.win, fyne.KeyF10)
		})
		idle(t, s)
		if got := s.m.scope().tl.count(); got != before+1 {
			t.Errorf("F10 with the %s focused: %d checkpoints, want %d", c.name, got, before+1)
		}
		if s.m.scope().tl.count() >= 6 {
			break // the thread waits at the review now
		}
	}
	// ← travels back from the tree; in a text field it stays the field's.
	head := s.m.scope().head
	act(func() {
		s.win.Canvas().Focus(s.insp.tree)
		pressKey(s.win, fyne.KeyLeft)
	})
	idle(t, s)
	if s.m.scope().sel == head || s.m.scope().sel != s.m.scope().tl.prev(head) {
		t.Errorf("← with the tree focused did not travel back")
	}
	sel := s.m.scope().sel
	act(func() {
		s.win.Canvas().Focus(s.th.search)
		test.Type(s.th.search, "k-")
		pressKey(s.win, fyne.KeyLeft)
	})
	idle(t, s)
	if s.m.scope().sel != sel {
		t.Error("← in a text field moved the timeline")
	}
	if s.th.search.CursorColumn != 1 {
		t.Errorf("← in a text field did not move its cursor (column %d)", s.th.search.CursorColumn)
	}
}

// A Select keeps no focus once its tab is switched away: Space or ↓ would
// open its popup over a tab no one sees (on a real driver, on a canvas the
// driver has forgotten: the nil canvas crash in NewPopUpMenu).
func TestHiddenSelectLosesFocus(t *testing.T) {
	s := newStudio(t, nil)
	c := s.win.Canvas()
	act(func() { s.selectTab("Events") })
	act(func() { test.Tap(s.ev.mode) })
	if _, ok := c.Focused().(*widget.PopUpMenu); !ok {
		t.Fatalf("focus %T, want the filter's popup", c.Focused())
	}
	act(func() { c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape}) })
	if c.Focused() != s.ev.mode {
		t.Fatalf("focus %T after a tap on the events filter", c.Focused())
	}
	act(func() { s.tabs.SelectIndex(0) })
	if f := c.Focused(); f != nil {
		act(func() { f.TypedKey(&fyne.KeyEvent{Name: fyne.KeyDown}) })
	}
	if top := c.Overlays().Top(); top != nil {
		t.Fatalf("a key after the tab switch showed %T over the Interrupts tab", top)
	}
}

// A field inside a card, in a scroll, in a hidden tab keeps no focus: the
// answer field of a question, once the user opens another tab, would keep
// ←/→ as its own and the timeline would not travel; the same for a text
// field in a hidden tab of the inspector.
func TestHiddenFieldLosesFocus(t *testing.T) {
	s := newStudio(t, nil)
	startThread(t, s, "h-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("%d questions after Run, want 1", len(s.ip.items))
	}
	c := s.win.Canvas()
	head := s.m.scope().head
	act(func() {
		c.Focus(s.ip.items[0].answer)
		s.selectTab("Events")
		pressKey(s.win, fyne.KeyLeft)
	})
	idle(t, s)
	if f := c.Focused(); f != nil {
		t.Errorf("focus on %T in a hidden tab", f)
	}
	if s.m.scope().sel != s.m.scope().tl.prev(head) {
		t.Error("← with the hidden answer field focused did not travel back")
	}
	act(func() {
		s.insp.tabs.SelectIndex(s.insp.tabIndex("Calls"))
		c.Focus(s.insp.calls.list)
		s.insp.tabs.SelectIndex(s.insp.tabIndex("State"))
	})
	if f := c.Focused(); f != nil {
		t.Errorf("focus on %T in the inspector's hidden Calls tab", f)
	}
}

// focusProbe is an entry that counts how often it was told it lost the
// focus.
type focusProbe struct {
	widget.Entry
	lost int
}

func (p *focusProbe) FocusLost() { p.lost++; p.Entry.FocusLost() }

// A dialog shown with showDialog tells the field that had the focus when it
// closes; Fyne alone does not, and the field's cursor then blinks, and
// repaints the window, for as long as the studio runs.
func TestClosedDialogReleasesItsFocus(t *testing.T) {
	test.NewTempApp(t)
	w := test.NewWindow(nil)
	defer w.Close()
	w.Resize(fyne.NewSize(600, 400))
	for _, tc := range []struct {
		name string
		show func(dialog.Dialog, fyne.CanvasObject)
		lost int
	}{
		{"Fyne's Show", func(d dialog.Dialog, _ fyne.CanvasObject) { d.Show() }, 0},
		{"showDialog", func(d dialog.Dialog, c fyne.CanvasObject) { showDialog(d, c) }, 1},
	} {
		p := &focusProbe{}
		p.ExtendBaseWidget(p)
		content := container.NewVBox(widget.NewLabel("a field"), p)
		var d dialog.Dialog
		act(func() {
			d = dialog.NewCustom("probe", "Close", content, w)
			tc.show(d, content)
			w.Canvas().Focus(p)
		})
		act(func() { d.Hide() })
		if p.lost != tc.lost {
			t.Errorf("%s: the field was told %d times it lost the focus, want %d", tc.name, p.lost, tc.lost)
		}
	}
}
