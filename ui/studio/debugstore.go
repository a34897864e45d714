package studio

// Breakpoints and watches are kept per graph between sessions, in a small
// JSON file under the user's config directory (os.UserConfigDir()/weft),
// one file per graph name. A file is written whole to a temporary file,
// synced and renamed over the old one, so a crash at any moment leaves
// the old or the new file, never half of one.

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/weftstudio/weft/engine"
)

// savedDebug is the file's content.
type savedDebug struct {
	Graph       string   `json:"graph"`
	BreakAll    bool     `json:"break_all,omitempty"`
	BreakBefore []string `json:"break_before,omitempty"`
	BreakAfter  []string `json:"break_after,omitempty"`
	// Breakpoints are expression breakpoints as inspect.Parse reads them.
	Breakpoints []string `json:"breakpoints,omitempty"`
	Watches     []string `json:"watches,omitempty"`
}

// debugDir returns the directory the files go in; "" (and no error)
// keeps nothing. Tests replace it.
var debugDir = func() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "weft"), nil
}

// debugFile is the file of graph name in dir.
func debugFile(dir, name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(dir, fmt.Sprintf("debug-%s-%x.json", strings.Trim(b.String(), "-"), sum[:4]))
}

// savedOf is what is kept of a graph's breakpoints and watches.
func savedOf(name string, b breakpoints, d debugSet) savedDebug {
	s := savedDebug{Graph: name, BreakAll: b.All}
	for n, on := range b.Before {
		if on {
			s.BreakBefore = append(s.BreakBefore, n)
		}
	}
	for n, on := range b.After {
		if on {
			s.BreakAfter = append(s.BreakAfter, n)
		}
	}
	slices.Sort(s.BreakBefore)
	slices.Sort(s.BreakAfter)
	for _, x := range d.Breaks {
		s.Breakpoints = append(s.Breakpoints, x.Spec)
	}
	for _, w := range d.Watches {
		s.Watches = append(s.Watches, w.Src)
	}
	return s
}

// restore makes the model's breakpoints and watches for graph g from s.
// Entries that no longer fit the graph stay, with their error, so that
// nothing the user set is lost silently.
func restore(g *engine.Graph, s savedDebug) (breakpoints, debugSet) {
	b := breakpoints{All: s.BreakAll, Before: map[string]bool{}, After: map[string]bool{}}
	for _, n := range s.BreakBefore {
		b.Before[n] = true
	}
	for _, n := range s.BreakAfter {
		b.After[n] = true
	}
	d := newDebugSet(g)
	for _, spec := range s.Breakpoints {
		d.Breaks = append(d.Breaks, d.parseBreak(spec))
	}
	for _, src := range s.Watches {
		d.Watches = append(d.Watches, d.compileWatch(src))
	}
	return b, d
}

// readDebug reads the file of graph name; ok is false when there is none.
// A file that is not one of these is moved aside (to .bad) and reported.
func readDebug(dir, name string) (s savedDebug, ok bool, err error) {
	path := debugFile(dir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Graph != name {
		if err == nil {
			err = fmt.Errorf("it is for graph %q", s.Graph)
		}
		_ = os.Rename(path, path+".bad")
		return savedDebug{}, false, fmt.Errorf("%s is not a breakpoints file of graph %q (%v); it was moved to %s.bad", path, name, err, filepath.Base(path))
	}
	return s, true, nil
}

// debugWriter writes files in the background, the newest content of each
// path last: saves never wait on the disk and never undo a newer one.
type debugWriter struct {
	mu      sync.Mutex
	pending map[string][]byte
	busy    bool
	onErr   func(error)
	idle    *sync.Cond
}

// save schedules path to hold data.
func (w *debugWriter) save(path string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == nil {
		w.pending = map[string][]byte{}
	}
	w.pending[path] = data
	if !w.busy {
		w.busy = true
		go w.loop()
	}
}

func (w *debugWriter) loop() {
	for {
		w.mu.Lock()
		var path string
		var data []byte
		for p, d := range w.pending {
			path, data = p, d
			break
		}
		if path == "" {
			w.busy = false
			if w.idle != nil {
				w.idle.Broadcast()
			}
			w.mu.Unlock()
			return
		}
		delete(w.pending, path)
		w.mu.Unlock()
		if err := writeAtomic(path, data); err != nil && w.onErr != nil {
			w.onErr(err)
		}
	}
}

// wait blocks until every scheduled save is written (for tests).
func (w *debugWriter) wait() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.idle == nil {
		w.idle = sync.NewCond(&w.mu)
	}
	for w.busy {
		w.idle.Wait()
	}
}

// writeAtomic replaces path with data: a synced temporary file renamed
// over it, then the directory synced.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".debug-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // gone after the rename; cleans up on failure
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// loadDebug gives the selected graph its saved breakpoints and watches,
// if it has any; it runs when the graph changes.
func (s *Studio) loadDebug() {
	g := s.m.graph().Graph
	s.dbg.savedPath, s.dbg.saved = "", nil
	if g == nil {
		return
	}
	dir, err := debugDir()
	if err != nil {
		s.flash("Breakpoints and watches are not kept between sessions: " + err.Error())
		return
	}
	if dir == "" {
		return
	}
	saved, ok, err := readDebug(dir, g.Name())
	if err != nil {
		s.showError("Reading the saved breakpoints", err)
	}
	if ok {
		b, d := restore(g, saved)
		s.m.update(func() {
			s.m.brk = b
			s.m.changed(chBreakpoints)
			s.m.setDebugSet(d)
		})
	}
	s.dbg.savedPath = debugFile(dir, g.Name())
	s.dbg.saved, _ = json.Marshal(savedOf(g.Name(), s.m.brk, s.m.dbg))
}

// saveDebug writes the graph's breakpoints and watches when they differ
// from what the file holds.
func (s *Studio) saveDebug() {
	g := s.m.graph().Graph
	if g == nil || s.dbg.savedPath == "" {
		return
	}
	data, err := json.Marshal(savedOf(g.Name(), s.m.brk, s.m.dbg))
	if err != nil || string(data) == string(s.dbg.saved) {
		return
	}
	s.dbg.saved = data
	var pretty bytes.Buffer
	enc := json.NewEncoder(&pretty)
	enc.SetEscapeHTML(false) // "revisions > 2" reads as typed
	enc.SetIndent("", "  ")
	if err := enc.Encode(savedOf(g.Name(), s.m.brk, s.m.dbg)); err != nil {
		return
	}
	s.dbg.writer.save(s.dbg.savedPath, pretty.Bytes())
}
