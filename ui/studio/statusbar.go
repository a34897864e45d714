package studio

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// statusBar is the bottom line: store · graph · thread · step · run state ·
// time, with a short note at the right and a progress bar while a run or a
// load takes long. It follows the model; the label is set directly (not
// through a data binding, whose callbacks queue ahead of a run's result).
type statusBar struct {
	m *model
	composite
	text     *widget.Label
	note     *widget.Label
	progress *widget.ProgressBarInfinite
	stop     chan struct{}
	loading  int // loads in progress (a store)
	tick     func()
}

func newStatusBar(m *model) *statusBar {
	b := &statusBar{m: m}
	b.text = widget.NewLabel("")
	b.text.Truncation = fyne.TextTruncateEllipsis
	b.note = widget.NewLabel("")
	b.note.Importance = widget.LowImportance
	b.progress = widget.NewProgressBarInfinite()
	b.progress.Stop()
	b.progress.Hide()
	prog := container.NewGridWrap(fyne.NewSize(120, b.text.MinSize().Height), b.progress)
	b.compose(b, container.NewVBox(widget.NewSeparator(), container.NewBorder(nil, nil, nil, container.NewHBox(b.note, prog), b.text)))
	m.subscribe(chAll&^(chEvents|chLive), func(c part) {
		if c&chNote != 0 && b.note.Text != m.note {
			b.note.SetText(m.note)
		}
		if c&(chRun|chPhase) != 0 {
			b.showProgress()
		}
		b.update()
	})
	return b
}

// line is the status line for the model's state.
func (b *statusBar) line() string {
	m := b.m
	sc := m.scope()
	parts := []string{m.storeName}
	if g := m.graph(); g.Graph != nil {
		parts = append(parts, g.Graph.Name())
		switch {
		case g.Graph.ViewRuns():
			parts = append(parts, "runs on the server")
		case g.Graph.IsView():
			parts = append(parts, "read-only")
		}
	}
	if sc.thread != "" {
		parts = append(parts, "thread "+sc.thread)
	} else {
		parts = append(parts, "no thread")
	}
	if sc.read > 0 && !sc.complete {
		parts = append(parts, readingLine(sc.read, m.threadRow(sc.thread).Count))
	}
	// What follows the step is the thread's state at its latest
	// checkpoint: on an older one, the line says it views history and
	// names the latest step before that state.
	if v := sc.viewFor(); v != nil {
		if sc.atHead() || sc.head == "" {
			parts = append(parts, fmt.Sprintf("step %d", v.Snap.Metadata.Step))
		} else {
			parts = append(parts, fmt.Sprintf("viewing step %d (history)", v.Snap.Metadata.Step))
			if i := sc.tl.at(sc.head); i >= 0 {
				parts = append(parts, fmt.Sprintf("latest: step %d", sc.tl.items[i].step))
			}
		}
	}
	switch {
	case sc.dbg.phase != nil && (m.run.Going || sc.status == ""):
		parts = append(parts, phaseLine(sc.dbg.phase))
	case m.run.Busy && m.run.Thread == sc.thread:
		parts = append(parts, fmt.Sprintf("%s… %.1f s", m.run.Kind, time.Since(m.run.Started).Seconds()))
	case sc.status != "":
		parts = append(parts, sc.status)
	case sc.atHead() && sc.viewFor() != nil && sc.viewFor().Latest:
		// Not run in this window since the head moved: the head's own.
		parts = append(parts, string(engine.StatusOf(sc.viewFor().Snap, nil)))
	default:
		// What the thread list knows, when it is of the same head.
		for _, r := range m.threads {
			if r.ID == sc.thread && r.Status != "" && (r.Latest == sc.head || r.Latest == "") {
				parts = append(parts, r.Status)
			}
		}
	}
	if m.run.Last > 0 && !m.run.Going {
		parts = append(parts, "last run "+fmtDuration(m.run.Last))
	}
	return strings.Join(parts, " · ")
}

// readingLine says how far a long timeline's reading is: of total when
// the thread list knows the thread's count.
func readingLine(read, total int) string {
	if total > read {
		return fmt.Sprintf("reading the timeline: %s of %s checkpoints", grouped(read), grouped(total))
	}
	return fmt.Sprintf("reading the timeline: %s checkpoints", grouped(read))
}

// update rewrites the status line when it changed.
func (b *statusBar) update() {
	if l := b.line(); l != b.text.Text {
		b.text.SetText(l)
	}
}

// setLoading counts loads in progress (opening a store): while any goes,
// the progress bar moves. Calls must pair.
func (b *statusBar) setLoading(on bool) {
	if on {
		b.loading++
	} else if b.loading > 0 {
		b.loading--
	}
	b.showProgress()
}

// showProgress runs the progress bar (and ticks the elapsed time) while a
// run shows as busy or a load goes.
func (b *statusBar) showProgress() {
	busy := (b.m.run.Busy && b.m.waiting() == nil) || b.loading > 0
	if busy == (b.stop != nil) {
		return
	}
	if !busy {
		close(b.stop)
		b.stop = nil
		b.progress.Stop()
		b.progress.Hide()
		return
	}
	b.progress.Show()
	b.progress.Start()
	stop := make(chan struct{})
	b.stop = stop
	go func() {
		t := time.NewTicker(400 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				uiDo(func() {
					select {
					case <-stop:
					default:
						b.update()
						call(b.tick)
					}
				})
			}
		}
	}()
}

// String returns the current status line.
func (b *statusBar) String() string { return b.text.Text }

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}
