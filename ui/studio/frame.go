package studio

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
)

// frame is how the window arranges its panels: the toolbar on top, the
// threads list, the graph and a right column (the inspector over the
// bottom tabs) in the middle, the timeline and the status bar along the
// bottom. It owns the dividers the user moves, remembered between
// sessions under their preference keys, and the bottom tabs, which the
// Build tab joins once there is a build. The zero value is empty: the
// controller makes the panels, then arrange lays them out.
type frame struct {
	tb   *toolbar
	th   *threadsPanel
	gp   *graphPanel
	insp *inspector
	tl   *timelinePanel
	ip   *interruptPanel
	ev   *eventsPanel
	errs *errorsPanel
	sb   *statusBar

	tabs   *container.AppTabs          // the bottom tabs
	splits map[string]*container.Split // the dividers by preference key

	build    *buildPanel // the Build tab's panel, once there is a build
	buildTab *container.TabItem
	wantTab  string // the bottom tab to open once it exists (a restored session's)
}

// splitKeys are the dividers' preference keys, outermost first.
var splitKeys = [...]string{"split_threads", "split_graph", "split_right"}

// arrange lays the panels out in c with the debugger's tabs, the
// dividers where prefs last had them.
func (f *frame) arrange(c fyne.Canvas, prefs fyne.Preferences, dbg *debugUI) fyne.CanvasObject {
	f.tabs = container.NewAppTabs(
		bottomTab("Interrupt", f.ip),
		bottomTab("Events", f.ev),
		bottomTab("Errors", f.errs),
		bottomTab("Step", dbg.phase),
		bottomTab("Watches", dbg.watch),
		bottomTab("Breakpoints", dbg.brk),
	)
	// The graph is drawn top to bottom, so it gets the full height of the
	// middle; the inspector and the Interrupt/Events/Errors tabs share the
	// right column, and the timeline runs along the bottom.
	// The divider alone decides how the column is shared: the inspector
	// asks for its header and minRows rows of state, a bottom tab for
	// tabMinH, and what a tab holds beyond that (a question, a barrier's
	// writes, a wrapped text in the Build tab) scrolls in the tab. A tab
	// that asked for its content's height would push the divider up, the
	// inspector down to two rows, and every tab's height would change with
	// what the hidden tabs last showed.
	right := container.NewVSplit(f.insp, f.tabs)
	right.Offset = 0.62
	f.tabs.OnSelected = func(*container.TabItem) { unfocusHidden(c, f.tabs) }
	centre := container.NewHSplit(f.gp, right)
	centre.Offset = 0.56
	main := container.NewHSplit(f.th, centre)
	main.Offset = 0.16
	f.splits = map[string]*container.Split{splitKeys[0]: main, splitKeys[1]: centre, splitKeys[2]: right}
	for key, sp := range f.splits {
		if v := prefs.FloatWithFallback(key, 0); v > 0.05 && v < 0.95 {
			sp.Offset = v
		}
	}
	body := container.NewBorder(nil, f.tl, nil, nil, main)
	return container.NewBorder(f.tb, f.sb, nil, nil, body)
}

// saveSplits remembers where the dividers are, for the next session.
func (f *frame) saveSplits(prefs fyne.Preferences) {
	for _, key := range splitKeys {
		prefs.SetFloat(key, f.splits[key].Offset)
	}
}

// selectTab opens the bottom tab named name.
func (f *frame) selectTab(name string) { selectTab(f.tabs, name) }

// addBuild adds p as the Build tab, opening it when a restored session
// had it open.
func (f *frame) addBuild(p *buildPanel) {
	f.build = p
	f.buildTab = bottomTab("Build", p)
	f.tabs.Append(f.buildTab)
	if f.wantTab == "Build" {
		f.tabs.Select(f.buildTab)
	}
}

// tabMinH is the most height a bottom tab asks for: a line of its panel
// above the fold; the rest scrolls.
const tabMinH = 40

// bottomTab is a bottom tab showing panel, which scrolls in the tab when
// it is taller than the tab (see arrange).
func bottomTab(name string, panel fyne.CanvasObject) *container.TabItem {
	return container.NewTabItem(name, capped(panel, tabMinH))
}
