package studio

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/widget"
)

// statusBar is the bottom line: store · graph · thread · step · run state ·
// time, with a progress bar while work goes on.
type statusBar struct {
	s        *Studio
	obj      fyne.CanvasObject
	line     binding.String // the status line; the label shows it
	text     *widget.Label
	note     *widget.Label
	progress *widget.ProgressBarInfinite
	stop     chan struct{}
	busy     int // long jobs in progress
}

func newStatusBar(s *Studio) *statusBar {
	b := &statusBar{s: s}
	b.line = binding.NewString()
	b.text = widget.NewLabelWithData(b.line)
	b.text.Truncation = fyne.TextTruncateEllipsis
	b.note = widget.NewLabel("")
	b.note.Importance = widget.LowImportance
	b.progress = widget.NewProgressBarInfinite()
	b.progress.Stop()
	b.progress.Hide()
	prog := container.NewGridWrap(fyne.NewSize(120, b.text.MinSize().Height), b.progress)
	b.obj = container.NewVBox(widget.NewSeparator(), container.NewBorder(nil, nil, nil, container.NewHBox(b.note, prog), b.text))
	return b
}

// update rewrites the status line from the studio's state. It goes
// through a binding, as UI state in Fyne should: the label follows on its
// own.
func (b *statusBar) update() {
	s := b.s
	parts := []string{s.storeName}
	if g := s.graph(); g.Graph != nil {
		parts = append(parts, g.Graph.Name())
	}
	if s.thread != "" {
		parts = append(parts, "thread "+s.thread)
	} else {
		parts = append(parts, "no thread")
	}
	if v := s.view; v != nil {
		step := fmt.Sprintf("step %d", v.Snap.Metadata.Step)
		if s.sel != "" && s.sel != s.headID {
			step += " (history)"
		}
		parts = append(parts, step)
	}
	if s.runState != "" {
		state := s.runState
		if s.sess.running.Load() {
			state += fmt.Sprintf(" %.1f s", time.Since(s.runStarted).Seconds())
		}
		parts = append(parts, state)
	}
	if s.lastStep > 0 && !s.sess.running.Load() {
		parts = append(parts, "last run "+fmtDuration(s.lastStep))
	}
	_ = b.line.Set(strings.Join(parts, " · "))
}

// setBusy counts long work in progress (runs, opening a store, reading a
// long timeline): while any goes, a progress bar moves and the elapsed
// time ticks. Calls must pair: true when work starts, false when it ends.
func (b *statusBar) setBusy(busy bool) {
	if busy {
		b.busy++
	} else if b.busy > 0 {
		b.busy--
	}
	if b.busy > 0 && b.stop != nil {
		return // already ticking
	}
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
	if b.busy == 0 {
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
						b.s.pulseRunning()
					}
				})
			}
		}
	}()
}

// pulseRunning makes the running nodes pulse on the graph.
func (s *Studio) pulseRunning() {
	for _, on := range s.running {
		if on {
			s.pulse = !s.pulse
			s.gp.highlight()
			return
		}
	}
}

// flash shows a short note for a few seconds.
func (b *statusBar) flash(msg string) {
	b.note.SetText(msg)
	time.AfterFunc(4*time.Second, func() {
		uiDo(func() {
			if b.note.Text == msg {
				b.note.SetText("")
			}
		})
	})
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// String returns the current status line.
func (b *statusBar) String() string {
	v, _ := b.line.Get()
	return v
}
