package graphview

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/weftstudio/weft/render"
)

// ThemePalette builds the graph's colours from the Fyne theme as it
// applies to w (the current app theme when w is nil), so that the view, its
// legend and a PNG export made from the studio all follow the light or dark
// theme. Neutral colours are blends of the theme's foreground and
// background, which keeps their contrast in both variants.
func ThemePalette(w fyne.Widget) render.Palette {
	c := func(n fyne.ThemeColorName) color.Color {
		if w != nil {
			return theme.ColorForWidget(n, w)
		}
		return theme.Color(n)
	}
	bg, fg := c(theme.ColorNameBackground), c(theme.ColorNameForeground)
	return render.Palette{
		Background:    bg,
		NodeFill:      c(theme.ColorNameButton),
		NodeStroke:    render.Blend(fg, bg, 0.4),
		Text:          fg,
		MutedText:     c(theme.ColorNamePlaceHolder),
		Edge:          render.Blend(fg, bg, 0.75),
		ClusterFill:   render.Blend(c(theme.ColorNamePrimary), bg, 0.05),
		ClusterStroke: render.Blend(fg, bg, 0.3),
		Primary:       c(theme.ColorNamePrimary),
		OnPrimary:     c(theme.ColorNameForegroundOnPrimary),
		Success:       c(theme.ColorNameSuccess),
		OnSuccess:     c(theme.ColorNameForegroundOnSuccess),
		Warning:       c(theme.ColorNameWarning),
		OnWarning:     c(theme.ColorNameForegroundOnWarning),
		Error:         c(theme.ColorNameError),
		OnError:       c(theme.ColorNameForegroundOnError),
		Selection:     fg,
	}
}
