package studio

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// Build is what `weft dev` tells the window about building the program it
// runs: a build going on, one that failed with the compiler's errors, or
// the one the window runs. The zero Build says the program runs under
// weft dev and no other build was made since it started.
type Build struct {
	// N numbers the builds from 1; Running is the build this window runs.
	N, Running int
	// At is when the build finished (or started, while Building).
	At       time.Time
	Building bool
	// OK says the build succeeded (the window is about to restart on it).
	OK bool
	// Errors are the compiler's errors; Output its other lines.
	Errors []BuildError
	Output string
	// Restarted is how long the window took to come back on the same
	// checkpoint after the build it runs finished; 0 when unknown.
	Restarted time.Duration
}

// BuildError is one compiler error: the file as the compiler named it,
// its absolute path when known, the line and column (0 when not given) and
// the message (continuation lines included).
type BuildError struct {
	File, Path string
	Line, Col  int
	Msg        string
}

// Where is "file:line:col" with the absolute path when known, as editors
// and terminals open it.
func (e BuildError) Where() string {
	f := e.File
	if e.Path != "" {
		f = e.Path
	}
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d", f, e.Line, e.Col)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d", f, e.Line)
	}
	return f
}

// short is Where with the file's own name, for the list.
func (e BuildError) short() string {
	f := e.File
	if f == "" {
		f = filepath.Base(e.Path)
	}
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d", f, e.Line, e.Col)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d", f, e.Line)
	}
	return f
}

// ShowBuild shows b in the Build tab (added to the bottom tabs on the
// first call), opens that tab when a build failed, and says so in the
// status bar. Call it on the UI goroutine.
func (s *Studio) ShowBuild(b Build) {
	if s.build == nil {
		p := newBuildPanel(s.m, s.acts, func() []*engine.Topology { return s.older })
		p.copied = s.flash
		s.addBuild(p)
		s.build.set(b)
		s.showGraphChange()
	}
	s.build.set(b)
	switch {
	case b.Building:
		s.m.setNote(fmt.Sprintf("Building #%d…", b.N))
	case !b.OK && b.N > b.Running:
		s.m.setNote("")
		s.flash(fmt.Sprintf("Build #%d failed (%s): the window still runs #%d", b.N, plural(len(b.Errors), "error"), b.Running))
		s.tabs.Select(s.buildTab)
	default:
		s.m.setNote("")
	}
}

// showGraphChange opens the Build tab when the graph's shape changed since
// the restored session.
func (s *Studio) showGraphChange() {
	if s.build == nil {
		return
	}
	if d, _ := s.build.changedSince(); d != "" {
		s.tabs.Select(s.buildTab)
	}
}

// buildPanel is the Build tab of a program run by `weft dev`: which build
// the window runs and how fast it came back; a failed build's errors
// (file:line, a tap copies it); what changed in the graph's shape since
// the checkpoint shown was written, with "Re-run from here with the new
// code".
type buildPanel struct {
	m *model
	composite
	status *widget.Label
	change *widget.Label
	rerunB *keyButton
	list   *keyList
	errs   []BuildError
	lines  []string // output lines that are not errors
	b      Build
	older  func() []*engine.Topology
	copied func(string) // told what a tap copied
}

func newBuildPanel(m *model, a *actions, older func() []*engine.Topology) *buildPanel {
	p := &buildPanel{m: m, older: older}
	p.status = widget.NewLabel("")
	p.status.Wrapping = fyne.TextWrapWord
	p.status.TextStyle.Bold = true
	p.change = widget.NewLabel("")
	p.change.Wrapping = fyne.TextWrapWord
	p.rerunB = newKeyButton(a.key, "Re-run from here with the new code", theme.MediaReplayIcon(), func() { call(a.rerun) })
	p.list = newKeyList(a.key, func() int { return len(p.errs) + len(p.lines) },
		func() fyne.CanvasObject {
			where := widget.NewLabel("file.go:1:1")
			where.TextStyle = fyne.TextStyle{Monospace: true}
			where.Importance = widget.DangerImportance
			msg := widget.NewLabel("message")
			msg.Truncation = fyne.TextTruncateEllipsis
			msg.TextStyle.Monospace = true
			return container.NewBorder(nil, nil, where, nil, msg)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			msg, where := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Label)
			if i < len(p.errs) {
				e := p.errs[i]
				where.SetText(e.short())
				where.Show()
				msg.SetText(oneLine(e.Msg, 300))
				return
			}
			if i-len(p.errs) < len(p.lines) {
				where.Hide()
				msg.SetText(p.lines[i-len(p.errs)])
			}
		})
	p.list.OnSelected = func(i widget.ListItemID) {
		p.list.Unselect(i)
		text := ""
		switch {
		case i < len(p.errs):
			text = p.errs[i].Where()
		case i-len(p.errs) < len(p.lines):
			text = p.lines[i-len(p.errs)]
		}
		if text == "" {
			return
		}
		if a := fyne.CurrentApp(); a != nil {
			a.Clipboard().SetContent(text)
		}
		if p.copied != nil {
			p.copied("Copied " + text)
		}
	}
	top := container.NewVBox(p.status, p.change, container.NewHBox(p.rerunB))
	p.compose(p, container.NewBorder(top, nil, nil, nil, p.list))
	m.subscribe(chGraph|chThread|chSelection|chView|chRun, func(part) { p.showChange() })
	p.set(Build{})
	return p
}

