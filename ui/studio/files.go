package studio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/render"
)

// menus builds the main menu: File · Run · View · Help. Every action's
// key is shown by its menu item.
func (s *Studio) menus() *fyne.MainMenu {
	key := func(item *fyne.MenuItem, name fyne.KeyName, mod fyne.KeyModifier) *fyne.MenuItem {
		item.Shortcut = &desktop.CustomShortcut{KeyName: name, Modifier: mod}
		return item
	}
	ctrl := fyne.KeyModifierShortcutDefault
	open := key(fyne.NewMenuItem("Open store…", s.openStoreDialog), fyne.KeyO, ctrl)
	if s.cfg.OpenStore == nil {
		open.Disabled = true
	}
	connect := key(fyne.NewMenuItem("Connect to server…", s.connectDialog), fyne.KeyO, ctrl|fyne.KeyModifierShift)
	if s.cfg.OpenServer == nil {
		connect.Disabled = true
	}
	file := fyne.NewMenu("File",
		key(fyne.NewMenuItem("New thread…", s.newThreadDialog), fyne.KeyN, ctrl),
		open,
		connect,
		key(fyne.NewMenuItem("Reload", s.refresh), fyne.KeyR, ctrl),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Export thread…", s.exportThreadDialog),
		fyne.NewMenuItem("Import thread…", s.importThreadDialog),
		fyne.NewMenuItem("Save thread as test…", s.saveTestDialog),
		fyne.NewMenuItem("Delete thread…", s.deleteThreadDialog),
		fyne.NewMenuItem("Export graph picture…", s.exportGraphDialog),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Storage…", s.openStorage),
		fyne.NewMenuItemSeparator(),
		quitItem(key(fyne.NewMenuItem("Quit", s.quit), fyne.KeyQ, ctrl)),
	)
	run := fyne.NewMenu("Run",
		key(fyne.NewMenuItem("Run", s.Run), fyne.KeyF5, 0),
		key(fyne.NewMenuItem("Step", s.Step), fyne.KeyF10, 0),
		key(fyne.NewMenuItem("Step into (phase by phase)", s.StepInto), fyne.KeyF10, fyne.KeyModifierShift),
		key(fyne.NewMenuItem("Pause", s.Pause), fyne.KeyF6, 0),
		key(fyne.NewMenuItem("Cancel", s.Cancel), fyne.KeyEscape, 0),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Re-run from the selected checkpoint", s.rerunFrom),
		fyne.NewMenuItem("Edit state and fork…", s.editDialog),
		fyne.NewMenuItem("What if… (edit the writes of the selected step)", s.whatIfDialog),
		fyne.NewMenuItemSeparator(),
		key(fyne.NewMenuItem("Break on every node", func() { s.m.setBreakAll(!s.m.brk.All) }), fyne.KeyF9, 0),
		fyne.NewMenuItem("Clear breakpoints", s.m.clearBreakpoints),
		fyne.NewMenuItem("Clear the node cache", s.clearCache),
	)
	view := fyne.NewMenu("View",
		fyne.NewMenuItem("Zoom in", s.gp.view.ZoomIn),
		fyne.NewMenuItem("Zoom out", s.gp.view.ZoomOut),
		fyne.NewMenuItem("Fit graph", s.gp.view.Fit),
		fyne.NewMenuItemSeparator(),
		key(fyne.NewMenuItem("Previous checkpoint on this branch", func() { s.travel(-1) }), fyne.KeyLeft, 0),
		key(fyne.NewMenuItem("Next checkpoint on this branch", func() { s.travel(1) }), fyne.KeyRight, 0),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Compare checkpoints… (Ctrl+click on the timeline)", func() { s.compareDialog("", "") }),
		fyne.NewMenuItemSeparator(),
		fyne.NewMenuItem("Interrupts", func() { s.tabs.SelectIndex(0) }),
		fyne.NewMenuItem("Events", func() { s.tabs.SelectIndex(1) }),
		fyne.NewMenuItem("Errors", func() { s.tabs.SelectIndex(2) }),
		fyne.NewMenuItem("Step into", func() { s.selectTab("Step") }),
		fyne.NewMenuItem("Watches", func() { s.selectTab("Watches") }),
		fyne.NewMenuItem("Breakpoints", func() { s.selectTab("Breakpoints") }),
		fyne.NewMenuItem("Long-term store…", s.openLongTerm),
	)
	help := fyne.NewMenu("Help", fyne.NewMenuItem("Keyboard shortcuts", func() {
		dialog.ShowInformation("Keyboard shortcuts",
			"F5  Run to the next interrupt, breakpoint or the end\nF10  Step one super-step\nShift+F10  Step into: the next phase of a super-step (plan, each task, barrier, apply)\nF6  Pause\nEsc  Cancel the run\nF9  Break on every node\n← →  Previous / next checkpoint on the branch\nCtrl+N  New thread\nCtrl+O  Open store\nCtrl+R  Reload the store\nCtrl+Q  Quit\n\nThese keys work wherever the focus is; a text field keeps ← → for itself.\nRight-click a node for breakpoints before or after it, with a condition if you like.", s.win)
	}), fyne.NewMenuItem("About Weft Studio", s.about))
	return fyne.NewMainMenu(file, run, view, help)
}

