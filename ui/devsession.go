package ui

import (
	"fmt"
	"os"
	"reflect"
	"time"

	"fyne.io/fyne/v2"

	"github.com/weftstudio/weft/devloop"
	"github.com/weftstudio/weft/ui/studio"
)

// devSession is the program's side of weft dev: the window reopens where
// the last build's was (restore), keeps its session in the file weft dev
// names (every second and when it closes, so a crash loses at most a
// second), shows builds and their errors in the Build tab, and saves and
// quits when a new build takes over.
func devSession(a fyne.App, s *studio.Studio, p *devloop.Program, restore bool, last studio.Session, store func() string) {
	built := studio.Build{N: p.Build, Running: p.Build, At: p.BuiltAt, OK: true}
	s.ShowBuild(built)
	var saved studio.Session
	save := func() {
		ss := s.Session()
		ss.Store = store()
		if reflect.DeepEqual(ss, saved) {
			return
		}
		if err := p.SaveSession(ss); err != nil {
			fmt.Fprintln(os.Stderr, "weft dev: saving the window's session:", err)
			return
		}
		saved = ss
	}
	if restore {
		s.Restore(last, func(err error) {
			m := devloop.Message{Type: devloop.MsgShown, PID: os.Getpid()}
			if err != nil {
				m.Err = err.Error()
			} else if !p.BuiltAt.IsZero() {
				m.Took = time.Since(p.BuiltAt)
				built.Restarted = m.Took
				s.ShowBuild(built)
			}
			_ = p.Send(m)
		})
	}
	w := s.Window()
	w.SetCloseIntercept(func() {
		save()
		w.Close()
	})
	tick := time.NewTicker(time.Second)
	go func() {
		for range tick.C {
			fyne.Do(save)
		}
	}()
	go p.Listen(func(m devloop.Message) {
		fyne.Do(func() {
			switch m.Type {
			case devloop.MsgBuilding:
				s.ShowBuild(studio.Build{N: m.Build, Running: p.Build, At: m.At, Building: true})
			case devloop.MsgFailed:
				b := studio.Build{N: m.Build, Running: p.Build, At: m.At, Output: m.Output}
				for _, e := range m.Errors {
					b.Errors = append(b.Errors, studio.BuildError{File: e.File, Path: e.Path, Line: e.Line, Col: e.Col, Msg: e.Msg})
				}
				s.ShowBuild(b)
			case devloop.MsgUnchanged:
				s.ShowBuild(built)
			case devloop.MsgQuit:
				tick.Stop()
				save()
				_ = p.Send(devloop.Message{Type: devloop.MsgSaved})
				a.Quit()
			}
		})
	})
}
