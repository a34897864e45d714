package studio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/render"
	"github.com/weftstudio/weft/ui/bundle"
)

// menus builds the main menu: File · Run · View · Help.
func (s *Studio) menus() *fyne.MainMenu {
	open := fyne.NewMenuItem("Open store…", s.openStoreDialog)
	open.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	if s.cfg.OpenStore == nil {
		open.Disabled = true
	}
	newThread := fyne.NewMenuItem("New thread…", s.newThreadDialog)
	newThread.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}
	file := fyne.NewMenu("File",
		newThread,
		open,
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Export thread…", s.exportThreadDialog),
		fyne.NewMenuItem("Import thread…", s.importThreadDialog),
		fyne.NewMenuItem("Delete thread…", s.deleteThreadDialog),
		fyne.NewMenuItem("Export graph picture…", s.exportGraphDialog),
	)
	run := fyne.NewMenu("Run",
		fyne.NewMenuItem("Run    F5", s.Run),
		fyne.NewMenuItem("Step    F10", s.Step),
		fyne.NewMenuItem("Pause    F6", s.Pause),
		fyne.NewMenuItem("Cancel    Esc", s.Cancel),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Re-run from the selected checkpoint", s.rerunFrom),
		fyne.NewMenuItem("Edit state and fork…", s.insp.editDialog),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Break on every node    F9", func() { s.tb.breakAll.SetChecked(!s.tb.breakAll.Checked) }),
		fyne.NewMenuItem("Clear breakpoints", func() {
			s.breakBefore, s.breakAfter = map[string]bool{}, map[string]bool{}
			s.tb.breakAll.SetChecked(false)
			s.gp.highlight()
		}),
	)
	view := fyne.NewMenu("View",
		fyne.NewMenuItem("Zoom in", s.gp.view.ZoomIn),
		fyne.NewMenuItem("Zoom out", s.gp.view.ZoomOut),
		fyne.NewMenuItem("Fit graph", s.gp.view.Fit),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Interrupts", func() { s.tabs.SelectIndex(0) }),
		fyne.NewMenuItem("Events", func() { s.tabs.SelectIndex(1) }),
		fyne.NewMenuItem("Errors", func() { s.tabs.SelectIndex(2) }),
	)
	help := fyne.NewMenu("Help", fyne.NewMenuItem("Keyboard shortcuts", func() {
		dialog.ShowInformation("Keyboard shortcuts",
			"F5  Run to the next interrupt, breakpoint or the end\nF10  Step one super-step\nF6  Pause\nEsc  Cancel\nF9  Break on every node\n← →  Previous / next checkpoint\nCtrl+N  New thread\nCtrl+O  Open store\n\nRight-click a node's left or right half to set a breakpoint before or after it.", s.win)
	}))
	return fyne.NewMainMenu(file, run, view, help)
}

// installShortcuts binds the function keys when no entry has the focus.
func (s *Studio) installShortcuts() {
	c := s.win.Canvas()
	c.SetOnTypedKey(func(ev *fyne.KeyEvent) {
		switch ev.Name {
		case fyne.KeyF5:
			s.Run()
		case fyne.KeyF10:
			s.Step()
		case fyne.KeyF6:
			s.Pause()
		case fyne.KeyF9:
			s.tb.breakAll.SetChecked(!s.tb.breakAll.Checked)
		case fyne.KeyEscape:
			s.Cancel()
		case fyne.KeyLeft, fyne.KeyRight:
			// Walk the timeline one checkpoint at a time.
			i, ok := s.tl.index[s.sel]
			if !ok {
				return
			}
			if ev.Name == fyne.KeyLeft {
				i--
			} else {
				i++
			}
			s.tl.selectAt(i)
		}
	})
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { s.newThreadDialog() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}, func(fyne.Shortcut) { s.openStoreDialog() })
}

// keepKeys gives the keyboard back to the window after a click in a list
// or tree, so F5, F10 and the other function keys keep working (Fyne sends
// unmodified keys only to the focused widget).
func (s *Studio) keepKeys() {
	if c := s.win.Canvas(); c != nil {
		c.Unfocus()
	}
}

