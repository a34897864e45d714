package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// keyFunc handles a key that acts on the whole window (F5, F10, F6, F9,
// Esc while a run goes, and ←/→ outside text fields) and reports whether it
// did. inText says the key was typed in a text field, which keeps its own
// arrows and typing.
type keyFunc func(ev *fyne.KeyEvent, inText bool) bool

// Fyne gives an unmodified key only to the focused widget, and the
// window's own handler runs only when nothing has the focus: a click in a
// list, tree or check box would take the function keys away from the
// window. The widgets below are the standard ones with their key handling
// first offered to the window; the studio's panels use them for everything
// that can take the focus.

// keyList is a widget.List that passes window keys on.
type keyList struct {
	widget.List
	keys keyFunc
}

func newKeyList(keys keyFunc, length func() int, create func() fyne.CanvasObject, update func(widget.ListItemID, fyne.CanvasObject)) *keyList {
	l := &keyList{keys: keys}
	l.Length, l.CreateItem, l.UpdateItem = length, create, update
	l.ExtendBaseWidget(l)
	return l
}

// TypedKey is part of fyne.Focusable.
func (l *keyList) TypedKey(ev *fyne.KeyEvent) { passKey(l.keys, ev, l.List.TypedKey) }

// keyTree is a widget.Tree that passes window keys on (←/→ travel the
// timeline rather than fold branches, which a click does).
type keyTree struct {
	widget.Tree
	keys keyFunc
}

func newKeyTree(keys keyFunc) *keyTree {
	t := &keyTree{keys: keys}
	t.ExtendBaseWidget(t)
	return t
}

// TypedKey is part of fyne.Focusable.
func (t *keyTree) TypedKey(ev *fyne.KeyEvent) { passKey(t.keys, ev, t.Tree.TypedKey) }

// keyEntry is a widget.Entry that passes the function keys on and keeps
// its arrows and typing.
type keyEntry struct {
	widget.Entry
	keys keyFunc
}

func newKeyEntry(keys keyFunc, multiLine bool) *keyEntry {
	e := &keyEntry{keys: keys}
	e.MultiLine = multiLine
	if multiLine {
		e.Wrapping = fyne.TextWrapWord
	}
	e.ExtendBaseWidget(e)
	return e
}

// TypedKey is part of fyne.Focusable.
func (e *keyEntry) TypedKey(ev *fyne.KeyEvent) {
	if e.keys == nil || !e.keys(ev, true) {
		e.Entry.TypedKey(ev)
	}
}

// passKey gives ev to the window's keys first, and to the widget's own
// handler only when they do not take it.
func passKey(keys keyFunc, ev *fyne.KeyEvent, own func(*fyne.KeyEvent)) {
	if keys == nil || !keys(ev, false) {
		own(ev)
	}
}

// keyCheck is a widget.Check that passes window keys on.
type keyCheck struct {
	widget.Check
	keys keyFunc
}

func newKeyCheck(keys keyFunc, label string, changed func(bool)) *keyCheck {
	c := &keyCheck{keys: keys}
	c.Text, c.OnChanged = label, changed
	c.ExtendBaseWidget(c)
	return c
}

// TypedKey is part of fyne.Focusable.
func (c *keyCheck) TypedKey(ev *fyne.KeyEvent) { passKey(c.keys, ev, c.Check.TypedKey) }

// keySelect is a widget.Select that passes window keys on.
type keySelect struct {
	widget.Select
	keys keyFunc
}

func newKeySelect(keys keyFunc, options []string, changed func(string)) *keySelect {
	s := &keySelect{keys: keys}
	s.Options, s.OnChanged = options, changed
	s.ExtendBaseWidget(s)
	return s
}

// TypedKey is part of fyne.Focusable.
func (s *keySelect) TypedKey(ev *fyne.KeyEvent) { passKey(s.keys, ev, s.Select.TypedKey) }

// keyButton is a widget.Button that passes window keys on (a button has
// the focus after Tab).
type keyButton struct {
	widget.Button
	keys keyFunc
}

func newKeyButton(keys keyFunc, label string, icon fyne.Resource, tapped func()) *keyButton {
	b := &keyButton{keys: keys}
	b.Text, b.Icon, b.OnTapped = label, icon, tapped
	b.ExtendBaseWidget(b)
	return b
}

// TypedKey is part of fyne.Focusable.
func (b *keyButton) TypedKey(ev *fyne.KeyEvent) { passKey(b.keys, ev, b.Button.TypedKey) }

// unfocusHidden takes the focus from a widget in a tab of tabs that is not
// the selected one. A hidden widget would keep the keys otherwise: Space or
// ↓ on a hidden Select opens its popup on a canvas the driver has forgotten
// (it drops the canvas of what it has not drawn for a minute) and Fyne
// dereferences the nil canvas.
func unfocusHidden(c fyne.Canvas, tabs *container.AppTabs) {
	f := c.Focused()
	if f == nil {
		return
	}
	for _, it := range tabs.Items {
		if it != tabs.Selected() && holds(it.Content, f) {
			c.Unfocus()
			return
		}
	}
}

// holds reports whether o lies in root (see eachObject).
func holds(root fyne.CanvasObject, o fyne.Focusable) bool {
	w, ok := o.(fyne.CanvasObject)
	if !ok {
		return false
	}
	found := false
	eachObject(root, func(c fyne.CanvasObject) bool {
		found = c == w
		return !found
	})
	return found
}

// eachObject calls fn with root and everything inside it, until fn returns
// false: through containers, panels (composites, which draw a composition
// of containers) and the standard widgets that hold others (scrolls,
// cards, splits, tabs, forms). A widget it cannot see into (one that draws
// its children through its own renderer) holds nothing focusable in the
// studio's panels and dialogs. It reports whether the walk went to the end.
func eachObject(root fyne.CanvasObject, fn func(fyne.CanvasObject) bool) bool {
	if root == nil {
		return true
	}
	if !fn(root) {
		return false
	}
	var kids []fyne.CanvasObject
	switch r := root.(type) {
	case interface{ composed() fyne.CanvasObject }:
		kids = []fyne.CanvasObject{r.composed()}
	case *fyne.Container:
		kids = r.Objects
	case *container.Scroll:
		kids = []fyne.CanvasObject{r.Content}
	case *widget.Card:
		kids = []fyne.CanvasObject{r.Content}
	case *container.Split:
		kids = []fyne.CanvasObject{r.Leading, r.Trailing}
	case *container.AppTabs:
		for _, it := range r.Items {
			kids = append(kids, it.Content)
		}
	case *widget.Form:
		for _, it := range r.Items {
			kids = append(kids, it.Widget)
		}
	}
	for _, k := range kids {
		if !eachObject(k, fn) {
			return false
		}
	}
	return true
}

// showDialog shows d, whose content is content (or, for a form, its
// fields), and takes the focus from what they hold when it closes. Fyne
// drops a closed dialog's focus without telling the focused widget, and
// an entry that was never told keeps its cursor blinking: the window
// repainted 12-15 % of a core, indefinitely, after any dialog with a
// field (the New thread dialog, before every run).
func showDialog(d dialog.Dialog, content ...fyne.CanvasObject) {
	d.SetOnClosed(func() {
		for _, c := range content {
			eachObject(c, func(o fyne.CanvasObject) bool {
				if f, ok := o.(fyne.Focusable); ok {
					f.FocusLost()
				}
				return true
			})
		}
	})
	d.Show()
}
