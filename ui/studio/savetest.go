package studio

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/replay/replaytest"
)

// saveTestForm is the File → Save as test dialog.
type saveTestForm struct {
	composite
	dlg    dialog.Dialog
	dir    *widget.Entry
	name   *widget.Entry
	graph  *widget.Entry
	strict *widget.Check
	pkg    *widget.Label
	errLbl *widget.Label
	saveB  *widget.Button
	done   *widget.Label // what was written, once it was
}

// saveTestDialog turns the selected thread into a regression test of the
// program's package: its bundle under testdata/ and a test that replays it
// against the code (replaytest.SaveTest). The folder starts as the
// program's package (Config.Package, else the working directory); the
// test's package clause is read from its Go files.
func (s *Studio) saveTestDialog() {
	thread := s.m.thread()
	if thread == "" {
		s.flash("Select a thread to save as a test")
		return
	}
	f := &saveTestForm{}
	f.dir = widget.NewEntry()
	dir := s.cfg.Package
	if dir == "" {
		dir, _ = os.Getwd()
	}
	f.dir.SetText(dir)
	f.pkg = widget.NewLabel("")
	f.pkg.Importance = widget.LowImportance
	f.pkg.Wrapping = fyne.TextWrapWord
	f.name = widget.NewEntry()
	f.name.SetText(testNameFor(thread))
	f.graph = widget.NewEntry()
	f.graph.SetPlaceHolder("e.g. newGraph(nil) — empty: the test gets a function for you to fill in")
	f.strict = widget.NewCheck("Strict: every model and tool call is served from the recording (offline, fails on a new call)", nil)
	f.strict.SetChecked(true)
	f.errLbl = widget.NewLabel("")
	f.errLbl.Importance = widget.DangerImportance
	f.errLbl.Wrapping = fyne.TextWrapWord
	f.done = widget.NewLabel("")
	f.done.Wrapping = fyne.TextWrapWord
	f.done.Hide()
	check := func() {
		f.done.Hide()
		pkg, err := goPackage(strings.TrimSpace(f.dir.Text))
		switch {
		case err != nil:
			f.pkg.SetText("")
			f.errLbl.SetText(err.Error())
		case !validTestName(f.name.Text):
			f.pkg.SetText("package " + pkg)
			f.errLbl.SetText("The test name must be Test followed by a word starting with a capital letter or digit, e.g. TestRefundThread.")
		default:
			f.pkg.SetText("package " + pkg + " · the thread goes under testdata/, the test beside the package's files")
			f.errLbl.SetText("")
		}
		if f.errLbl.Text != "" {
			f.saveB.Disable()
		} else {
			f.saveB.Enable()
		}
	}
	browse := widget.NewButton("Browse…", func() {
		fd := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				f.dir.SetText(u.Path())
			}
		}, s.win)
		if l, err := storage.ListerForURI(storage.NewFileURI(strings.TrimSpace(f.dir.Text))); err == nil {
			fd.SetLocation(l)
		}
		fd.Show()
	})
	f.saveB = widget.NewButton("Save test", func() { s.saveTest(thread, f) })
	f.saveB.Importance = widget.HighImportance
	f.dir.OnChanged = func(string) { check() }
	f.name.OnChanged = func(string) { check() }
	form := widget.NewForm(
		widget.NewFormItem("Package folder", container.NewBorder(nil, nil, nil, browse, f.dir)),
		widget.NewFormItem("", f.pkg),
		widget.NewFormItem("Test name", f.name),
		widget.NewFormItem("Graph", f.graph),
		widget.NewFormItem("", f.strict),
	)
	intro := widget.NewLabel(fmt.Sprintf("Thread %s becomes a test that replays it against the current code and fails at the first checkpoint where the code now does something else.", thread))
	intro.Wrapping = fyne.TextWrapWord
	closeB := widget.NewButton("Close", func() { f.dlg.Hide() })
	content := container.NewBorder(intro, container.NewVBox(f.errLbl, f.done, container.NewHBox(layoutSpacer(), closeB, f.saveB)), nil, nil, form)
	f.dlg = dialog.NewCustomWithoutButtons("Save thread as a test", f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(720, 420))
	check()
	showDialog(f.dlg, content)
}

// saveTest writes the test the form describes, off the UI goroutine.
func (s *Studio) saveTest(thread string, f *saveTestForm) {
	dir := strings.TrimSpace(f.dir.Text)
	name := strings.TrimSpace(f.name.Text)
	pkg, err := goPackage(dir)
	if err != nil {
		f.errLbl.SetText(err.Error())
		return
	}
	var opts []replaytest.FileOption
	if expr := strings.TrimSpace(f.graph.Text); expr != "" {
		opts = append(opts, replaytest.GraphExpr(expr))
	}
	if f.strict.Checked {
		opts = append(opts, replaytest.StrictFile())
	}
	_, saver := s.sess.current()
	f.saveB.Disable()
	goBG(s.sess, func() (replaytest.Saved, error) {
		return replaytest.SaveTest(context.Background(), saver, thread, dir, pkg, name, opts...)
	}, func(saved replaytest.Saved, err error) {
		f.saveB.Enable()
		if err != nil {
			f.errLbl.SetText("Not saved: " + explain(err).Error())
			return
		}
		text := fmt.Sprintf("Saved the thread to %s and the test to %s.", saved.Bundle, saved.Test)
		if saved.TestKept {
			text = fmt.Sprintf("Saved the thread to %s; %s was there already and is kept as it is (it replays the new recording).", saved.Bundle, saved.Test)
		}
		text += fmt.Sprintf("\nRun it: cd %s && go test -run '^%s$' .", dir, name)
		f.done.SetText(text)
		f.done.Show()
		s.flash("Saved " + name + " to " + saved.Test)
	})
}

// goPackage returns the package clause of the Go files in dir (test files
// aside), with an error for people when there are none or they disagree.
func goPackage(dir string) (string, error) {
	if dir == "" {
		//lint:ignore ST1005 a sentence the Save-as-test dialog shows as it is
		return "", errors.New("Choose the folder of the package the test belongs to.")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		//lint:ignore ST1005 a sentence the Save-as-test dialog shows as it is
		return "", fmt.Errorf("Cannot read %s: %v", dir, err)
	}
	name := ""
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.PackageClauseOnly)
		if err != nil {
			continue
		}
		if name != "" && f.Name.Name != name {
			//lint:ignore ST1005 a sentence the Save-as-test dialog shows as it is
			return "", fmt.Errorf("%s holds packages %s and %s: choose one package's folder.", dir, name, f.Name.Name)
		}
		name = f.Name.Name
	}
	if name == "" {
		//lint:ignore ST1005 a sentence the Save-as-test dialog shows as it is
		return "", fmt.Errorf("%s holds no Go package: choose the folder of your program (or of the package that builds the graph).", dir)
	}
	return name, nil
}

// testNameFor proposes a test name for a thread: "Test" and its id in
// words ("refund-42" → TestThreadRefund42).
func testNameFor(thread string) string {
	var b strings.Builder
	b.WriteString("TestThread")
	up := true
	for _, r := range thread {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if up {
				r = unicode.ToUpper(r)
				up = false
			}
			if r < 128 {
				b.WriteRune(r)
			}
		default:
			up = true
		}
	}
	return b.String()
}

// validTestName reports whether go test runs name as a test.
func validTestName(name string) bool {
	rest, ok := strings.CutPrefix(name, "Test")
	if !ok || rest == "" || !token.IsIdentifier(name) {
		return false
	}
	return !unicode.IsLower([]rune(rest)[0])
}