// set shows b.
func (p *buildPanel) set(b Build) {
	p.b = b
	text := ""
	switch {
	case b.Building:
		text = fmt.Sprintf("Building #%d… the window runs #%d until it is done.", b.N, b.Running)
	case !b.OK && b.N > b.Running:
		text = fmt.Sprintf("Build #%d failed at %s with %s. The window still runs build #%d; fix and save to try again. A tap on an error copies where it is.",
			b.N, clock(b.At), plural(len(b.Errors), "error"), b.Running)
	case b.Running > 0:
		text = fmt.Sprintf("Running build #%d (built %s).", b.Running, clock(b.At))
		if b.Restarted > 0 {
			text += fmt.Sprintf(" Back on the same checkpoint %s after the build finished.", dur(b.Restarted))
		}
		text += " Saving a Go file of the program rebuilds it."
	default:
		text = "Run by weft dev: saving a Go file of the program rebuilds it and reopens the window here."
	}
	p.status.SetText(text)
	if b.OK || b.Building || b.N <= b.Running {
		p.errs, p.lines = nil, nil
	} else {
		p.errs = b.Errors
		p.lines = nil
		for _, l := range strings.Split(strings.TrimSpace(b.Output), "\n") {
			if l = strings.TrimRight(l, " \t\r"); l != "" {
				p.lines = append(p.lines, l)
			}
		}
	}
	p.list.Refresh()
	p.showChange()
}

// current returns the selected graph's shape.
func (p *buildPanel) current() *engine.Topology {
	if g := p.m.graph().Graph; g != nil {
		return g.Topology()
	}
	return nil
}

// version returns the known shape with fingerprint fp.
func (p *buildPanel) version(fp string) *engine.Topology {
	for _, t := range p.older() {
		if t.Fingerprint == fp {
			return t
		}
	}
	return nil
}

// changedSince describes what changed in the selected graph since the
// previous version of it this session knew, "" when nothing did; known
// says there was a previous version.
func (p *buildPanel) changedSince() (diff string, known bool) {
	cur := p.current()
	if cur == nil {
		return "", false
	}
	for _, t := range p.older() {
		if t.Name == cur.Name {
			if t.Fingerprint == cur.Fingerprint {
				return "", true
			}
			return strings.Join(topoDiff(t, cur), "\n"), true
		}
	}
	return "", false
}

// showChange says what changed in the graph for the checkpoint shown, and
// offers to re-run it on the new code.
func (p *buildPanel) showChange() {
	cur := p.current()
	sc := p.m.scope()
	v := sc.viewFor()
	text := ""
	old := false
	switch {
	case cur == nil:
	case v != nil && olderGraph(v.Snap.Metadata, cur.Fingerprint):
		old = true
		if t := p.version(writtenBy(v.Snap.Metadata)); t != nil {
			text = "This checkpoint was written by an older version of the graph. Since then:\n" + strings.Join(topoDiff(t, cur), "\n")
		} else {
			text = "This checkpoint was written by another version of the graph (this session does not know its shape)."
		}
		text += "\nCheckpoints of older versions say \"old graph\" on the timeline."
	default:
		switch d, known := p.changedSince(); {
		case d != "":
			text = "The graph changed since the previous build:\n" + d + "\nCheckpoints written before say \"old graph\" on the timeline."
		case known && p.b.Running > 1:
			text = "The graph's shape is the same as in the previous build; only code inside nodes or edges changed."
		}
	}
	if p.change.Text != text {
		p.change.SetText(text)
	}
	failed := !p.b.OK && !p.b.Building && p.b.N > p.b.Running
	if text == "" || failed {
		p.change.Hide()
	} else {
		p.change.Show()
	}
	if failed {
		p.rerunB.Hide() // the errors first; the window's code is the same as before
	} else {
		p.rerunB.Show()
	}
	if old {
		p.rerunB.Importance = widget.HighImportance
	} else {
		p.rerunB.Importance = widget.MediumImportance
	}
	enable(p.rerunB, v != nil && !p.m.run.Going)
	p.rerunB.Refresh()
}