// openStoreDialog asks for a SQLite file or a DSN.
func (s *Studio) openStoreDialog() {
	if s.cfg.OpenStore == nil {
		return
	}
	entry := widget.NewEntry()
	entry.SetPlaceHolder("path/to/weft.db or postgres://…")
	browse := widget.NewButton("Browse…", func() {
		d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil || r == nil {
				return
			}
			entry.SetText(r.URI().Path())
			r.Close()
		}, s.win)
		d.Show()
	})
	content := container.NewBorder(nil, nil, nil, browse, entry)
	dialog.ShowCustomConfirm("Open store", "Open", "Cancel", content, func(ok bool) {
		if ok && strings.TrimSpace(entry.Text) != "" {
			s.OpenStore(strings.TrimSpace(entry.Text))
		}
	}, s.win)
}

// OpenStore switches the studio to the store named by spec (through
// Config.OpenStore). A file that is not a Weft store gets an explanation
// and the studio stays on its current store.
func (s *Studio) OpenStore(spec string) {
	if s.cfg.OpenStore == nil {
		return
	}
	type opened struct {
		saver checkpoint.Saver
		name  string
	}
	s.sb.setBusy(true)
	goBG(s.sess, func() (opened, error) {
		sv, name, err := s.cfg.OpenStore(spec)
		return opened{sv, name}, err
	}, func(o opened, err error) {
		s.sb.setBusy(false)
		if err != nil {
			s.explainDialog(spec, err)
			return
		}
		s.cfg.Store, s.storeName = o.saver, o.name
		if s.storeName == "" {
			s.storeName = spec
		}
		s.selectGraph(s.graphIdx)
	})
}

// explainDialog tells the user why a store could not be opened.
func (s *Studio) explainDialog(spec string, err error) {
	msg := widget.NewLabel(fmt.Sprintf("Could not open %s.\n\n%s\n\nThe studio stays on %s.", spec, explain(err), s.storeName))
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Cannot open this store", "OK", msg, s.win)
	d.Resize(fyne.NewSize(520, 260))
	s.lastExplain = msg.Text
	d.Show()
}

// Explain turns an error from opening or using a store (a foreign or
// corrupt SQLite file, a wrong encryption key, a read-only store) into a
// sentence for people that still wraps err; other errors come back as they
// are, and nil stays nil.
func Explain(err error) error { return explain(err) }

func explain(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sqlite.ErrForeignFile):
		return fmt.Errorf("it is an SQLite database, but it belongs to another application, not Weft: the studio will not touch it. (%w)", err)
	case errors.Is(err, sqlite.ErrNotDatabase):
		return fmt.Errorf("it is not a database at all: pick a Weft store (a .db file the studio or weft created) or a new file name. (%w)", err)
	case errors.Is(err, sqlite.ErrCorrupt):
		return fmt.Errorf("the file is damaged (truncated or overwritten); restore it from a backup. (%w)", err)
	case errors.Is(err, crypt.ErrWrongKey):
		return fmt.Errorf("the store is encrypted with another key: set WEFT_ENCRYPTION_KEY to the right one. (%w)", err)
	case errors.Is(err, crypt.ErrKeyRequired):
		return fmt.Errorf("the store is encrypted: set WEFT_ENCRYPTION_KEY. (%w)", err)
	case errors.Is(err, checkpoint.ErrReadOnly):
		return fmt.Errorf("the store is read-only here (written by a newer Weft, or not writable): you can look but not run. (%w)", err)
	case errors.Is(err, bundle.ErrThreadExists):
		return fmt.Errorf("%w: import it under another id", err)
	}
	return err
}

func errorsIsCanceled(err error) bool { return errors.Is(err, context.Canceled) }

// exportThreadDialog saves the selected thread as a JSON bundle.
func (s *Studio) exportThreadDialog() {
	if s.thread == "" {
		s.sb.flash("Select a thread to export")
		return
	}
	thread := s.thread
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		s.exportThread(thread, w)
	}, s.win)
	d.SetFileName(thread + ".weft.json")
	d.Show()
}

