package render

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-graphviz"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/early"
)

// go-graphviz has initialised (this package imports it) with TMPDIR pointed
// at the user's cache directory by package early; put it back.
func init() { early.Restore() }

// margin is the room, in points, left around the drawing inside
// Geometry.Bounds, for badges and breakpoint dots that stick out of boxes.
const margin = 12

// cacheSize is how many layouts a Layouter keeps. A studio shows a handful
// of graphs, each in one or two expansion states.
const cacheSize = 32

// ErrClosed is returned by a Layouter's methods after Close.
var ErrClosed = errors.New("render: layouter is closed")

// Layouter lays out topologies with Graphviz and caches the results.
//
// Graphviz runs in one goroutine shared by every Layouter in the process
// (the WebAssembly bindings are not safe for concurrent use); requests are
// queued to it. Layouts are cached by the DOT text they come from, so one
// (topology, expansion) pair is laid out once; concurrent requests for the
// same layout share one Graphviz run. A Layouter is safe for concurrent use.
type Layouter struct {
	mu       sync.Mutex
	closed   bool
	busy     sync.WaitGroup
	cache    map[[32]byte]*Geometry
	order    [][32]byte // least recently used first
	inflight map[[32]byte]*flight
	w        *worker
}

type flight struct {
	done chan struct{}
	g    *Geometry
	err  error
}

// NewLayouter returns a Layouter with an empty cache, starting the shared
// Graphviz goroutine if it is not running. Close it when done.
func NewLayouter() *Layouter {
	return &Layouter{
		cache:    map[[32]byte]*Geometry{},
		inflight: map[[32]byte]*flight{},
		w:        acquireWorker(),
	}
}

// Close waits for the Layouter's requests in progress, drops its cache and
// stops the Graphviz goroutine when no other Layouter uses it. Further
// calls return ErrClosed. Close is idempotent.
func (l *Layouter) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	l.cache, l.order = nil, nil
	l.mu.Unlock()
	l.busy.Wait()
	l.w.release()
	return nil
}

// begin registers a request; it fails once the Layouter is closed.
func (l *Layouter) begin() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	l.busy.Add(1)
	return nil
}

// Layout returns the geometry of t drawn with opts, from the cache or from
// a Graphviz run. The result is shared and must not be modified. A nil or
// empty topology gives an empty Geometry. The error names what failed:
// Graphviz's parse or layout, or ctx ending before the layout was done.
func (l *Layouter) Layout(ctx context.Context, t *engine.Topology, opts DOTOptions) (*Geometry, error) {
	if err := l.begin(); err != nil {
		return nil, err
	}
	defer l.busy.Done()
	p := newPlan(t, opts)
	dot := p.dot()
	key := sha256.Sum256(dot)

	l.mu.Lock()
	if g, ok := l.cache[key]; ok {
		l.touch(key)
		l.mu.Unlock()
		return g, nil
	}
	f, ok := l.inflight[key]
	if !ok {
		f = &flight{done: make(chan struct{})}
		l.inflight[key] = f
	}
	l.mu.Unlock()

	if ok { // someone else is laying this out
		select {
		case <-f.done:
			return f.g, f.err
		case <-ctx.Done():
			return nil, fmt.Errorf("render: layout of %q: %w", p.name, ctx.Err())
		}
	}
	f.g, f.err = l.layoutPlan(ctx, p, dot)
	l.mu.Lock()
	delete(l.inflight, key)
	if f.err == nil && !l.closed {
		l.cache[key] = f.g
		l.touch(key)
	}
	l.mu.Unlock()
	close(f.done)
	return f.g, f.err
}

// touch marks key as most recently used and evicts beyond cacheSize.
// l.mu must be held.
func (l *Layouter) touch(key [32]byte) {
	for i, k := range l.order {
		if k == key {
			l.order = append(l.order[:i], l.order[i+1:]...)
			break
		}
	}
	l.order = append(l.order, key)
	for len(l.order) > cacheSize {
		delete(l.cache, l.order[0])
		l.order = l.order[1:]
	}
}

