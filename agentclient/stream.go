package agentclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Event is one Server-Sent Event of a run's stream.
type Event struct {
	// Name is the event's name as sent: "metadata", "values",
	// "updates|research:<task id>", "messages/partial", "error", …
	Name string
	// Mode is Name without its namespace: the stream mode ("updates"),
	// "metadata", "error", or a messages sub-event ("messages/partial").
	// messages-tuple events are named "messages".
	Mode string
	// Namespace is the subgraph the event comes from, one element per
	// level ("research:<task id>"); nil for the root graph.
	Namespace []string
	// ID is the event's id ("" when the server sent none); LangGraph
	// numbers a run's events from 0.
	ID string
	// Data is the event's JSON data as sent; nil when it had none.
	Data json.RawMessage
}

// Decode unmarshals the event's data into v.
func (e Event) Decode(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("agentclient: event %q has no data", e.Name)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("agentclient: event %q (id %s): %w", e.Name, e.ID, err)
	}
	return nil
}

// splitName parses an event name into its mode and namespace.
func splitName(name string) (string, []string) {
	parts := strings.Split(name, "|")
	if len(parts) == 1 {
		return name, nil
	}
	return parts[0], parts[1:]
}

// RunError is a run that failed on the server: its stream carried an
// error event. The stream's Err returns it once the stream has ended.
type RunError struct {
	// Name is the error's class as the server names it (for example
	// "GraphRecursionError"); empty when not said.
	Name string
	// Message is the server's description.
	Message string
	// Data is the error event's data as sent.
	Data json.RawMessage
}

// Error says that the run failed, and how.
func (e *RunError) Error() string {
	if e.Name != "" {
		return "agentclient: the run failed: " + e.Name + ": " + e.Message
	}
	return "agentclient: the run failed: " + e.Message
}

func runErrorOf(data json.RawMessage) *RunError {
	e := &RunError{Data: data}
	var v struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &v) == nil {
		e.Message = v.Message
		switch x := v.Error.(type) {
		case string:
			e.Name = x
		case map[string]any:
			e.Name, _ = x["name"].(string)
			if e.Message == "" {
				e.Message, _ = x["message"].(string)
			}
		}
	}
	if e.Message == "" {
		e.Message = string(data)
	}
	return e
}

// EventError is a stream event the client could not read: its data is
// not JSON, or it is too large. The stream stops at it.
type EventError struct {
	// Stream is the request the stream answers ("POST /threads/T/runs/stream").
	Stream string
	// N is the event's position in the stream, from 1.
	N int
	// Name and ID are the event's.
	Name, ID string
	// Err says what is wrong with it.
	Err error
}

// Error names the event and what is wrong with it.
func (e *EventError) Error() string {
	return fmt.Sprintf("agentclient: %s: event %d (name %q, id %q) is malformed: %v", e.Stream, e.N, e.Name, e.ID, e.Err)
}

// Unwrap gives what is wrong with the event.
func (e *EventError) Unwrap() error { return e.Err }

// StreamCutError is a stream that ended mid-run and could not be resumed.
type StreamCutError struct {
	// Stream is the request the stream answers.
	Stream string
	// After is how many events had arrived; LastID is the last one's id.
	After  int
	LastID string
	// Cause is how the stream ended (for example io.ErrUnexpectedEOF).
	Cause error
	// Resume says why it was not resumed, or how resuming failed.
	Resume error
}

// Error says after which event the stream was cut, and why it was not
// resumed.
func (e *StreamCutError) Error() string {
	last := ""
	if e.LastID != "" {
		last = " (id " + e.LastID + ")"
	}
	return fmt.Sprintf("agentclient: %s: the stream was cut after event %d%s: %v; not resumed: %v", e.Stream, e.After, last, e.Cause, e.Resume)
}

// Is matches ErrStreamCut.
func (e *StreamCutError) Is(target error) bool { return target == ErrStreamCut }

// Unwrap gives both the cut's cause and the resume's failure.
func (e *StreamCutError) Unwrap() []error { return []error{e.Cause, e.Resume} }

// maxEvent bounds one event's size: a values event holds a whole state.
const maxEvent = 64 << 20

// sseReader reads Server-Sent Events (the WHATWG framing: event, data,
// id and retry fields, comments, CR, LF or CRLF line ends).
type sseReader struct {
	r     *bufio.Reader
	lines []string // lines read but not yet parsed (a read ends at LF; CR splits further)
	eof   error    // the read error once the reader is drained
}

