package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// capped shows content in a vertical scroll that asks for content's own
// height up to maxH and no more: a wrapped header or a long text then
// scrolls inside its panel instead of growing the window past the screen.
func capped(content fyne.CanvasObject, maxH float32) *fyne.Container {
	return container.New(&capLayout{content: content, maxH: maxH}, container.NewVScroll(content))
}

// capLayout sizes its one object (the scroll around content) to the
// space given; its minimum is content's, with the height capped at maxH.
type capLayout struct {
	content fyne.CanvasObject
	maxH    float32
}

// Layout is part of fyne.Layout.
func (l *capLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

// MinSize is part of fyne.Layout.
func (l *capLayout) MinSize([]fyne.CanvasObject) fyne.Size {
	m := l.content.MinSize()
	return fyne.NewSize(m.Width, min(m.Height, l.maxH))
}
