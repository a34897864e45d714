package agui

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// sseWriter frames events as AG-UI's encoder does ("data: <json>\n\n", no
// event or id lines), flushes after each one and sends ": ping" comments
// while nothing else is written. Once a write fails the client is gone:
// later writes are dropped and gone reports true.
type sseWriter struct {
	mu    sync.Mutex
	w     io.Writer
	flush func()
	rc    *http.ResponseController
	// timeout bounds each write, so a client that stops reading without
	// disconnecting is treated as gone instead of holding the thread; 0
	// means no bound.
	timeout time.Duration
	clock   func() time.Time
	err     error
	// onGone, when set, is called once when the writer first notices the
	// client is gone.
	onGone func()
	// max is the largest event, in bytes of JSON, sent (0: no limit);
	// tooBig says which event was over it. Once set, every later event is
	// dropped until finish sends the run's RUN_ERROR.
	max    int
	tooBig error
	// pending are the interrupt ids the run ended at, named in finish's
	// RUN_ERROR.
	pending []string
	stop    chan struct{}
	done    chan struct{}
}

func newSSEWriter(w http.ResponseWriter, clock func() time.Time) *sseWriter {
	s := &sseWriter{w: w, clock: clock, flush: func() {}}
	rc := http.NewResponseController(w)
	s.rc = rc
	s.flush = func() {
		if err := rc.Flush(); err != nil && s.err == nil {
			s.fail(fmt.Errorf("flushing the response: %w", err))
		}
	}
	return s
}

// write sends one event. It returns false once the client is gone.
func (s *sseWriter) write(ev Event) bool {
	b := ev.base()
	b.Type = ev.EventType()
	if s.clock != nil && b.Timestamp == 0 {
		b.Timestamp = s.clock().UnixMilli()
	}
	data, err := json.Marshal(ev)
	if err != nil {
		// Every field is plain data built by this package except Custom
		// values and interrupt payloads, which came from the graph; report
		// the failure in their place rather than dropping the frame.
		data, _ = json.Marshal(&Custom{Base: Base{Type: TypeCustom, Timestamp: b.Timestamp}, Name: "weft:encoding_error",
			Value: fmt.Sprintf("%s event could not be encoded: %v", b.Type, err)})
	}
	if s.max > 0 && len(data) > s.max {
		if parts := splitDelta(ev, len(data), s.max); len(parts) > 1 {
			for _, p := range parts {
				if !s.write(p) {
					return false
				}
			}
			return true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	if s.tooBig != nil {
		return true // dropped: see finish
	}
	if s.max > 0 && len(data) > s.max {
		s.tooBig = fmt.Errorf("the run had to send a %s event of %d bytes, more than the %d bytes an AG-UI client accepts in one event; it stopped at the next step boundary and the thread is kept: read it with the studio or weft state", b.Type, len(data), s.max)
		return true
	}
	return s.send(data)
}

// tooLarge returns why events were dropped, or nil.
func (s *sseWriter) tooLarge() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tooBig
}

// finish ends a run whose events were dropped (tooLarge) with RUN_ERROR.
func (s *sseWriter) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tooBig == nil || s.err != nil {
		return
	}
	msg := s.tooBig.Error()
	if len(s.pending) > 0 {
		msg += fmt.Sprintf("; the thread waits for answers to interrupt %s (resume them by id)", strings.Join(s.pending, ", "))
	}
	ev := &RunError{Message: msg, Code: CodeEventTooLarge}
	ev.Type = ev.EventType()
	if s.clock != nil {
		ev.Timestamp = s.clock().UnixMilli()
	}
	data, _ := json.Marshal(ev)
	s.send(data)
}

// send writes one frame and flushes it; s.mu is held.
func (s *sseWriter) send(data []byte) bool {
	s.deadline()
	// Three writes rather than one copy of a frame that may be megabytes:
	// the response is buffered anyway.
	for _, part := range [][]byte{[]byte("data: "), data, []byte("\n\n")} {
		if _, err := s.w.Write(part); err != nil {
			s.fail(err)
			return false
		}
	}
	s.flush()
	return s.err == nil
}

// deadline sets the write deadline for the next write; s.mu is held.
func (s *sseWriter) deadline() {
	if s.timeout > 0 && s.rc != nil {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) // unsupported writers have no deadline
	}
}

// close clears the write deadline so a kept-alive connection does not
// inherit it.
func (s *sseWriter) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timeout > 0 && s.rc != nil {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

// fail records the first write error; s.mu is held.
func (s *sseWriter) fail(err error) {
	if s.err != nil {
		return
	}
	s.err = err
	if s.onGone != nil {
		s.onGone()
	}
}

// gone reports whether a write has failed.
func (s *sseWriter) gone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err != nil
}

// markGone records that the client went away (its request context ended).
func (s *sseWriter) markGone(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail(err)
}

// ping writes a keep-alive comment, which the client's parser ignores.
func (s *sseWriter) ping() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.deadline()
	if _, err := io.WriteString(s.w, ": ping\n\n"); err != nil {
		s.fail(err)
		return
	}
	s.flush()
}

// keepAlive pings every interval until stopKeepAlive; interval <= 0 does
// nothing.
func (s *sseWriter) keepAlive(interval time.Duration) {
	if interval <= 0 {
		return
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.ping()
			}
		}
	}()
}

func (s *sseWriter) stopKeepAlive() {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
}