// exportThread writes thread as a bundle to w and closes it.
func (s *Studio) exportThread(thread string, w io.WriteCloser) {
	_, saver := s.sess.current()
	goBG(s.sess, func() (struct{}, error) {
		defer w.Close()
		return struct{}{}, bundle.Export(context.Background(), saver, thread, w)
	}, func(_ struct{}, err error) {
		if err != nil {
			s.showError("Exporting thread", err)
			return
		}
		s.sb.flash("Exported thread " + thread)
	})
}

// deleteThreadDialog deletes the selected thread, every namespace of it,
// after a confirmation that names it.
func (s *Studio) deleteThreadDialog() {
	if s.thread == "" {
		s.sb.flash("Select a thread to delete")
		return
	}
	thread := s.thread
	dialog.ShowConfirm("Delete thread", "Delete thread "+thread+" and all its checkpoints? Export it first to keep a copy.", func(ok bool) {
		if ok {
			s.deleteThread(thread)
		}
	}, s.win)
}

// deleteThread removes thread from the store and from the views.
func (s *Studio) deleteThread(thread string) {
	_, saver := s.sess.current()
	goBG(s.sess, func() (struct{}, error) {
		return struct{}{}, saver.DeleteThread(context.Background(), thread)
	}, func(_ struct{}, err error) {
		if err != nil {
			s.showError("Deleting thread", err)
			return
		}
		if s.thread == thread {
			s.clearThread("")
		}
		s.sb.flash("Deleted thread " + thread)
		s.refreshThreads(true)
	})
}

// importThreadDialog reads a bundle into the store; an id that exists is
// offered a new name.
func (s *Studio) importThreadDialog() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			return
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			s.showError("Importing thread", err)
			return
		}
		s.importThread(data, "")
	}, s.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json"}))
	d.Show()
}

// importThread imports a bundle, asking for another id when the thread
// exists.
func (s *Studio) importThread(data []byte, rename string) {
	_, saver := s.sess.current()
	goBG(s.sess, func() (string, error) {
		return bundle.Import(context.Background(), saver, bytes.NewReader(data), bundle.Rename(rename))
	}, func(id string, err error) {
		if errors.Is(err, bundle.ErrThreadExists) {
			e := widget.NewEntry()
			e.SetText(s.newThreadID())
			dialog.ShowForm("Thread exists", "Import", "Cancel",
				[]*widget.FormItem{widget.NewFormItem("Import as", e)}, func(ok bool) {
					if ok {
						s.importThread(data, e.Text)
					}
				}, s.win)
			return
		}
		if err != nil {
			s.showError("Importing thread", err)
			return
		}
		s.setThread(id)
		s.refreshThreads(false)
	})
}

// exportGraphDialog saves the graph as SVG or PNG (by file name).
func (s *Studio) exportGraphDialog() {
	name, _, _, topo := s.sess.graphInfo()
	if topo == nil {
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		s.exportGraph(w, strings.EqualFold(w.URI().Extension(), ".png"), w.URI().Name())
	}, s.win)
	d.SetFileName(strings.ReplaceAll(name, " ", "-") + ".svg")
	d.Show()
}

// exportGraph writes the graph to w and closes it: a PNG drawn like the
// view with the current highlights, or Graphviz's SVG.
func (s *Studio) exportGraph(w io.WriteCloser, png bool, name string) {
	_, _, _, topo := s.sess.graphInfo()
	geom := s.gp.view.Geometry()
	hl := s.computeHighlight()
	goBG(s.sess, func() (struct{}, error) {
		defer w.Close()
		var data []byte
		var err error
		if png {
			data, err = render.PNG(geom, hl, render.PNGOptions{})
		} else {
			data, err = s.layouter.SVG(context.Background(), topo, render.DOTOptions{})
		}
		if err == nil {
			_, err = w.Write(data)
		}
		return struct{}{}, err
	}, func(_ struct{}, err error) {
		if err != nil {
			s.showError("Exporting the graph", err)
			return
		}
		s.sb.flash("Exported " + name)
	})
}
