package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// toolbar is the row at the top: graph chooser, new thread, run controls
// and "break on every node".
type toolbar struct {
	s        *Studio
	obj      fyne.CanvasObject
	graphSel *widget.Select
	newBtn   *widget.Button
	run      *widget.Button
	step     *widget.Button
	pause    *widget.Button
	cancel   *widget.Button
	breakAll *widget.Check
	quiet    bool // set while the selection is changed by code
}

func newToolbar(s *Studio) *toolbar {
	t := &toolbar{s: s}
	var names []string
	for _, g := range s.cfg.Graphs {
		names = append(names, g.Graph.Name())
	}
	t.graphSel = widget.NewSelect(names, func(string) {
		if !t.quiet {
			s.selectGraph(t.graphSel.SelectedIndex())
		}
	})
	t.graphSel.PlaceHolder = "(no graph)"
	t.newBtn = widget.NewButtonWithIcon("New thread", theme.ContentAddIcon(), s.newThreadDialog)
	t.run = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), s.Run)
	t.run.Importance = widget.HighImportance
	t.step = widget.NewButtonWithIcon("Step", theme.MediaSkipNextIcon(), s.Step)
	t.pause = widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), s.Pause)
	t.cancel = widget.NewButtonWithIcon("Cancel", theme.MediaStopIcon(), s.Cancel)
	t.breakAll = widget.NewCheck("Break on every node", func(on bool) {
		s.breakAll = on
		s.gp.highlight()
	})
	t.setBusy(false)
	graphBox := container.NewGridWrap(fyne.NewSize(220, t.graphSel.MinSize().Height), t.graphSel)
	t.obj = container.NewVBox(container.NewHBox(
		graphBox, t.newBtn, widget.NewSeparator(),
		t.run, t.step, t.pause, t.cancel, widget.NewSeparator(), t.breakAll,
	), widget.NewSeparator())
	return t
}

// setGraph shows graph i as selected without reacting to it.
func (t *toolbar) setGraph(i int) {
	t.quiet = true
	t.graphSel.SetSelectedIndex(i)
	t.quiet = false
}

// setBusy enables the controls that make sense while a run goes or not.
func (t *toolbar) setBusy(busy bool) {
	for _, b := range []*widget.Button{t.run, t.step, t.newBtn} {
		if busy {
			b.Disable()
		} else {
			b.Enable()
		}
	}
	for _, b := range []*widget.Button{t.pause, t.cancel} {
		if busy {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	if busy {
		t.graphSel.Disable()
	} else {
		t.graphSel.Enable()
	}
}
