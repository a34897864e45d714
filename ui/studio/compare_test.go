package studio

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Two branches of a thread compared side by side: a Ctrl+click on the
// second one opens the comparison with the selected one; it names where
// the branches part, the steps each took, and the channels that differ,
// texts diffed word by word, with the task that wrote each side.
func TestCompareBranches(t *testing.T) {
	s := newThread(t, "cmp-1")
	act(func() { test.Tap(s.tb.run) })
	idle(t, s) // main branch: … 3 structure, 4 write, waiting at review
	sc := s.m.scope()
	mainHead := sc.head
	structure := sc.tl.prev(mainHead)
	// A fork: the notes edited after the structure step, run to the review.
	act(func() {
		s.forkAt(sc, structure, "notes", []byte(`["tide pools: safety — wear shoes with grip.", "tide pools: ecology — anemones, crabs and snails share a world that floods twice a day."]`), "", true, nil)
	})
	idle(t, s)
	forkHead := sc.head
	if forkHead == mainHead || sc.tl.items[sc.tl.at(forkHead)].lane == 0 {
		t.Fatalf("no fork: head %s", forkHead)
	}
	if heads := branchHeads(sc.tl); len(heads) != 2 || heads[0] != mainHead || heads[1] != forkHead {
		t.Fatalf("branch heads %v", heads)
	}
	act(func() { s.m.selectCheckpoint(mainHead) })
	idle(t, s)
	// Ctrl+click the fork's head.
	s.tl.modifiers = func() fyne.KeyModifier { return fyne.KeyModifierControl }
	col := sc.tl.at(forkHead)
	lane := sc.tl.items[col].lane
	act(func() { s.tl.strip.Tapped(&fyne.PointEvent{Position: centre(col, lane)}) })
	idle(t, s)
	s.tl.modifiers = func() fyne.KeyModifier { return 0 }
	if sc.sel != mainHead {
		t.Error("Ctrl+click moved the selection")
	}
	f, _ := inOverlays[*compareForm](s.win)
	if f == nil || f.cmp == nil {
		t.Fatal("no comparison")
	}
	c := f.cmp
	if c.A != mainHead || c.B != forkHead || c.Ancestor != structure {
		t.Fatalf("compared %s and %s from %s; want %s and %s from %s", c.A, c.B, c.Ancestor, mainHead, forkHead, structure)
	}
	if len(c.StepsA) != 1 || len(c.StepsB) != 2 || c.StepsB[0].Source != "update" {
		t.Errorf("steps %+v | %+v", c.StepsA, c.StepsB)
	}
	if !strings.Contains(f.status.Text, "Their branches part after “3 structure”") {
		t.Errorf("status %q", f.status.Text)
	}
	var notes, draft bool
	for _, d := range c.Channels {
		switch d.Channel {
		case "notes":
			notes = !d.Equal && d.WriterB != nil && d.WriterB.Source == "update" && d.WriterA == nil
		case "draft":
			draft = !d.Equal && len(d.Words) > 0 && d.WriterA.Node == "write" && d.WriterB.Node == "write"
		case "topic":
			if !d.Equal {
				t.Error("topic differs")
			}
		}
	}
	if !notes || !draft {
		t.Errorf("notes diff ok %v, draft word diff ok %v: %+v", notes, draft, c.Channels)
	}
	// The body shows both sides: the words only A has in the error
	// colour, those only B has in the success colour.
	marked := map[fyne.ThemeColorName]string{}
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		case *widget.RichText:
			for _, seg := range x.Segments {
				if ts, ok := seg.(*widget.TextSegment); ok && ts.Style.ColorName != "" {
					marked[ts.Style.ColorName] += ts.Text
				}
			}
		}
	}
	walk(f.body)
	if marked[theme.ColorNameSuccess] == "" || !strings.Contains(marked[theme.ColorNameError], "Naturalists have catalogued") {
		t.Errorf("word diff marks: %q", marked)
	}
	// Swap: B and A trade places.
	act(func() { f.a.SetSelectedIndex(1); f.b.SetSelectedIndex(0) })
	idle(t, s)
	if f.cmp.A != forkHead || f.cmp.B != mainHead {
		t.Errorf("after picking the other way round: %s vs %s", f.cmp.A, f.cmp.B)
	}
	// The timeline's context menu offers the comparison too.
	act(func() { s.tl.strip.TappedSecondary(&fyne.PointEvent{Position: centre(col, lane)}) })
	if m := overlayMenu(s.win); m == nil || m[0].Label != "Compare with the selected checkpoint" || m[0].Disabled {
		t.Errorf("timeline menu %+v", m)
	}
}