// about shows the build's version: the module version the binary was
// built at (or its VCS revision), and the Go version.
func (s *Studio) about() {
	dialog.ShowInformation("About Weft Studio", aboutText(), s.win)
}

// aboutText says which build this is, from the binary's build info.
func aboutText() string {
	ver, rev, goVer := "(devel)", "", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			ver = bi.Main.Version
		}
		for _, st := range bi.Settings {
			if st.Key == "vcs.revision" {
				rev = st.Value
			}
		}
	}
	text := "Weft Studio " + ver
	if rev != "" {
		text += "\nrevision " + rev
	}
	return text + "\nbuilt with " + goVer
}

// installShortcuts binds the window's keys for when nothing has the focus
// (the focusable widgets pass them on themselves, see keys.go) and the
// Ctrl shortcuts for windows without a menu bar.
func (s *Studio) installShortcuts() {
	c := s.win.Canvas()
	c.SetOnTypedKey(func(ev *fyne.KeyEvent) { s.windowKey(ev, false) })
	ctrl := fyne.KeyModifierShortcutDefault
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: ctrl}, func(fyne.Shortcut) { s.newThreadDialog() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: ctrl}, func(fyne.Shortcut) { s.openStoreDialog() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: ctrl | fyne.KeyModifierShift}, func(fyne.Shortcut) { s.connectDialog() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: ctrl}, func(fyne.Shortcut) { s.refresh() })
	c.AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: ctrl}, func(fyne.Shortcut) { s.quit() })
}

// quitItem marks item as the menu's Quit, so the driver adds no second one.
func quitItem(item *fyne.MenuItem) *fyne.MenuItem {
	item.IsQuit = true
	return item
}

// quit closes every window of the app, as the driver's own Quit item does:
// each window's OnClosed runs (the studio's keeps the panel layout and stops
// a run), and the app ends with its last window.
func (s *Studio) quit() {
	// A copy: closing a window takes it out of the driver's list.
	for _, w := range slices.Clone(s.app.Driver().AllWindows()) {
		w.Close()
	}
}

// openStoreDialog asks for a SQLite file, a DSN or a server's address:
// Enter opens it; a file
// that does not exist is created only after the user says so.
func (s *Studio) openStoreDialog() {
	if s.cfg.OpenStore == nil {
		return
	}
	entry := widget.NewEntry()
	entry.SetPlaceHolder("path/to/weft.db, postgres://… or http://127.0.0.1:2024")
	var d dialog.Dialog
	submit := func() {
		spec := strings.TrimSpace(entry.Text)
		if spec == "" {
			return
		}
		d.Hide()
		s.openStoreAsking(spec)
	}
	entry.OnSubmitted = func(string) { submit() }
	browse := widget.NewButton("Browse…", func() {
		fd := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil || r == nil {
				return
			}
			entry.SetText(r.URI().Path())
			r.Close()
		}, s.win)
		fd.Show()
	})
	hint := widget.NewLabel("A SQLite file (created if you confirm), a postgres:// DSN, a LangGraph store, or a LangGraph server's http(s):// address. Enter opens it.")
	hint.Importance = widget.LowImportance
	hint.Wrapping = fyne.TextWrapWord
	content := container.NewVBox(container.NewBorder(nil, nil, nil, browse, entry), hint)
	d = dialog.NewCustomConfirm("Open store", "Open", "Cancel", content, func(ok bool) {
		if ok {
			submit()
		}
	}, s.win)
	d.Resize(fyne.NewSize(620, 200))
	showDialog(d, content)
	s.win.Canvas().Focus(entry)
}