// topoDiff lists what changed from graph shape a to b: nodes, edges and
// channels added (+), removed (−) or changed (~); subgraphs by path.
func topoDiff(a, b *engine.Topology) []string {
	var out []string
	diffTopo("", a, b, &out)
	if len(out) == 0 {
		out = append(out, "nothing in the nodes, edges or channels (another detail of the graph's shape)")
	}
	return out
}

func diffTopo(prefix string, a, b *engine.Topology, out *[]string) {
	topoName := func(n engine.TopoNode) string { return n.Name }
	an, bn := byName(a.Nodes, topoName), byName(b.Nodes, topoName)
	for _, n := range b.Nodes {
		if _, ok := an[n.Name]; !ok {
			*out = append(*out, "+ node "+prefix+n.Name)
		}
	}
	for _, n := range a.Nodes {
		if _, ok := bn[n.Name]; !ok {
			*out = append(*out, "− node "+prefix+n.Name)
		}
	}
	edge := func(e engine.TopoEdge) string {
		s := prefix + nodeName(e.From) + " → " + prefix + nodeName(e.To)
		switch {
		case e.Label != "" && e.Kind == engine.EdgeConditional:
			s += " (" + e.Label + ")"
		case e.Kind != engine.EdgeStatic:
			s += " (" + e.Kind.String() + ")"
		}
		return s
	}
	var ae, be []string
	for _, e := range a.Edges {
		ae = append(ae, edge(e))
	}
	for _, e := range b.Edges {
		be = append(be, edge(e))
	}
	for _, e := range be {
		if !slices.Contains(ae, e) {
			*out = append(*out, "+ edge "+e)
		}
	}
	for _, e := range ae {
		if !slices.Contains(be, e) {
			*out = append(*out, "− edge "+e)
		}
	}
	chanName := func(c engine.ChannelInfo) string { return c.Name }
	ac, bc := byName(a.Channels, chanName), byName(b.Channels, chanName)
	for _, c := range b.Channels {
		o, ok := ac[c.Name]
		switch {
		case !ok:
			*out = append(*out, "+ channel "+prefix+c.Name)
		case o.Kind != c.Kind || o.Type != c.Type || o.Reducer != c.Reducer:
			*out = append(*out, fmt.Sprintf("~ channel %s%s (%s → %s)", prefix, c.Name, chanDesc(o), chanDesc(c)))
		}
	}
	for _, c := range a.Channels {
		if _, ok := bc[c.Name]; !ok {
			*out = append(*out, "− channel "+prefix+c.Name)
		}
	}
	for _, n := range b.Nodes {
		if o, ok := an[n.Name]; ok && o.Subgraph != nil && n.Subgraph != nil && o.Subgraph.Fingerprint != n.Subgraph.Fingerprint {
			diffTopo(prefix+n.Name+"/", o.Subgraph, n.Subgraph, out)
		}
	}
}

// byName indexes xs by name.
func byName[T any](xs []T, name func(T) string) map[string]T {
	m := make(map[string]T, len(xs))
	for _, x := range xs {
		m[name(x)] = x
	}
	return m
}

// nodeName names START and END as the graph shows them.
func nodeName(n string) string {
	switch n {
	case engine.START:
		return "START"
	case engine.END:
		return "END"
	}
	return n
}

func chanDesc(c engine.ChannelInfo) string {
	s := c.Type
	if c.Reducer != "" {
		s += " via " + c.Reducer
	} else if c.Kind != "" {
		s += " " + strings.ReplaceAll(c.Kind, "_", " ")
	}
	return strings.TrimSpace(s)
}