type rawEvent struct {
	name, id string
	data     []byte
	hasData  bool
}

// errPartial is a stream that closed inside an event.
var errPartial = errors.New("the stream closed in the middle of an event")

// line returns the next line without its line end.
func (s *sseReader) line() (string, error) {
	for len(s.lines) == 0 {
		if s.eof != nil {
			return "", s.eof
		}
		chunk, err := s.r.ReadString('\n')
		if err != nil {
			s.eof = err
			if chunk == "" {
				continue
			}
		} else {
			chunk = strings.TrimSuffix(strings.TrimSuffix(chunk, "\n"), "\r")
		}
		// A lone CR ends a line too.
		s.lines = strings.Split(chunk, "\r")
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	return l, nil
}

// next returns the next event, io.EOF at a clean end, errPartial when
// the stream closed inside an event, or the read error.
func (s *sseReader) next() (rawEvent, error) {
	var ev rawEvent
	pending := false
	size := 0
	for {
		l, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && pending {
				return ev, errPartial
			}
			return ev, err
		}
		size += len(l)
		if size > maxEvent {
			return ev, fmt.Errorf("an event is larger than %d MiB", maxEvent>>20)
		}
		if l == "" {
			if pending {
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(l, ":") {
			continue // a comment (keep-alive)
		}
		field, value, _ := strings.Cut(l, ":")
		value = strings.TrimPrefix(value, " ")
		pending = true
		switch field {
		case "event":
			ev.name = value
		case "data":
			if ev.hasData {
				ev.data = append(ev.data, '\n')
			}
			ev.data = append(ev.data, value...)
			ev.hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				ev.id = value
			}
		default: // retry and unknown fields are ignored, as the framing says
		}
	}
}

// Stream is a run's event stream. Read it with Next and Event until Next
// returns false, then check Err; Close it when done (Close before the
// end stops reading; the server may cancel the run, per its
// on_disconnect).
//
// A stream cut mid-run (the connection drops, closes inside an event,
// or closes while the server says the run is still running) is resumed through GET /threads/{thread}/runs/{run}/stream with the
// Last-Event-ID of the last event read, at most WithReconnects times in
// a row; events the server sends again are skipped. LangGraph servers
// keep a run's events for that only with RunRequest.StreamResumable. If
// it cannot be resumed, Err is a *StreamCutError.
type Stream struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	what   string // "POST /threads/T/runs/stream", for errors

	thread, run string
	body        io.ReadCloser
	rd          *sseReader

	ev         Event
	err        error
	runErr     *RunError
	n          int
	lastID     string
	lastNum    int
	numbered   bool // every event so far had a numeric id
	resumed    int  // resumes since the last event delivered
	reconnects int  // resumes in all
	skipUpTo   int  // after a resume: drop numbered events <= this
	// closeChecked: the run's status was checked at a clean close, and no
	// event came since.
	closeChecked bool
	checkGap     bool // after a resume: the first new event must follow lastNum
	done         bool
}

// RunID is the run's id, from the response's Content-Location or its
// metadata event; "" until known.
func (s *Stream) RunID() string { return s.run }

// ThreadID is the thread's id ("" for a stateless run whose thread the
// server did not name).
func (s *Stream) ThreadID() string { return s.thread }

// Reconnects is how many times the stream was resumed after a cut.
func (s *Stream) Reconnects() int { return s.reconnects }

// Event is the event Next read.
func (s *Stream) Event() Event { return s.ev }

// Err is why the stream stopped: nil at its normal end, a *RunError when
// the run failed, a *StreamCutError, an *EventError, an *Error for a
// failed resume request, or the context's error.
func (s *Stream) Err() error {
	if s.err != nil {
		return s.err
	}
	if s.runErr != nil {
		return s.runErr
	}
	return nil
}

// Close stops the stream and releases its connection.
func (s *Stream) Close() error {
	s.done = true
	if s.body != nil {
		s.body.Close()
	}
	s.cancel()
	return nil
}

// Collect reads the rest of the stream and closes it.
func (s *Stream) Collect() ([]Event, error) {
	defer s.Close()
	var out []Event
	for s.Next() {
		out = append(out, s.Event())
	}
	return out, s.Err()
}

