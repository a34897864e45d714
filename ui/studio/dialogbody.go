package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// formBody makes a dialog's form a widget of its own: a form embeds it and
// is then the object its dialog shows, drawing the form's content. The
// form can so be found in the window's overlays like any widget, and a
// dialog holds no reference its opener must keep. The zero value draws
// nothing until wrap sets the content.
type formBody struct {
	widget.BaseWidget
	content fyne.CanvasObject
}

// wrap makes form (the struct embedding b) draw content and returns it,
// for the dialog to show.
func (b *formBody) wrap(form fyne.Widget, content fyne.CanvasObject) fyne.CanvasObject {
	b.content = content
	b.ExtendBaseWidget(form)
	return form
}

// CreateRenderer is part of fyne.Widget.
func (b *formBody) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(b.content)
}
