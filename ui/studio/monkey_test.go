package studio

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// monkeySkips are the menu items the random walk leaves alone: they end
// the app or write files outside the test.
var monkeySkips = []string{"Quit", "Export thread", "Import thread", "Save thread as test", "Export graph picture", "Open store"}

// TestMonkey drives the studio with thousands of seeded random actions over
// the demo graphs (dialogs opened and cancelled or confirmed, graph and
// thread switches, run keys, pause, theme and tab switches, every Select
// tapped) and fails on any panic, naming the seed and the last actions.
// WEFT_MONKEY_ACTIONS sets how many (default 600), WEFT_MONKEY_SEED the seed.
func TestMonkey(t *testing.T) {
	n, seed := 600, uint64(19)
	if v := os.Getenv("WEFT_MONKEY_ACTIONS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatalf("WEFT_MONKEY_ACTIONS=%q: %v", v, err)
		}
	}
	if v := os.Getenv("WEFT_MONKEY_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("WEFT_MONKEY_SEED=%q: %v", v, err)
		}
	}
	s := newThread(t, "m-1")
	r := rand.New(rand.NewPCG(seed, seed))
	var last []string
	log := func(f string, a ...any) {
		last = append(last, fmt.Sprintf(f, a...))
		if len(last) > 30 {
			last = last[1:]
		}
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("panic %v (seed %d) after:\n%s", p, seed, strings.Join(last, "\n"))
		}
	}()
	c := s.win.Canvas()
	for i := range n {
		monkeyStep(s, c, r, i, log)
		if i%25 == 24 {
			monkeyIdle(t, s, seed, last)
		}
	}
	monkeyIdle(t, s, seed, last)
}

// monkeyIdle waits for background work, failing after 10 s with the
// actions that led there.
func monkeyIdle(t *testing.T, s *Studio, seed uint64, last []string) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.WaitIdle(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(2 * time.Second):
		// A run held between phases (Step into) waits for the user: cancel it.
		act(s.Cancel)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("studio still busy after a Cancel after 10 s (seed %d) after:\n%s", seed, strings.Join(last, "\n"))
	}
}

// monkeyStep does one random action as the UI goroutine would.
func monkeyStep(s *Studio, c fyne.Canvas, r *rand.Rand, i int, log func(string, ...any)) {
	act(func() {
		switch k := r.IntN(14); k {
		case 0, 1: // a menu item
			var items []*fyne.MenuItem
			for _, m := range s.win.MainMenu().Items {
				for _, it := range m.Items {
					if it.Action == nil || it.Disabled || it.IsSeparator || skipped(it.Label) {
						continue
					}
					items = append(items, it)
				}
			}
			it := items[r.IntN(len(items))]
			log("%d menu %q", i, it.Label)
			it.Action()
		case 2, 3: // a button of the top dialog
			top := c.Overlays().Top()
			if top == nil {
				return
			}
			bs := tappables(top, func(o fyne.CanvasObject) bool { _, ok := o.(*widget.Button); return ok })
			if len(bs) == 0 {
				log("%d dismiss overlay", i)
				c.Overlays().Remove(top)
				return
			}
			b := bs[r.IntN(len(bs))]
			log("%d tap dialog button %q", i, b.(*widget.Button).Text)
			test.Tap(b)
		case 4, 5: // a Select anywhere, then an option or a dismissal
			var sels []fyne.Tappable
			roots := append([]fyne.CanvasObject{c.Content()}, c.Overlays().List()...)
			for _, o := range roots {
				sels = append(sels, tappables(o, isSelect)...)
			}
			if len(sels) == 0 {
				return
			}
			sel := sels[r.IntN(len(sels))]
			log("%d tap select %T", i, sel)
			test.Tap(sel)
			if pop, ok := c.Focused().(*widget.PopUpMenu); ok {
				opts := tappables(c.Overlays().Top(), func(o fyne.CanvasObject) bool { return strings.HasSuffix(fmt.Sprintf("%T", o), "menuItem") })
				if len(opts) > 0 && r.IntN(3) > 0 {
					log("%d  pick an option of %d", i, len(opts))
					test.Tap(opts[r.IntN(len(opts))])
				} else {
					log("%d  dismiss popup", i)
					pop.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
				}
			}
		case 6: // switch graph
			g := s.tb.graphSel
			j := r.IntN(len(g.Options))
			log("%d graph %q", i, g.Options[j])
			g.SetSelectedIndex(j)
		case 7: // switch thread
			if n := s.th.list.Length(); n > 0 && s.th.list.Visible() {
				j := r.IntN(n)
				log("%d thread row %d", i, j)
				s.th.list.Select(j)
			}
		case 8: // a run key
			keys := []fyne.KeyName{fyne.KeyF5, fyne.KeyF10, fyne.KeyF6, fyne.KeyF9, fyne.KeyEscape, fyne.KeyLeft, fyne.KeyRight}
			key := keys[r.IntN(len(keys))]
			log("%d key %s", i, key)
			s.windowKey(&fyne.KeyEvent{Name: key}, false)
		case 9: // Shift+F10, Ctrl+N, Pause
			switch r.IntN(3) {
			case 0:
				log("%d Shift+F10", i)
				s.StepInto()
			case 1:
				log("%d Ctrl+N", i)
				s.newThreadDialog()
			default:
				log("%d Pause", i)
				test.Tap(s.tb.pause)
			}
		case 10: // theme
			v := []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark}[r.IntN(2)]
			log("%d theme %d", i, v)
			s.app.Settings().SetTheme(variantTheme{newTheme(theme.DefaultTheme()), v})
		case 11: // a bottom tab
			j := r.IntN(len(s.tabs.Items))
			log("%d tab %q", i, s.tabs.Items[j].Text)
			s.tabs.SelectIndex(j)
		case 12: // a key to the focused widget (Space/↓ opens a Select)
			if f := c.Focused(); f != nil {
				key := []fyne.KeyName{fyne.KeySpace, fyne.KeyDown, fyne.KeyUp, fyne.KeyF5}[r.IntN(4)]
				log("%d key %s to focused %T", i, key, f)
				f.TypedKey(&fyne.KeyEvent{Name: key})
			}
		default: // a toolbar button
			bs := []*keyButton{s.tb.run, s.tb.step, s.tb.pause, s.tb.cancel, s.tb.newBtn}
			b := bs[r.IntN(len(bs))]
			if b.Disabled() {
				return
			}
			log("%d toolbar %q", i, b.Text)
			test.Tap(b)
		}
	})
}

func skipped(label string) bool {
	for _, s := range monkeySkips {
		if strings.HasPrefix(label, s) {
			return true
		}
	}
	return false
}

func isSelect(o fyne.CanvasObject) bool {
	switch o.(type) {
	case *widget.Select, *keySelect:
		return true
	}
	return false
}

// tappables lists the shown, enabled objects under root that want picks.
func tappables(root fyne.CanvasObject, want func(fyne.CanvasObject) bool) []fyne.Tappable {
	var out []fyne.Tappable
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if o == nil || !o.Visible() {
			return
		}
		if d, ok := o.(fyne.Disableable); ok && d.Disabled() {
			return
		}
		if t, ok := o.(fyne.Tappable); ok && want(o) {
			out = append(out, t)
		}
		switch o := o.(type) {
		case *fyne.Container:
			for _, c := range o.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(o).Objects() {
				walk(c)
			}
		}
	}
	walk(root)
	return out
}