// Next reads the next event; false at the end of the stream or on a
// failure (see Err).
func (s *Stream) Next() bool {
	for !s.done {
		raw, err := s.rd.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				// LangGraph sends no end event: a clean close is the
				// end, unless the run is still going (a proxy closed
				// the connection), checked once per close that
				// follows new events.
				if !s.closeChecked && s.c.reconnects > 0 && s.runErr == nil && s.stillRunning() {
					s.closeChecked = true
					if err := s.resume(errClosedEarly); err != nil {
						s.finish(err)
						return false
					}
					continue
				}
				s.finish(nil)
				return false
			}
			if s.ctx.Err() != nil {
				s.finish(context.Cause(s.ctx))
				return false
			}
			if err = s.resume(err); err != nil {
				s.finish(err)
				return false
			}
			continue
		}
		if !raw.hasData && raw.name == "" {
			continue // an id- or retry-only event: nothing to deliver
		}
		num, isNum := 0, false
		if raw.id != "" {
			if n, err := strconv.Atoi(raw.id); err == nil {
				num, isNum = n, true
			}
		}
		if s.skipUpTo >= 0 && isNum && num <= s.skipUpTo {
			continue // sent again after a resume
		}
		if s.checkGap && isNum && s.numbered && num > s.lastNum+1 {
			s.finish(&StreamCutError{Stream: s.what, After: s.n, LastID: s.lastID, Cause: errors.New("the connection dropped"),
				Resume: fmt.Errorf("the server resumed at event id %d, so events %d to %d are lost (it keeps a run's events only when the run is started with stream_resumable)", num, s.lastNum+1, num-1)})
			return false
		}
		s.checkGap = false
		s.skipUpTo = -1
		s.n++
		ev := Event{Name: raw.name, ID: raw.id}
		if ev.Name == "" {
			ev.Name = "message"
		}
		ev.Mode, ev.Namespace = splitName(ev.Name)
		if raw.hasData {
			d := bytes.TrimSpace(raw.data)
			if !json.Valid(d) {
				s.finish(&EventError{Stream: s.what, N: s.n, Name: ev.Name, ID: ev.ID, Err: fmt.Errorf("its data is not JSON: %.120q", d)})
				return false
			}
			ev.Data = json.RawMessage(d)
		}
		if raw.id != "" {
			s.lastID = raw.id
			s.lastNum = num
			s.numbered = isNum && (s.numbered || s.n == 1)
		} else {
			s.numbered = false
		}
		s.resumed = 0
		s.closeChecked = false
		if ev.Mode == "metadata" && s.run == "" {
			var m struct {
				RunID string `json:"run_id"`
			}
			if json.Unmarshal(ev.Data, &m) == nil {
				s.run = m.RunID
			}
		}
		if ev.Mode == "error" && len(ev.Namespace) == 0 {
			s.runErr = runErrorOf(ev.Data)
		}
		s.ev = ev
		return true
	}
	return false
}

func (s *Stream) finish(err error) {
	if err != nil && s.err == nil {
		s.err = err
	}
	s.Close()
}

// errClosedEarly is a stream closed cleanly while its run still runs.
var errClosedEarly = errors.New("the connection closed while the run was still running")

// stillRunning asks the server whether the stream's run is still going;
// false when it cannot tell (a stateless run, no run id, an error).
func (s *Stream) stillRunning() bool {
	if s.thread == "" || s.run == "" || s.ctx.Err() != nil {
		return false
	}
	r, err := s.c.GetRun(s.ctx, s.thread, s.run)
	return err == nil && (r.Status == "pending" || r.Status == "running")
}

// resume reopens a cut stream after its last event, or says why not.
func (s *Stream) resume(cause error) error {
	if errors.Is(cause, errPartial) || errors.Is(cause, errClosedEarly) {
		// as it is
	} else if !errors.Is(cause, io.ErrUnexpectedEOF) {
		cause = fmt.Errorf("the connection dropped: %w", cause)
	}
	cut := &StreamCutError{Stream: s.what, After: s.n, LastID: s.lastID, Cause: cause}
	switch {
	case s.c.reconnects == 0:
		cut.Resume = errors.New("resuming is off (WithReconnects(0))")
		return cut
	case s.resumed >= s.c.reconnects:
		cut.Resume = fmt.Errorf("%d resumes in a row brought no new event", s.resumed)
		return cut
	case s.run == "":
		cut.Resume = errors.New("the server named no run id (no Content-Location header, no metadata event), so there is no run stream to rejoin")
		return cut
	case s.n > 0 && s.lastID == "":
		cut.Resume = errors.New("the server sends events without ids, so there is no Last-Event-ID to resume from")
		return cut
	}
	s.body.Close()
	last := s.lastID
	if last == "" {
		last = "-1" // LangGraph: replay from the first event
	}
	path := "/runs/" + esc(s.run) + "/stream"
	if s.thread != "" {
		path = "/threads/" + esc(s.thread) + path
	}
	s.resumed++
	s.reconnects++
	body, err := s.c.open(s.ctx, call{method: http.MethodGet, path: path, header: http.Header{"Last-Event-ID": {last}}})
	if err != nil {
		var ae *Error
		if errors.As(err, &ae) && ae.Status != 0 {
			cut.Resume = fmt.Errorf("the server refused to resume it with Last-Event-ID %s: %w", last, err)
		} else {
			cut.Resume = fmt.Errorf("rejoining it failed: %w", err)
		}
		if s.ctx.Err() != nil {
			return context.Cause(s.ctx)
		}
		return cut
	}
	s.body = body
	s.rd = &sseReader{r: bufio.NewReaderSize(body, 64<<10)}
	s.skipUpTo = -1
	if s.numbered {
		s.skipUpTo = s.lastNum
		s.checkGap = true
	}
	return nil
}