// layoutPlan runs Graphviz on dot (the plan's DOT) and reads the result
// back into a Geometry, bypassing the cache.
func (l *Layouter) layoutPlan(ctx context.Context, p *plan, dot []byte) (*Geometry, error) {
	out, err := l.w.render(ctx, dot, "json0")
	if err != nil {
		return nil, fmt.Errorf("render: layout of %q: %w", p.name, err)
	}
	g, err := p.geometry(out)
	if err != nil {
		return nil, fmt.Errorf("render: layout of %q: reading Graphviz output: %w", p.name, err)
	}
	return g, nil
}

// SVG returns Graphviz's SVG drawing of t with opts, for export to a file.
// (Fyne does not show an SVG's text, so the studio draws from Layout.)
func (l *Layouter) SVG(ctx context.Context, t *engine.Topology, opts DOTOptions) ([]byte, error) {
	if err := l.begin(); err != nil {
		return nil, err
	}
	defer l.busy.Done()
	out, err := l.w.render(ctx, DOT(t, opts), graphviz.SVG)
	if err != nil {
		name := ""
		if t != nil {
			name = t.Name
		}
		return nil, fmt.Errorf("render: SVG of %q: %w", name, err)
	}
	return out, nil
}

// worker owns the process's Graphviz instance and the one goroutine that
// may call it.
type worker struct {
	jobs chan job
	done chan struct{} // closed when run has returned and Graphviz is closed
	refs int           // guarded by workerMu
}

type job struct {
	ctx    context.Context
	dot    []byte
	format graphviz.Format
	reply  chan result
}

type result struct {
	out []byte
	err error
}

var (
	workerMu sync.Mutex
	current  *worker
)

func acquireWorker() *worker {
	workerMu.Lock()
	defer workerMu.Unlock()
	if current == nil {
		current = &worker{jobs: make(chan job), done: make(chan struct{})}
		go current.run()
	}
	current.refs++
	return current
}

func (w *worker) release() {
	workerMu.Lock()
	defer workerMu.Unlock()
	w.refs--
	if w.refs == 0 {
		close(w.jobs)
		// Wait, still holding workerMu, so that a new worker cannot touch
		// the shared WebAssembly instance while this one closes it.
		<-w.done
		if current == w {
			current = nil
		}
	}
}

// run serves jobs until the channel closes. Graphviz is created lazily so
// that a Layouter that is never used costs nothing.
func (w *worker) run() {
	var gv *graphviz.Graphviz
	var gvErr error
	defer func() {
		if gv != nil {
			gv.Close()
		}
		close(w.done)
	}()
	for j := range w.jobs {
		if j.ctx.Err() != nil {
			j.reply <- result{err: j.ctx.Err()}
			continue
		}
		if gv == nil && gvErr == nil {
			gv, gvErr = graphviz.New(context.Background())
			if gvErr != nil {
				gvErr = fmt.Errorf("starting Graphviz: %w", gvErr)
			}
		}
		if gvErr != nil {
			j.reply <- result{err: gvErr}
			continue
		}
		j.reply <- renderOne(j.ctx, gv, j.dot, j.format)
	}
}

func renderOne(ctx context.Context, gv *graphviz.Graphviz, dot []byte, format graphviz.Format) (r result) {
	defer func() {
		// The WebAssembly module traps on internal errors; keep the
		// goroutine (and the studio) alive and report it.
		if p := recover(); p != nil {
			r = result{err: fmt.Errorf("graphviz failed: %v", p)}
		}
	}()
	g, err := graphviz.ParseBytes(dot)
	if err != nil {
		return result{err: fmt.Errorf("parsing DOT: %w", err)}
	}
	defer g.Close()
	var buf bytes.Buffer
	if err := gv.Render(ctx, g, format, &buf); err != nil {
		return result{err: fmt.Errorf("rendering %s: %w", format, err)}
	}
	return result{out: buf.Bytes()}
}

