package modeltest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Response is what the fake server answers to one request.
type Response struct {
	// Status other than 0 and 200 answers with the wire's error body
	// carrying Message, and Header.
	Status  int
	Message string
	Header  http.Header
	// Reply is streamed when Status is 0 or 200.
	Reply Reply
	// CutAfter > 0 breaks the connection after that many frames (no
	// terminating chunk: the client sees an unexpected EOF).
	CutAfter int
	// EndAfter > 0 ends the response cleanly after that many frames, before
	// the reply is complete.
	EndAfter int
	// HangAfter > 0 stops after that many frames and holds the connection
	// open until the client goes away.
	HangAfter int
	// Delay is a wait between frames.
	Delay time.Duration
}

// Server is a fake provider: it answers each request with the next of its
// responses (the last one again once they run out) and keeps what it was
// sent. Make one with NewServer; it closes with the test.
type Server struct {
	URL  string
	wire Wire

	mu        sync.Mutex
	respond   func(Seen) Response // NewServerFunc; nil for a fixed list
	responses []Response
	requests  []Request
	gone      chan struct{} // closed when a hanging response's client went away
	goneOnce  sync.Once
}

// Request is one request the server received.
type Request struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
}

// NewServer starts a fake server speaking wire.
func NewServer(t testing.TB, wire Wire, responses ...Response) *Server {
	s := &Server{wire: wire, responses: responses, gone: make(chan struct{})}
	hs := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

// NewServerFunc starts a fake server speaking wire that answers each
// request with respond's response to what it asked: a model whose replies
// depend on the conversation, for tests that run it many times.
func NewServerFunc(t testing.TB, wire Wire, respond func(Seen) Response) *Server {
	s := NewServer(t, wire)
	s.respond = respond
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Gone is closed once the client of a HangAfter response has gone away.
func (s *Server) Gone() <-chan struct{} { return s.gone }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests = append(s.requests, Request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()})
	var resp Response
	if s.respond != nil {
		seen, err := s.wire.Decode(body)
		if err != nil {
			resp = Response{Status: http.StatusBadRequest, Message: "cannot read the request: " + err.Error()}
		} else {
			resp = s.respond(seen)
		}
	} else if len(s.responses) > 0 {
		resp = s.responses[0]
		if len(s.responses) > 1 {
			s.responses = s.responses[1:]
		}
	}
	s.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, s.wire.Path()) {
		http.Error(w, "unknown path "+r.URL.Path, http.StatusNotFound)
		return
	}
	if resp.Status != 0 && resp.Status != http.StatusOK {
		for k, vs := range resp.Header {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.Status)
		_, _ = w.Write(s.wire.ErrorBody(resp.Status, resp.Message))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	for i, f := range s.wire.Events(resp.Reply) {
		switch {
		case resp.CutAfter > 0 && i == resp.CutAfter:
			panic(http.ErrAbortHandler) // drop the connection mid-response
		case resp.EndAfter > 0 && i == resp.EndAfter:
			return
		case resp.HangAfter > 0 && i == resp.HangAfter:
			<-r.Context().Done()
			s.goneOnce.Do(func() { close(s.gone) })
			return
		}
		if resp.Delay > 0 && i > 0 {
			time.Sleep(resp.Delay)
		}
		_, _ = io.WriteString(w, f)
		if fl != nil {
			fl.Flush()
		}
	}
}
