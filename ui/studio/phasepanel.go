package studio

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// phasePanel is the Step tab: where a step into stands inside a
// super-step and what the user can do there. At the plan it lists the
// tasks that will run with what triggered them and their input; in a
// parallel step, the tasks done, the one about to run and those waiting,
// any of which can be picked to run next; at the barrier, the writes
// waiting to apply per task (each can be dropped or replaced) and per
// channel with the reducer that combines them; after apply, the channels
// that changed. It follows the model's phase stop of the current thread.
type phasePanel struct {
	m *model
	a *debugActions
	composite
	title  *widget.Label
	help   *widget.Label
	next   *keyButton // Shift+F10: the next phase (or step into, when none waits)
	finish *keyButton // F10: the rest of the step
	runOn  *keyButton // F5: run on without phase stops
	body   *fyne.Container
	writes *writesEditor
	shown  *phaseStop
}

const phaseEmpty = "Step into (Shift+F10) runs the next super-step phase by phase: its plan (which tasks run and why), " +
	"each task in an order you pick, the barrier where their writes wait (drop or replace one: the step becomes a fork), " +
	"and the channels the writes changed."

func newPhasePanel(m *model, a *actions) *phasePanel {
	d := a.dbg
	if d == nil {
		d = &debugActions{}
	}
	p := &phasePanel{m: m, a: d}
	p.title = widget.NewLabelWithStyle("Step into", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	p.help = widget.NewLabel(phaseEmpty)
	p.help.Wrapping = fyne.TextWrapWord
	p.help.Importance = widget.LowImportance
	p.next = newKeyButton(a.key, "Step into", theme.MediaSkipNextIcon(), func() {
		if m.waiting() != nil {
			callMode(d.phaseGo, stepPhases)
		} else {
			call(d.stepInto)
		}
	})
	p.next.Importance = widget.HighImportance
	p.finish = newKeyButton(a.key, "Finish step", theme.MediaFastForwardIcon(), func() { callMode(d.phaseGo, stepFinish) })
	p.runOn = newKeyButton(a.key, "Run on", theme.MediaPlayIcon(), func() { callMode(d.phaseGo, stepRunOn) })
	p.writes = newWritesEditor(a.key, d.replace, func(e []engine.StepEdit) { m.setEdits(e) })
	p.body = container.NewVBox()
	// The phase's rows (tasks, writes) come before the help under them:
	// the tab is a third of the right column, and what the user acts on
	// is then above the fold.
	top := container.NewVBox(container.NewHBox(p.next, p.finish, p.runOn), p.title)
	p.compose(p, container.NewBorder(top, nil, nil, nil, container.NewVScroll(container.NewVBox(p.body, p.help))))
	m.subscribe(chThread|chPhase|chRun|chGraph, func(part) { p.show() })
	p.show()
	return p
}

func callMode(f func(stepMode, bool), mode stepMode) {
	if f != nil {
		f(mode, false)
	}
}

// show draws the model's phase stop.
func (p *phasePanel) show() {
	stop := p.m.scope().dbg.phase
	waiting := stop != nil && stop.reply != nil
	setEnabled(p.finish, waiting)
	setEnabled(p.runOn, waiting)
	setEnabled(p.next, waiting || !p.m.run.Going)
	if waiting {
		p.next.SetText("Next phase")
	} else {
		p.next.SetText("Step into")
	}
	if stop == p.shown && stop != nil && stop.Info.Phase != engine.PhaseBarrier && stop.Info.Phase != engine.PhaseTask {
		return
	}
	p.shown = stop
	p.body.Objects = nil
	if stop == nil {
		p.title.SetText("Step into")
		p.help.SetText(phaseEmpty)
		p.body.Refresh()
		return
	}
	i := stop.Info
	switch i.Phase {
	case engine.PhasePlan:
		p.title.SetText(fmt.Sprintf("Step %d · plan: %s will run", i.Step, countTasks(i.Tasks)))
		p.help.SetText("Nothing has run yet. Next phase (Shift+F10) runs the tasks, Finish step (F10) the whole step, Run on (F5) to the next stop.")
		for _, t := range i.Tasks {
			p.body.Add(taskBlock(taskLabel(i.Tasks, t.ID), triggerText(t, i.Triggers[t.ID])+" · "+inputText(t)))
		}
	case engine.PhaseTask:
		p.title.SetText(fmt.Sprintf("Step %d · run: %d of %d tasks left", i.Step, len(i.Pending), len(i.Tasks)))
		p.help.SetText("One task at a time, in the order you pick; the writes still apply in task order at the barrier.")
		pending := map[string]bool{}
		for _, id := range i.Pending {
			pending[id] = true
		}
		for _, t := range i.Tasks {
			name := taskLabel(i.Tasks, t.ID)
			in := ""
			if t.Input != nil {
				in = " · " + preview(toJSON(t.Input), 60)
			}
			switch {
			case !pending[t.ID]:
				p.body.Add(statusRow(name, "done"+in, widget.SuccessImportance, nil))
			case t.ID == stop.Next:
				p.body.Add(statusRow(name, "runs next"+in, widget.HighImportance, nil))
			default:
				id := t.ID
				b := newKeyButton(nil, "Run next", theme.MediaPlayIcon(), func() { p.m.pickTask(id) })
				b.Importance = widget.LowImportance
				p.body.Add(statusRow(name, "waiting"+in, widget.MediumImportance, b))
			}
		}
	case engine.PhaseBarrier:
		p.title.SetText(fmt.Sprintf("Step %d · barrier: %s to apply", i.Step, barrierWaits(countWrites(i.Tasks), countSends(stop.Sends))))
		help := "Nothing is applied yet. Untick a write to drop it or replace its value: the step then becomes a fork that lists the edits."
		if len(stop.Edits) > 0 {
			help = fmt.Sprintf("%d edited: the step's checkpoint will be a fork that lists the edits. Next phase applies the writes.", len(stop.Edits))
		}
		p.help.SetText(help)
		p.writes.sends = stop.Sends
		p.writes.set(i.Tasks, stop.Edits)
		if stop.SendsErr != nil {
			l := widget.NewLabel("The Send packets could not be read: " + stop.SendsErr.Error())
			l.Importance = widget.DangerImportance
			l.Wrapping = fyne.TextWrapWord
			p.body.Add(l)
		}
		p.body.Add(p.writes.obj)
		sum := channelSummary(i.Tasks, stop.Edits, p.m.channels())
		if len(sum) > 0 {
			h := widget.NewLabelWithStyle("Per channel", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			p.body.Add(h)
			for _, line := range sum {
				l := widget.NewLabel(line)
				l.Wrapping = fyne.TextWrapWord
				p.body.Add(l)
			}
		}
	case engine.PhaseApply:
		p.title.SetText(fmt.Sprintf("Step %d applied", i.Step))
		if len(i.Updated) == 0 {
			p.help.SetText("No channel changed. Step into (Shift+F10) enters the next step.")
		} else {
			p.help.SetText("These channels changed (the inspector shows the new checkpoint). Step into (Shift+F10) enters the next step.")
		}
		chans := map[string]engine.ChannelInfo{}
		for _, ch := range p.m.channels() {
			chans[ch.Name] = ch
		}
		for _, name := range i.Updated {
			v, ok := i.Values[name]
			text := "(empty)"
			if ok {
				text = preview(toJSON(v), 100)
			}
			label := name
			if ch, ok := chans[name]; ok { // a subgraph's own channel is not the graph's
				label += " · " + reducerName(ch)
			}
			p.body.Add(statusRow(label, text, widget.WarningImportance, nil))
		}
		if i.NS != "" {
			p.help.SetText("The subgraph's state after its step; its node waits in the parent's step. Next phase (Shift+F10) goes on inside it.")
		}
	}
	if i.NS != "" {
		p.title.SetText("Inside " + subgraphPath(i.NS) + " · " + p.title.Text)
	}
	p.body.Refresh()
}

// inputText says what a task reads: a Send's argument, or the state.
func inputText(t engine.TaskState) string {
	if t.Input != nil {
		return "input " + preview(toJSON(t.Input), 100)
	}
	return "reads the state"
}

// taskBlock is a task's name over a line of detail.
func taskBlock(name, detail string) fyne.CanvasObject {
	n := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	d := widget.NewLabel(detail)
	d.Wrapping = fyne.TextWrapWord
	return container.New(&tightVBox{}, n, d)
}

// statusRow is a name, a status in its importance and an optional button.
func statusRow(name, status string, imp widget.Importance, b fyne.CanvasObject) fyne.CanvasObject {
	n := widget.NewLabelWithStyle(name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	st := widget.NewLabel(status)
	st.Importance = imp
	st.Truncation = fyne.TextTruncateEllipsis
	if b == nil {
		return container.NewBorder(nil, nil, n, nil, st)
	}
	return container.NewBorder(nil, nil, n, b, st)
}

// setEnabled enables or disables w when that changes anything.
func setEnabled(w fyne.Disableable, on bool) {
	if on && w.Disabled() {
		w.Enable()
	} else if !on && !w.Disabled() {
		w.Disable()
	}
}
