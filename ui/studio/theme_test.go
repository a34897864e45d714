package studio

import (
	"fmt"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
	"github.com/weftstudio/weft/ui/graphview"
)

// luminance is WCAG's relative luminance of an opaque colour.
func luminance(c color.Color) float64 {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	lin := func(v uint8) float64 {
		x := float64(v) / 255
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(n.R) + 0.7152*lin(n.G) + 0.0722*lin(n.B)
}

// contrast is WCAG's contrast ratio of text colour fg on bg; a translucent
// colour is laid over under first (bg over the window background).
func contrast(fg, bg color.Color) float64 {
	a, b := luminance(fg), luminance(bg)
	if a < b {
		a, b = b, a
	}
	return (a + 0.05) / (b + 0.05)
}

// over lays a possibly translucent c over the opaque base.
func over(c, base color.Color) color.Color {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	return render.Blend(color.NRGBA{n.R, n.G, n.B, 0xff}, base, float64(n.A)/255)
}

// variantTheme shows one variant of a theme whatever the system asks.
type variantTheme struct {
	fyne.Theme
	v fyne.ThemeVariant
}

func (t variantTheme) Color(n fyne.ThemeColorName, _ fyne.ThemeVariant) color.Color {
	return t.Theme.Color(n, t.v)
}

// Every text colour the studio draws reaches 4.5:1 against every surface
// it is drawn on, in the light and the dark theme: Fyne's widgets (labels
// of every importance, buttons, entries, menus, dialogs, selected rows),
// the graph (node labels in every state, edge labels, badges), the
// timeline and the chat bubbles.
func TestThemeContrast(t *testing.T) {
	a := test.NewTempApp(t)
	base := newTheme(theme.DefaultTheme())
	for _, v := range []fyne.ThemeVariant{theme.VariantLight, theme.VariantDark} {
		name := map[fyne.ThemeVariant]string{theme.VariantLight: "light", theme.VariantDark: "dark"}[v]
		th := variantTheme{base, v}
		a.Settings().SetTheme(th)
		c := func(n fyne.ThemeColorName) color.Color { return th.Color(n, v) }
		bg := c(theme.ColorNameBackground)
		surfaces := map[string]color.Color{
			"background": bg,
			"button":     over(c(theme.ColorNameButton), bg),
			"input":      over(c(theme.ColorNameInputBackground), bg),
			"menu":       over(c(theme.ColorNameMenuBackground), bg),
			"overlay":    over(c(theme.ColorNameOverlayBackground), bg),
			"header":     over(c(theme.ColorNameHeaderBackground), bg),
			"selection":  over(c(theme.ColorNameSelection), bg),
			"hover":      over(c(theme.ColorNameHover), bg),
		}
		type pair struct {
			text string
			fg   color.Color
			on   []string
		}
		all := []string{"background", "button", "input", "menu", "overlay", "header", "selection", "hover"}
		pairs := []pair{
			{"foreground", c(theme.ColorNameForeground), all},
			// Low-importance labels and disabled controls use Disabled.
			{"muted (disabled)", c(theme.ColorNameDisabled), all},
			{"placeholder", c(theme.ColorNamePlaceHolder), []string{"input", "background", "overlay"}},
			{"primary", c(theme.ColorNamePrimary), []string{"background", "overlay", "header"}},
			{"error", c(theme.ColorNameError), []string{"background", "overlay", "input"}},
			{"warning", c(theme.ColorNameWarning), []string{"background", "overlay", "input"}},
			{"success", c(theme.ColorNameSuccess), []string{"background", "overlay", "input"}},
		}
		for _, p := range pairs {
			for _, s := range p.on {
				if r := contrast(p.fg, surfaces[s]); r < 4.5 {
					t.Errorf("%s: %s text on %s is %.2f:1", name, p.text, s, r)
				}
			}
		}
		for _, fill := range []struct{ text, fill fyne.ThemeColorName }{
			{theme.ColorNameForegroundOnPrimary, theme.ColorNamePrimary},
			{theme.ColorNameForegroundOnError, theme.ColorNameError},
			{theme.ColorNameForegroundOnSuccess, theme.ColorNameSuccess},
			{theme.ColorNameForegroundOnWarning, theme.ColorNameWarning},
		} {
			if r := contrast(c(fill.text), c(fill.fill)); r < 4.5 {
				t.Errorf("%s: %s on %s is %.2f:1", name, fill.text, fill.fill, r)
			}
		}
		// The graph, drawn from the same theme.
		p := graphview.ThemePalette(nil)
		for _, st := range []render.NodeState{render.StateIdle, render.StateNext, render.StateRunning, render.StateFinished, render.StateInterrupted, render.StateFailed} {
			s := p.StyleFor(st)
			if r := contrast(s.Text, s.Fill); r < 4.5 {
				t.Errorf("%s: a %v node's label is %.2f:1", name, st, r)
			}
		}
		for what, r := range map[string]float64{
			"edge label":    contrast(p.MutedText, p.Background),
			"cluster label": contrast(p.MutedText, p.ClusterFill),
			"badge":         contrast(p.OnWarning, p.Warning),
		} {
			if r < 4.5 {
				t.Errorf("%s: %s is %.2f:1", name, what, r)
			}
		}
		// Chat bubbles.
		for _, role := range []string{engine.RoleUser, engine.RoleAssistant, engine.RoleTool} {
			b := bubbleColor(role)
			for text, fg := range map[string]color.Color{"text": c(theme.ColorNameForeground), "muted": c(theme.ColorNameDisabled), "new": c(theme.ColorNameSuccess)} {
				if r := contrast(fg, b); r < 4.5 {
					t.Errorf("%s: %s in a %s bubble is %.2f:1", name, text, role, r)
				}
			}
		}
	}
	_ = fmt.Sprint
}
