package studio

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
)

// studioTheme is the app's theme with the colours text is drawn in
// adjusted so that every text reaches 4.5:1 against the background it is
// drawn on, in the light and the dark variant (TestThemeContrast checks
// each pair). Fyne's defaults draw low-importance labels in the disabled
// colour (about 1.5:1 on dark), and its saturated success, warning, error
// and accent colours are too light for text on white. Everything else
// comes from the wrapped theme.
type studioTheme struct {
	fyne.Theme
}

// newTheme wraps base (Fyne's default theme when nil).
func newTheme(base fyne.Theme) fyne.Theme {
	if base == nil {
		base = theme.DefaultTheme()
	}
	if st, ok := base.(*studioTheme); ok {
		return st
	}
	return &studioTheme{Theme: base}
}

func rgb(c uint32) color.NRGBA {
	return color.NRGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 0xff}
}

// Text colours by variant. Muted text (placeholders and low-importance
// labels, which Fyne draws in the disabled colour) stays visibly quieter
// than the foreground while clearing 4.5:1 on every surface.
var (
	darkColors = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameDisabled:            rgb(0x9a9aa1),
		theme.ColorNamePlaceHolder:         rgb(0xb2b2b8),
		theme.ColorNamePrimary:             rgb(0x6b9dff),
		theme.ColorNameForegroundOnPrimary: rgb(0x101114),
		theme.ColorNameError:               rgb(0xff6e61),
		theme.ColorNameForegroundOnError:   rgb(0x121316),
		theme.ColorNameSuccess:             rgb(0x4fd85a),
		theme.ColorNameWarning:             rgb(0xffa726),
	}
	lightColors = map[fyne.ThemeColorName]color.Color{
		theme.ColorNameForeground:          rgb(0x2e2e2e),
		theme.ColorNameDisabled:            rgb(0x606060),
		theme.ColorNamePlaceHolder:         rgb(0x5e5e5e),
		theme.ColorNamePrimary:             rgb(0x1d5fd6),
		theme.ColorNameForegroundOnPrimary: rgb(0xffffff),
		theme.ColorNameError:               rgb(0xc62828),
		theme.ColorNameForegroundOnError:   rgb(0xffffff),
		theme.ColorNameSuccess:             rgb(0x1e7b26),
		theme.ColorNameForegroundOnSuccess: rgb(0xffffff),
		theme.ColorNameWarning:             rgb(0xa55300),
		theme.ColorNameForegroundOnWarning: rgb(0xffffff),
		theme.ColorNameFocus:               color.NRGBA{R: 0x1d, G: 0x5f, B: 0xd6, A: 0x2a},
		theme.ColorNameSelection:           color.NRGBA{R: 0x1d, G: 0x5f, B: 0xd6, A: 0x24},
	}
)

// Color is part of fyne.Theme.
func (t *studioTheme) Color(n fyne.ThemeColorName, v fyne.ThemeVariant) color.Color {
	set := darkColors
	if v == theme.VariantLight {
		set = lightColors
	}
	if c, ok := set[n]; ok {
		return c
	}
	return t.Theme.Color(n, v)
}