// openStoreAsking opens spec, first asking before a file that does not
// exist is created.
func (s *Studio) openStoreAsking(spec string) {
	if !isDSN(spec) {
		if _, err := os.Stat(spec); errors.Is(err, os.ErrNotExist) {
			// A store can be created in a folder, not a folder with it:
			// offering "Create" there would only fail after the yes.
			if dir := filepath.Dir(spec); !isDir(dir) {
				dialog.NewInformation("No such folder",
					fmt.Sprintf("The folder %s does not exist, so no store can be created at %s. Create the folder first or pick another path.", dir, spec),
					s.win).Show()
				return
			}
			c := dialog.NewConfirm("Create a new store?",
				fmt.Sprintf("%s does not exist. Create a new, empty Weft store there?", spec),
				func(ok bool) {
					if ok {
						s.OpenStore(spec)
					}
				}, s.win)
			c.SetConfirmText("Create")
			c.Show()
			return
		}
	}
	s.OpenStore(spec)
}

// isDir reports whether path names an existing folder.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// isDSN reports whether spec names a store by URL rather than a file.
func isDSN(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	return ok && !strings.ContainsAny(scheme, `/\`)
}

// OpenStore switches the studio to the store named by spec (through
// Config.OpenStore). A file that is not a Weft store gets an explanation
// and the studio stays on its current store.
func (s *Studio) OpenStore(spec string) {
	if s.cfg.OpenStore == nil {
		return
	}
	s.openWith(spec, func() (checkpoint.Saver, string, error) { return s.cfg.OpenStore(spec) })
}

// openWith shows the store open returns, opened in the background; spec
// names it until open gives its name, and in the dialog if it fails.
func (s *Studio) openWith(spec string, open func() (checkpoint.Saver, string, error)) {
	type opened struct {
		saver checkpoint.Saver
		name  string
	}
	s.sb.setLoading(true)
	goBG(s.sess, func() (opened, error) {
		sv, name, err := open()
		return opened{sv, name}, err
	}, func(o opened, err error) {
		s.sb.setLoading(false)
		if err != nil {
			s.explainDialog(spec, err)
			return
		}
		s.cfg.Store = o.saver
		name := o.name
		if name == "" {
			name = spec
		}
		s.useStore(o.saver, name)
	})
}

// explainDialog tells the user why a store could not be opened.
func (s *Studio) explainDialog(spec string, err error) {
	msg := widget.NewLabel(fmt.Sprintf("Could not open %s.\n\n%s\n\nThe studio stays on %s.", spec, explain(err), s.m.storeName))
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("Cannot open this store", "OK", msg, s.win)
	d.Resize(fyne.NewSize(520, 260))
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
	thread := s.m.thread()
	if thread == "" {
		s.flash("Select a thread to export")
		return
	}
	d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
		if err != nil || w == nil {
			return
		}
		s.rememberFolder(w.URI())
		s.exportThread(thread, w, w.URI().Path())
	}, s.win)
	d.SetFileName(thread + ".weft.json")
	s.startIn(d)
	d.Show()
}

// exportThread writes thread as a bundle to w (the file at path) and
// closes it.
func (s *Studio) exportThread(thread string, w io.WriteCloser, path string) {
	_, saver := s.sess.current()
	goBG(s.sess, func() (struct{}, error) {
		defer w.Close()
		return struct{}{}, bundle.Export(context.Background(), saver, thread, w)
	}, func(_ struct{}, err error) {
		if err != nil {
			s.showError("Exporting thread", err)
			return
		}
		s.flash("Exported thread " + thread + " to " + path)
	})
}

// deleteThreadDialog deletes the selected thread, every namespace of it,
// after a confirmation that names it; the button says Delete, in the
// danger colour.
func (s *Studio) deleteThreadDialog() {
	thread := s.m.thread()
	if thread == "" {
		s.flash("Select a thread to delete")
		return
	}
	d := dialog.NewConfirm("Delete thread", "Delete thread "+thread+" and all its checkpoints? This cannot be undone; export it first to keep a copy.", func(ok bool) {
		if ok {
			s.deleteThread(thread)
		}
	}, s.win)
	d.SetConfirmText("Delete")
	d.SetDismissText("Keep it")
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
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
		s.m.update(func() {
			var rows []threadRow
			for _, r := range s.m.threads {
				if r.ID != thread {
					rows = append(rows, r)
				}
			}
			s.m.setThreads(rows, s.m.moreThreads)
			if s.m.thread() == thread {
				s.m.setThread("")
			}
		})
		s.flash("Deleted thread " + thread)
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
		s.rememberFolder(r.URI())
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			s.showError("Importing thread", err)
			return
		}
		s.importThread(data, "")
	}, s.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".json"}))
	s.startIn(d)
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
			d := dialog.NewForm("Thread exists", "Import", "Cancel",
				[]*widget.FormItem{widget.NewFormItem("Import as", e)}, func(ok bool) {
					if ok {
						s.importThread(data, e.Text)
					}
				}, s.win)
			d.Resize(fyne.NewSize(460, 180)) // room for the whole id
			showDialog(d, e)
			return
		}
		if err != nil {
			s.showError("Importing thread", err)
			return
		}
		s.m.update(func() {
			s.m.setThreadRow(threadRow{ID: id})
			s.m.setThread(id)
		})
		s.refreshThreads(false)
	})
}

// folderKey is the preference holding the folder last used in a file
// dialog.
const folderKey = "last_folder"

// rememberFolder keeps the folder of u for the next file dialog.
func (s *Studio) rememberFolder(u fyne.URI) {
	if dir, err := storage.Parent(u); err == nil {
		s.app.Preferences().SetString(folderKey, dir.String())
	}
}

// startIn opens a file dialog in the folder used last.
func (s *Studio) startIn(d *dialog.FileDialog) {
	if dir := s.app.Preferences().String(folderKey); dir != "" {
		if u, err := storage.ParseURI(dir); err == nil {
			if l, err := storage.ListerForURI(u); err == nil {
				d.SetLocation(l)
			}
		}
	}
}

// pictureFormats are the formats a graph picture is exported in.
var pictureFormats = []string{"SVG (vector, Graphviz)", "PNG (as drawn, with highlights)"}

// exportGraphDialog asks for the picture's format, then where to save it;
// the folder is remembered, and the status bar says where the file went.
func (s *Studio) exportGraphDialog() {
	g := s.m.graph().Graph
	if g == nil {
		return
	}
	format := widget.NewRadioGroup(pictureFormats, nil)
	format.SetSelected(s.app.Preferences().StringWithFallback("picture_format", pictureFormats[0]))
	dialog.ShowCustomConfirm("Export graph picture", "Choose file…", "Cancel", format, func(ok bool) {
		if !ok {
			return
		}
		png := format.Selected == pictureFormats[1]
		s.app.Preferences().SetString("picture_format", format.Selected)
		ext := ".svg"
		if png {
			ext = ".png"
		}
		d := dialog.NewFileSave(func(w fyne.URIWriteCloser, err error) {
			if err != nil || w == nil {
				return
			}
			s.rememberFolder(w.URI())
			s.exportGraph(w, png, w.URI().Path())
		}, s.win)
		d.SetFileName(strings.ReplaceAll(g.Name(), " ", "-") + ext)
		d.SetFilter(storage.NewExtensionFileFilter([]string{ext}))
		s.startIn(d)
		d.Show()
	}, s.win)
}

// exportGraph writes the graph to w and closes it: a PNG drawn like the
// view with the current highlights, or Graphviz's SVG; where names the
// file in the note that follows.
func (s *Studio) exportGraph(w io.WriteCloser, png bool, where string) {
	g := s.m.graph().Graph
	if g == nil {
		w.Close()
		return
	}
	topo := g.Topology()
	geom := s.gp.view.Geometry()
	hl := highlightOf(s.m)
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
		s.flash("Saved the graph picture to " + where)
	})
}