// render queues one Graphviz run and waits for it or for ctx.
func (w *worker) render(ctx context.Context, dot []byte, format graphviz.Format) ([]byte, error) {
	j := job{ctx: ctx, dot: dot, format: format, reply: make(chan result, 1)}
	select {
	case w.jobs <- j:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case r := <-j.reply:
		return r.out, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Graphviz's json0 output: attributes as strings, coordinates in points
// with y pointing up.
type gvGraph struct {
	BB      string     `json:"bb"`
	Objects []gvObject `json:"objects"`
	Edges   []gvEdge   `json:"edges"`
}

type gvObject struct {
	Name   string `json:"name"`
	ID     string `json:"id"`
	Pos    string `json:"pos"`
	Width  string `json:"width"`
	Height string `json:"height"`
	BB     string `json:"bb"`
	LP     string `json:"lp"`
}

type gvEdge struct {
	ID  string `json:"id"`
	Pos string `json:"pos"`
	LP  string `json:"lp"`
}

// geometry reads Graphviz's json0 output for the plan's DOT.
func (p *plan) geometry(out []byte) (*Geometry, error) {
	var gj gvGraph
	if err := json.Unmarshal(out, &gj); err != nil {
		return nil, err
	}
	bb, err := parseFloats(gj.BB, 4)
	if err != nil {
		return nil, fmt.Errorf("graph bb %q: %w", gj.BB, err)
	}
	height := bb[3]
	// Graphviz's y points up from the bottom; ours points down from the
	// top, with a margin all round.
	tr := func(x, y float64) Point { return Point{x - bb[0] + margin, height - y + margin} }

	g := &Geometry{
		Name:         p.name,
		Bounds:       Rect{0, 0, bb[2] - bb[0] + 2*margin, bb[3] - bb[1] + 2*margin},
		Nodes:        make([]NodeBox, len(p.nodes)),
		Edges:        make([]EdgeGeom, len(p.edges)),
		Clusters:     make([]ClusterBox, len(p.clusters)),
		FontSize:     fontSize,
		NoteSize:     noteSize,
		EdgeFontSize: edgeFontSize,
	}
	nodeIdx := map[*pNode]int{}
	for i, n := range p.nodes {
		g.Nodes[i] = n.box
		nodeIdx[n] = i
	}
	for i, c := range p.clusters {
		g.Clusters[i] = c.box
	}
	clusterIdx := map[string]int{}
	for i, c := range p.clusters {
		clusterIdx["cluster_"+c.gid] = i
	}
	seen := 0
	for _, o := range gj.Objects {
		if ci, ok := clusterIdx[o.Name]; ok {
			r, err := parseFloats(o.BB, 4)
			if err != nil {
				return nil, fmt.Errorf("cluster %q bb %q: %w", g.Clusters[ci].ID, o.BB, err)
			}
			a, b := tr(r[0], r[3]), tr(r[2], r[1])
			g.Clusters[ci].Rect = Rect{a.X, a.Y, b.X - a.X, b.Y - a.Y}
			if lp, err := parseFloats(o.LP, 2); err == nil {
				g.Clusters[ci].LabelPos = tr(lp[0], lp[1])
			} else {
				g.Clusters[ci].LabelPos = Point{g.Clusters[ci].Rect.Center().X, a.Y + 10}
			}
			continue
		}
		n, ok := p.byGID[o.ID].(*pNode)
		if !ok {
			continue
		}
		c, err := parseFloats(o.Pos, 2)
		if err != nil {
			return nil, fmt.Errorf("node %q pos %q: %w", n.box.ID, o.Pos, err)
		}
		w, err1 := strconv.ParseFloat(o.Width, 64)
		h, err2 := strconv.ParseFloat(o.Height, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("node %q size: %w", n.box.ID, err)
		}
		w, h = w*72, h*72
		ctr := tr(c[0], c[1])
		g.Nodes[nodeIdx[n]].Rect = Rect{ctr.X - w/2, ctr.Y - h/2, w, h}
		seen++
	}
	if seen != len(p.nodes) {
		return nil, fmt.Errorf("%d of %d nodes have no position", len(p.nodes)-seen, len(p.nodes))
	}
	edgeIdx := map[*pEdge]int{}
	for i, e := range p.edges {
		g.Edges[i] = e.geom
		edgeIdx[e] = i
	}
	for _, ej := range gj.Edges {
		e, ok := p.byGID[ej.ID].(*pEdge)
		if !ok {
			continue
		}
		eg := &g.Edges[edgeIdx[e]]
		if err := eg.setPath(ej.Pos, tr); err != nil {
			return nil, fmt.Errorf("edge %q -> %q pos: %w", eg.From, eg.To, err)
		}
		if e.geom.Kind == engine.EdgeCommand && eg.Head != nil {
			eg.Head.Open = true
		}
		if lp, err := parseFloats(ej.LP, 2); err == nil {
			eg.LabelPos = tr(lp[0], lp[1])
		}
	}
	for i := range g.Edges {
		if len(g.Edges[i].Points) < 2 {
			// Graphviz gave no route (it never should); draw a
			// straight line rather than nothing.
			e := &g.Edges[i]
			a, _ := g.Node(e.From)
			b, _ := g.Node(e.To)
			e.Points = []Point{a.Rect.Center(), b.Rect.Center()}
		}
	}
	g.index()
	return g, nil
}

// setPath reads an edge's "pos": optional "s,x,y" and "e,x,y" end points,
// then 3n+1 Bézier control points. Several splines (";"-separated) are
// joined.
func (e *EdgeGeom) setPath(pos string, tr func(x, y float64) Point) error {
	e.Points = e.Points[:0]
	for _, spline := range strings.Split(pos, ";") {
		var ctrl []Point
		var end *Point
		for _, f := range strings.Fields(spline) {
			kind := byte(0)
			if strings.HasPrefix(f, "e,") || strings.HasPrefix(f, "s,") {
				kind, f = f[0], f[2:]
			}
			xy, err := parseFloats(f, 2)
			if err != nil {
				return fmt.Errorf("%q: %w", f, err)
			}
			pt := tr(xy[0], xy[1])
			switch kind {
			case 'e':
				end = &pt
			case 's': // arrowtails are not used
			default:
				ctrl = append(ctrl, pt)
			}
		}
		if len(ctrl) < 4 || (len(ctrl)-1)%3 != 0 {
			return fmt.Errorf("%d control points, want 3n+1", len(ctrl))
		}
		e.Points = append(e.Points, flatten(ctrl)...)
		if end != nil {
			e.Head = &Arrow{Base: ctrl[len(ctrl)-1], Tip: *end}
		}
	}
	return nil
}

// flatten approximates a chain of cubic Béziers by a polyline with
// segments of roughly 5 points, at least 2 and at most 32 per curve.
func flatten(c []Point) []Point {
	out := []Point{c[0]}
	for i := 0; i+3 < len(c); i += 3 {
		p0, p1, p2, p3 := c[i], c[i+1], c[i+2], c[i+3]
		l := (p0.Dist(p1) + p1.Dist(p2) + p2.Dist(p3) + p0.Dist(p3)) / 2
		n := int(math.Ceil(l / 5))
		if p0.Dist(p1)+p1.Dist(p2)+p2.Dist(p3)-p0.Dist(p3) < 0.5 {
			n = 1 // straight: one segment is exact
		}
		n = max(1, min(n, 32))
		for k := 1; k <= n; k++ {
			t := float64(k) / float64(n)
			u := 1 - t
			a, b, cc, d := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
			out = append(out, Point{
				a*p0.X + b*p1.X + cc*p2.X + d*p3.X,
				a*p0.Y + b*p1.Y + cc*p2.Y + d*p3.Y,
			})
		}
	}
	return out
}

// parseFloats parses n comma-separated numbers.
func parseFloats(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("want %d numbers", n)
	}
	out := make([]float64, n)
	for i, p := range parts {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