// open makes a streaming request, bounding the wait for its response
// headers by WithTimeout, and checks that the answer is an event stream.
func (c *Client) open(ctx context.Context, cl call) (io.ReadCloser, error) {
	hctx, cancel := context.WithCancelCause(ctx)
	var timer *time.Timer
	if c.timeout > 0 {
		timer = time.AfterFunc(c.timeout, func() { cancel(errTimeout) })
	}
	resp, err := c.do(hctx, cl)
	if timer != nil && !timer.Stop() && err == nil {
		// The timeout fired as the headers arrived: the body's
		// context is already cancelled.
		resp.Body.Close()
		cancel(nil)
		return nil, &Error{Method: cl.method, Path: cl.path, Err: fmt.Errorf("%w: no answer from %s within %v", ErrTimeout, c.base.Host, c.timeout)}
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
		resp.Body.Close()
		cancel(nil)
		return nil, &Error{Method: cl.method, Path: cl.path, Status: resp.StatusCode,
			Message: fmt.Sprintf("the answer is %q, not an event stream: %s", resp.Header.Get("Content-Type"), serverMessage(b))}
	}
	return &cancelBody{ReadCloser: resp.Body, cancel: func() { cancel(nil) }, loc: resp.Header.Get("Content-Location")}, nil
}

