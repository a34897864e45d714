package studio

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Session is where the window stands: the graph, thread and checkpoint it
// shows, its size and panel layout, and the shapes of the graphs it has
// run. A program saves it and gives it back to Restore after a restart
// (weft dev does, between builds), so that the window reopens where it was
// and can tell what an edit changed in the graph. Zero fields restore
// nothing.
type Session struct {
	// Store is the caller's: the studio neither fills nor reads it (the
	// caller opens the store before New).
	Store      string `json:"store,omitempty"`
	Graph      string `json:"graph,omitempty"`
	Thread     string `json:"thread,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Width and Height are the window's size; 0 keeps the default.
	Width  float32 `json:"width,omitempty"`
	Height float32 `json:"height,omitempty"`
	// Splits are the panel dividers' offsets by name ("split_threads",
	// "split_graph", "split_right").
	Splits map[string]float64 `json:"splits,omitempty"`
	// Inspector and Bottom name the open inspector tab and bottom tab.
	Inspector string `json:"inspector,omitempty"`
	Bottom    string `json:"bottom,omitempty"`
	// Versions are the shapes the studio's graphs had in this session and
	// the ones before, newest first, at most maxVersions per graph name:
	// what a checkpoint written by an older version is compared with.
	Versions []*engine.Topology `json:"versions,omitempty"`
}

// maxVersions bounds the graph shapes a session keeps per graph name.
const maxVersions = 8

// Session returns where the window stands now.
func (s *Studio) Session() Session {
	ss := Session{Thread: s.m.thread()}
	if g := s.m.graph().Graph; g != nil {
		ss.Graph = g.Name()
	}
	if sc := s.m.scope(); sc.thread != "" {
		ss.Checkpoint = sc.sel
	}
	size := s.win.Canvas().Size()
	ss.Width, ss.Height = size.Width, size.Height
	ss.Splits = map[string]float64{}
	for k, sp := range s.splits {
		ss.Splits[k] = sp.Offset
	}
	if ti := s.insp.tabs.Selected(); ti != nil {
		ss.Inspector = ti.Text
	}
	if ti := s.tabs.Selected(); ti != nil {
		ss.Bottom = ti.Text
	}
	ss.Versions = s.versions()
	return ss
}

// versions returns the shapes of the studio's graphs now, then the older
// ones the restored session knew, newest first, at most maxVersions per
// graph name.
func (s *Studio) versions() []*engine.Topology {
	var out []*engine.Topology
	seen := map[string]bool{}
	per := map[string]int{}
	add := func(t *engine.Topology) {
		if t == nil || seen[t.Fingerprint] || per[t.Name] >= maxVersions {
			return
		}
		seen[t.Fingerprint] = true
		per[t.Name]++
		out = append(out, t)
	}
	for _, g := range s.m.graphs {
		add(g.Graph.Topology())
	}
	for _, t := range s.older {
		add(t)
	}
	return out
}

// Restore brings the window back to ss: size, panel layout and tabs at
// once; the graph by name; the thread and its checkpoint once the store
// confirms they still exist (else the thread's latest checkpoint, or no
// thread, with a note saying so). shown, if not nil, is called once on the
// UI goroutine when the restored checkpoint is on screen, or with an error
// when it could not be restored. Call it on the UI goroutine, before or
// after the window shows.
func (s *Studio) Restore(ss Session, shown func(error)) {
	done := func(err error) {
		if shown != nil {
			shown(err)
			shown = nil
		}
	}
	if ss.Width > 0 && ss.Height > 0 {
		s.win.Resize(fyne.NewSize(ss.Width, ss.Height))
	}
	for k, v := range ss.Splits {
		if sp := s.splits[k]; sp != nil && v > 0.05 && v < 0.95 && sp.Offset != v {
			sp.SetOffset(v)
		}
	}
	selectTab(s.insp.tabs, ss.Inspector)
	s.wantTab = ss.Bottom
	s.selectTab(ss.Bottom)
	s.older = ss.Versions
	if ss.Graph != "" {
		i := slices.IndexFunc(s.m.graphs, func(g Graph) bool { return g.Graph.Name() == ss.Graph })
		if i < 0 {
			s.flash(fmt.Sprintf("The graph %q of the last session is not in this build", ss.Graph))
			done(fmt.Errorf("graph %q is not in this build", ss.Graph))
			return
		}
		if i != s.m.graphIdx {
			s.m.setGraph(i)
		}
	}
	s.showGraphChange()
	if ss.Thread == "" {
		done(nil)
		return
	}
	// The thread shows at once (no other thread flashes by); its timeline
	// does not select its head until the checkpoint is known to exist.
	s.m.setThread(ss.Thread)
	sc := s.m.scope()
	s.holdHead = sc
	thread, cp := ss.Thread, ss.Checkpoint
	goBG(s.sess, func() (bool, error) {
		g, _ := s.sess.current()
		if g == nil {
			return false, errors.New("no graph")
		}
		opts := []engine.RunOption{engine.WithThread(thread)}
		if cp != "" {
			opts = append(opts, engine.WithCheckpoint(cp))
		}
		_, err := g.GetState(context.Background(), opts...)
		if errors.Is(err, checkpoint.ErrNotFound) && cp != "" {
			_, err = g.GetState(context.Background(), engine.WithThread(thread))
			return false, err
		}
		return err == nil, err
	}, func(found bool, err error) {
		// holdHead stays: the timeline's first page may still be on its
		// way, and must not move the selection this sets.
		if sc != s.m.scope() {
			done(errors.New("another thread was chosen meanwhile"))
			return
		}
		if err != nil {
			// The thread is gone (or unreadable): show none, as at start.
			s.flash(fmt.Sprintf("Thread %s of the last session could not be read: %v", thread, explain(err)))
			s.m.setThread("")
			s.refreshThreads(true)
			done(err)
			return
		}
		target := cp
		if !found || cp == "" {
			if cp != "" {
				s.flash("The checkpoint the last session showed is gone; showing the thread's latest")
			}
			target = sc.head
			if target == "" {
				// The first page of headers has not arrived: let it select
				// the head as usual.
				s.afterHeads(sc, func() { s.whenShown(sc, sc.head, done) })
				return
			}
		}
		s.m.selectCheckpoint(target)
		s.whenShown(sc, target, done)
	})
}

// afterHeads runs fn once sc's timeline has a head (its first page read),
// selecting it.
func (s *Studio) afterHeads(sc *scope, fn func()) {
	fired := false
	s.m.subscribe(chTimeline|chThread, func(part) {
		if fired || sc != s.m.scope() || sc.head == "" {
			return
		}
		fired = true
		if sc.sel == "" {
			s.m.selectCheckpoint(sc.head)
		}
		fn()
	})
}

// whenShown calls done once checkpoint id of sc is on screen (at once when
// it already is), or with an error when another thread or checkpoint was
// chosen first.
func (s *Studio) whenShown(sc *scope, id string, done func(error)) {
	if v := sc.viewFor(); v != nil && v.Snap.Ref.CheckpointID == id {
		done(nil)
		return
	}
	fired := false
	s.m.subscribe(chView|chThread|chSelection, func(part) {
		if fired {
			return
		}
		switch {
		case sc != s.m.scope() || sc.sel != id:
			fired = true
			done(errors.New("another checkpoint was chosen meanwhile"))
		case sc.viewFor() != nil:
			fired = true
			done(nil)
		}
	})
}

// selectTab opens the tab named name, if there is one.
func selectTab(tabs *container.AppTabs, name string) {
	if name == "" {
		return
	}
	for _, ti := range tabs.Items {
		if ti.Text == name {
			if tabs.Selected() != ti {
				tabs.Select(ti)
			}
			return
		}
	}
}

// writtenBy returns the fingerprint of the graph that wrote a checkpoint,
// "" when it was not recorded.
func writtenBy(md checkpoint.Metadata) string {
	fp, _ := md.Extra[engine.MetaFingerprint].(string)
	return fp
}

// olderGraph reports whether a checkpoint was written by another version
// of the graph than fp (a checkpoint that does not say is not).
func olderGraph(md checkpoint.Metadata, fp string) bool {
	w := writtenBy(md)
	return w != "" && fp != "" && w != fp
}
