package studio

import (
	"reflect"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Tests reach the dialogs and menus the window shows the way a user does:
// through the window's overlays, by walking what each one draws.

// walkObjects calls fn on o and every visible object it draws, depth
// first, until fn returns true; it reports whether fn did.
func walkObjects(o fyne.CanvasObject, fn func(fyne.CanvasObject) bool) bool {
	if o == nil || !o.Visible() {
		return false
	}
	if fn(o) {
		return true
	}
	var kids []fyne.CanvasObject
	switch x := o.(type) {
	case *fyne.Container:
		kids = x.Objects
	case fyne.Widget:
		kids = test.WidgetRenderer(x).Objects()
	}
	for _, k := range kids {
		if walkObjects(k, fn) {
			return true
		}
	}
	return false
}

// inOverlays returns the first object of type T in the window's overlays,
// the top one first (a dialog's own question sits above it).
func inOverlays[T any](w fyne.Window) (T, bool) {
	var found T
	list := w.Canvas().Overlays().List()
	for i := len(list) - 1; i >= 0; i-- {
		if walkObjects(list[i], func(o fyne.CanvasObject) bool {
			t, ok := o.(T)
			if ok {
				found = t
			}
			return ok
		}) {
			return found, true
		}
	}
	return found, false
}

// overlayText is the text the top overlay shows (labels, rich texts and
// plain texts), one piece a line.
func overlayText(w fyne.Window) string {
	var b strings.Builder
	walkObjects(w.Canvas().Overlays().Top(), func(o fyne.CanvasObject) bool {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + "\n")
			return true
		case *widget.RichText:
			b.WriteString(x.String() + "\n")
			return true
		case *canvas.Text:
			b.WriteString(x.Text + "\n")
		}
		return false
	})
	return b.String()
}

// overlayMenu returns the items of the pop-up menu on top, or nil when
// none is shown. A menu's rows are unexported widgets, but each holds
// its item in the exported field Item.
func overlayMenu(w fyne.Window) []*fyne.MenuItem {
	m, ok := inOverlays[*widget.PopUpMenu](w)
	if !ok {
		return nil
	}
	items := make([]*fyne.MenuItem, 0, len(m.Items))
	for _, o := range m.Items {
		it := fyne.NewMenuItemSeparator()
		if v := reflect.ValueOf(o).Elem().FieldByName("Item"); v.IsValid() {
			it, _ = v.Interface().(*fyne.MenuItem)
		}
		items = append(items, it)
	}
	return items
}
