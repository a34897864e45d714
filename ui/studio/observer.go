package studio

import (
	"sync"
	"time"

	"github.com/weftstudio/weft/engine"
)

// runObserver takes a run's events on the engine's observer goroutine and
// brings them to the window in batches: the event log, the graph's live
// tasks (subgraph nodes included, by namespace) and tokens streaming into
// the chat. It writes into the scope the run started in, so events of a
// thread the user left never show under another.
type runObserver struct {
	s  *Studio
	sc *scope
	// follow marks a run started elsewhere (follow.go): the window reads
	// the thread again at each node's update, since no run of its own
	// will hand it the result; seen is set once its first event showed.
	follow bool
	seen   bool
	mu     sync.Mutex
	buf    []engine.Event
	timer  *time.Timer
}

// flushEvery is how often a long run's events reach the window.
const flushEvery = 50 * time.Millisecond

// observe buffers ev and schedules a flush; it never blocks the run.
func (o *runObserver) observe(ev engine.Event) {
	if ev.Mode == engine.ModeDebug {
		return // the same tasks and checkpoints again
	}
	o.mu.Lock()
	o.buf = append(o.buf, ev)
	if o.timer == nil {
		o.timer = time.AfterFunc(flushEvery, func() { uiDo(func() { o.s.m.update(o.flush) }) })
	}
	o.mu.Unlock()
}

// flush applies the buffered events to the model; it runs on the UI
// goroutine inside a model update.
func (o *runObserver) flush() {
	o.mu.Lock()
	evs := o.buf
	o.buf = nil
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
	o.mu.Unlock()
	if len(evs) == 0 {
		return
	}
	m, sc := o.s.m, o.sc
	rows := make([]evRow, 0, len(evs))
	updated := false
	for _, ev := range evs {
		rows = append(rows, rowOf(ev))
		switch {
		case ev.Mode == engine.ModeTasks && ev.Task != nil:
			m.taskMoved(sc, nodeID(ev.NS, ev.Task.Name), !ev.Task.Done)
		case ev.Update != nil:
			updated = true
		case ev.Message != nil && (m.run.Going || o.follow):
			sc.stream = appendChunk(sc.stream, ev)
		case ev.Call != nil:
			sc.calls = append(sc.calls, liveCall{Step: ev.Step, NS: ev.NS, CallEvent: *ev.Call})
		}
	}
	m.addEvents(sc, rows)
	if o.follow {
		if !o.seen {
			o.seen = true
			m.setStatus(sc, followStatus)
		}
		if updated && sc == m.sc {
			o.s.refresh()
		}
	}
}

// appendChunk adds a streamed chunk to the message it belongs to (by id,
// else by task), or starts that message.
func appendChunk(stream []streamMsg, ev engine.Event) []streamMsg {
	c := ev.Message
	id := c.Message.ID
	if id == "" {
		id = "task:" + c.TaskID
	}
	for i := range stream {
		if stream[i].ID == id {
			stream[i].Text += c.Message.Content
			return stream
		}
	}
	node := c.Node
	if ev.NS != "" {
		node = nsLabel(ev.NS) + " › " + node
	}
	return append(stream, streamMsg{ID: id, Node: node, Role: c.Message.Role, Text: c.Message.Content})
}
