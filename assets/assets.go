// Package assets holds the files the studio ships inside its binary: the
// application icon (drawn from icon.svg: a W woven by a golden weft thread).
package assets

import (
	_ "embed"

	"fyne.io/fyne/v2"
)

//go:embed icon.png
var iconPNG []byte

// Icon is the application icon, for the window and the app.
var Icon = fyne.NewStaticResource("weft-icon.png", iconPNG)