// cancelBody ends the request's context with the body.
type cancelBody struct {
	io.ReadCloser
	cancel func()
	loc    string
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// parseLocation reads a run's thread and id from a Content-Location of
// /threads/{thread}/runs/{run} or /runs/{run} (possibly under a prefix).
func parseLocation(loc string) (thread, run string) {
	parts := strings.Split(strings.Trim(loc, "/"), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "runs" {
			run = parts[i+1]
			if i >= 2 && parts[i-2] == "threads" {
				thread = parts[i-1]
			}
			return thread, run
		}
	}
	return "", ""
}

// Stream starts a run on thread ("" for a stateless run) and streams its
// events.
func (c *Client) Stream(ctx context.Context, thread string, req RunRequest) (*Stream, error) {
	p := runsPath(thread) + "/stream"
	if err := needID(http.MethodPost, p, "the assistant id", req.AssistantID); err != nil {
		return nil, err
	}
	return c.stream(ctx, thread, "", call{method: http.MethodPost, path: p, body: req})
}

// JoinStream follows a run's events. lastEventID "" follows from now on
// (LangGraph sends nothing for a finished run then), "-1" from the first
// event the server kept, n after event n. LangGraph keeps a run's events
// only when it was started with StreamResumable, and LangGraph.js drops
// them once the run is joined (JoinRun): follow first, then join.
func (c *Client) JoinStream(ctx context.Context, thread, run, lastEventID string) (*Stream, error) {
	p := "/threads/" + esc(thread) + "/runs/" + esc(run) + "/stream"
	if err := twoIDs(http.MethodGet, p, thread, run); err != nil {
		return nil, err
	}
	cl := call{method: http.MethodGet, path: p}
	if lastEventID != "" {
		cl.header = http.Header{"Last-Event-ID": {lastEventID}}
	}
	return c.stream(ctx, thread, run, cl)
}

func (c *Client) stream(ctx context.Context, thread, run string, cl call) (*Stream, error) {
	sctx, cancel := context.WithCancel(ctx)
	body, err := c.open(sctx, cl)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &Stream{c: c, ctx: sctx, cancel: cancel, what: cl.method + " " + cl.path, thread: thread, run: run,
		body: body, rd: &sseReader{r: bufio.NewReaderSize(body, 64<<10)}, skipUpTo: -1}
	if t, r := parseLocation(body.(*cancelBody).loc); r != "" {
		s.run = r
		if t != "" {
			s.thread = t
		}
	}
	if n, err := strconv.Atoi(cl.header.Get("Last-Event-ID")); err == nil && n >= 0 {
		s.lastID, s.lastNum, s.numbered, s.skipUpTo = strconv.Itoa(n), n, true, n
	}
	return s, nil
}

// ThreadMovedError is Resume refusing: the thread's head is no longer the
// checkpoint the caller meant to act on (another run or update moved it).
type ThreadMovedError struct {
	Thread string
	// Expected is the checkpoint the caller named; Head is the thread's
	// head now, with the nodes due next there.
	Expected, Head string
	HeadNext       []string
}

// Error names both checkpoints.
func (e *ThreadMovedError) Error() string {
	return fmt.Sprintf("agentclient: thread %s moved: its head is checkpoint %s (next %v), not %s as expected; read its state again and decide there",
		e.Thread, e.Head, e.HeadNext, e.Expected)
}

// Is matches ErrThreadMoved.
func (e *ThreadMovedError) Is(target error) bool { return target == ErrThreadMoved }

// Resume answers a thread's interrupt with cmd (or, with an empty cmd,
// continues it past a breakpoint), acting on checkpoint expectCheckpoint: it reads
// the thread's head and refuses with a *ThreadMovedError if the head is
// another checkpoint, and refuses with ErrInvalid if the head has no
// node to run. The run is sent with CheckpointID set to
// expectCheckpoint, because LangGraph resumes an older pending answer
// when it is not (after a replay the fork's head must be named). req
// gives the assistant and the stream's modes; its Command and Input must
// be empty.
//
// Between the check and the run another client may still move the
// thread; the run then starts from expectCheckpoint (a fork) or is
// refused as busy (ErrConflict).
func (c *Client) Resume(ctx context.Context, thread, expectCheckpoint string, cmd Command, req RunRequest) (*Stream, error) {
	req, err := c.resumeRequest(ctx, runsPath(thread)+"/stream", thread, expectCheckpoint, cmd, req)
	if err != nil {
		return nil, err
	}
	return c.Stream(ctx, thread, req)
}

// ResumeInBackground is Resume as a background run: the same checks, then
// CreateRun; the server runs it whether or not anyone follows it.
func (c *Client) ResumeInBackground(ctx context.Context, thread, expectCheckpoint string, cmd Command, req RunRequest) (*Run, error) {
	req, err := c.resumeRequest(ctx, runsPath(thread), thread, expectCheckpoint, cmd, req)
	if err != nil {
		return nil, err
	}
	return c.CreateRun(ctx, thread, req)
}

// resumeRequest checks a resume against the thread's head and returns the
// run request that acts on expectCheckpoint.
func (c *Client) resumeRequest(ctx context.Context, p, thread, expectCheckpoint string, cmd Command, req RunRequest) (RunRequest, error) {
	bad := func(format string, args ...any) error {
		return &Error{Method: http.MethodPost, Path: p, Err: fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))}
	}
	switch {
	case thread == "":
		return req, bad("Resume needs a thread id")
	case expectCheckpoint == "":
		return req, bad("Resume needs the checkpoint it acts on (the head's checkpoint id the caller saw)")
	case req.Command != nil || req.Input != nil:
		return req, bad("Resume takes its command as an argument: the request's Command and Input must be empty")
	case req.CheckpointID != "" && req.CheckpointID != expectCheckpoint:
		return req, bad("the request's CheckpointID %s is not the expected checkpoint %s", req.CheckpointID, expectCheckpoint)
	}
	st, err := c.GetState(ctx, thread, StateQuery{})
	if err != nil {
		return req, err
	}
	if head := st.Checkpoint.CheckpointID; head != expectCheckpoint {
		return req, &ThreadMovedError{Thread: thread, Expected: expectCheckpoint, Head: head, HeadNext: st.Next}
	}
	if len(st.Next) == 0 {
		return req, bad("thread %s at checkpoint %s has no node to run (it finished): nothing to resume", thread, expectCheckpoint)
	}
	// An empty command continues past a breakpoint: servers want no
	// command then (Weft refuses an empty one).
	if cmd.Resume != nil || cmd.Update != nil || cmd.Goto != nil {
		req.Command = &cmd
	}
	req.CheckpointID = expectCheckpoint
	return req, nil
}
