package studio

import (
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// actions are what panels ask the studio to do beyond changing the model:
// the studio's controller fills them in; a panel tested alone gets stubs.
// A nil func does nothing.
type actions struct {
	key                      keyFunc
	run, step, pause, cancel func()
	newThread                func()
	editFork, rerun          func()
	resume, leave            func(one any, byID map[string]any)
	dbg                      *debugActions // the debugger's; nil in panels that need none
}

// call runs f when it is set.
func call(f func()) {
	if f != nil {
		f()
	}
}

// toolbar is the row at the top: graph chooser, new thread, run controls
// and "break on every node". It follows the model's graph, run status and
// breakpoints.
type toolbar struct {
	m *model
	composite
	graphSel *keySelect
	newBtn   *keyButton
	run      *keyButton
	step     *keyButton
	stepInto *keyButton
	pause    *keyButton
	cancel   *keyButton
	breakAll *keyCheck
	quiet    bool // set while the widgets are set from the model
}

func newToolbar(m *model, a *actions) *toolbar {
	t := &toolbar{m: m}
	var names []string
	for _, g := range m.graphs {
		names = append(names, g.Graph.Name())
	}
	t.graphSel = newKeySelect(a.key, names, func(string) {
		if !t.quiet {
			m.setGraph(t.graphSel.SelectedIndex())
		}
	})
	t.graphSel.PlaceHolder = "(no graph)"
	t.newBtn = newKeyButton(a.key, "New thread", theme.ContentAddIcon(), func() { call(a.newThread) })
	t.run = newKeyButton(a.key, "Run", theme.MediaPlayIcon(), func() { call(a.run) })
	t.run.Importance = widget.HighImportance
	t.step = newKeyButton(a.key, "Step", theme.MediaSkipNextIcon(), func() { call(a.step) })
	t.stepInto = newKeyButton(a.key, "Step into", theme.DownloadIcon(), func() {
		if a.dbg != nil {
			call(a.dbg.stepInto)
		}
	})
	t.pause = newKeyButton(a.key, "Pause", theme.MediaPauseIcon(), func() { call(a.pause) })
	t.cancel = newKeyButton(a.key, "Cancel", theme.MediaStopIcon(), func() { call(a.cancel) })
	t.breakAll = newKeyCheck(a.key, "Break on every node", func(on bool) {
		if !t.quiet {
			m.setBreakAll(on)
		}
	})
	graphBox := container.NewGridWrap(fyne.NewSize(220, t.graphSel.MinSize().Height), t.graphSel)
	t.compose(t, container.NewVBox(container.NewHBox(
		graphBox, t.newBtn, widget.NewSeparator(),
		t.run, t.step, t.stepInto, t.pause, t.cancel, widget.NewSeparator(), t.breakAll,
	), widget.NewSeparator()))
	t.setBusy(false, false)
	m.subscribe(chGraph|chRun|chBreakpoints|chPhase, func(c part) {
		t.quiet = true
		defer func() { t.quiet = false }()
		if c&chGraph != 0 {
			t.setGraphs()
		}
		if c&chBreakpoints != 0 && t.breakAll.Checked != m.brk.All {
			t.breakAll.SetChecked(m.brk.All)
		}
		if c&(chRun|chPhase|chGraph|chThread) != 0 {
			// A step into waiting at a phase is not busy: Run, Step and
			// Step into go on from there.
			t.setBusy(m.run.Busy, m.waiting() != nil)
		}
	})
	return t
}

// setGraphs offers the model's graphs and selects the model's.
func (t *toolbar) setGraphs() {
	names := make([]string, len(t.m.graphs))
	for i, g := range t.m.graphs {
		names[i] = g.Graph.Name()
	}
	if !slices.Equal(names, t.graphSel.Options) {
		t.graphSel.SetOptions(names)
	}
	if t.m.graphIdx < 0 {
		t.graphSel.ClearSelected()
	} else if t.graphSel.SelectedIndex() != t.m.graphIdx {
		t.graphSel.SetSelectedIndex(t.m.graphIdx)
	}
}

// setBusy enables the controls that make sense while a run goes or not;
// waiting says the run is a step into waiting at a phase, from which Run,
// Step and Step into go on.
func (t *toolbar) setBusy(busy, waiting bool) {
	enable := func(w fyne.Disableable, on bool) {
		if on && w.Disabled() {
			w.Enable()
		} else if !on && !w.Disabled() {
			w.Disable()
		}
	}
	ro := t.m.readOnly() // a store's threads run where they were written
	// No graph yet (a server's graphs still loading): nothing to run.
	none := t.m.graph().Graph == nil
	for _, b := range []*keyButton{t.run, t.step} {
		enable(b, (!busy || waiting) && !ro && !none)
	}
	enable(t.stepInto, (!busy || waiting) && !t.m.isView() && !none) // phases are the engine's
	enable(t.newBtn, !busy && !ro && !none)
	enable(t.breakAll, !ro)
	enable(t.pause, busy)
	enable(t.cancel, busy || t.m.sc.followed) // Cancel also stops a run followed on a server
	enable(t.graphSel, !busy)
}
