package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// composite makes a panel, or a dialog's form, a widget of its own in
// Fyne's way: the panel's struct embeds it (and so widget.BaseWidget) and
// is then the object the window shows, drawing through its renderer what
// it composed from the model and its actions. A dialog's form is then
// found in the window's overlays like any widget, and no one keeps a
// reference to it. The zero value draws nothing until compose sets the
// content.
type composite struct {
	widget.BaseWidget
	content fyne.CanvasObject
}

// compose makes w (the struct embedding c) draw content and returns w.
func (c *composite) compose(w fyne.Widget, content fyne.CanvasObject) fyne.CanvasObject {
	c.content = content
	c.ExtendBaseWidget(w)
	return w
}

// composed is what the widget draws.
func (c *composite) composed() fyne.CanvasObject { return c.content }

// CreateRenderer is part of fyne.Widget.
func (c *composite) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(c.content)
}
