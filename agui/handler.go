package agui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Option configures a Handler (and Serve).
type Option func(*config)

type config struct {
	saver        checkpoint.Saver
	clock        func() time.Time
	newID        func() string
	keepAlive    time.Duration
	runOpts      []engine.RunOption
	maxBody      int64
	writeTimeout time.Duration
	out          io.Writer
	leaseTTL     time.Duration
	maxEvent     int
	limits       ConnLimits
	root         http.Handler // served at "/" by Serve (WithRoot)
	// Guard's settings (guard.go).
	origins []string
	hosts   []string
	token   string
}

// WithSaver runs every graph with s as its checkpoint saver, replacing the
// saver it was compiled with. Without it each graph must have been
// compiled with engine.WithSaver.
func WithSaver(s checkpoint.Saver) Option { return func(c *config) { c.saver = s } }

// WithClock sets the clock that stamps events (timestamp, in ms). nil
// leaves timestamps out. The default is time.Now.
func WithClock(now func() time.Time) Option { return func(c *config) { c.clock = now } }

// WithIDs sets the source of the ids the server makes up: a runId the
// client left empty, and ids of streamed messages and tool calls that have
// none. nil restores the default, random hex ids.
func WithIDs(newID func() string) Option { return func(c *config) { c.newID = newID } }

// WithKeepAlive sets how often a ": ping" comment is sent while a run is
// quiet, so proxies keep the stream open through long steps. 0 or less
// disables pings; the default is 15 seconds.
func WithKeepAlive(every time.Duration) Option { return func(c *config) { c.keepAlive = every } }

// WithRunOptions adds engine options to every run: a recursion limit,
// durability, metadata (which replaces the default {"source": "ag-ui"})…
// The thread, run id and stop check are the handler's and cannot be
// replaced.
func WithRunOptions(opts ...engine.RunOption) Option {
	return func(c *config) { c.runOpts = append(c.runOpts, opts...) }
}

// WithMaxBody limits the size of a request body in bytes (default 32 MiB;
// 0 or less keeps the default).
func WithMaxBody(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// WithWriteTimeout bounds how long writing one event may take (default one
// minute; 0 or less removes the bound). A client that stops reading without
// disconnecting is then treated as gone: the run pauses at its next step
// boundary and the thread is released.
func WithWriteTimeout(d time.Duration) Option { return func(c *config) { c.writeTimeout = d } }

// WithOutput sets where Serve prints its URLs (default os.Stdout; nil
// prints nothing). The Handler itself prints nothing.
func WithOutput(w io.Writer) Option { return func(c *config) { c.out = w } }

// WithLeaseTTL sets how long a run's claim on its thread outlives this
// process if it dies (engine.WithLeaseTTL); 0 or less keeps the default,
// checkpoint.DefaultLeaseTTL.
func WithLeaseTTL(d time.Duration) Option { return func(c *config) { c.leaseTTL = d } }

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Handler is an http.Handler serving graphs over AG-UI, one graph per path.
// A POST of a RunAgentInput to a graph's path runs the graph on thread
// threadId and streams the run as server-sent events.
//
// One run per thread at a time: a second request for a thread whose run is
// still going gets 409 Conflict, whichever process sharing the store runs
// it (the request claims the thread's lease, engine.Graph.Claim, before
// reading it; the body says who holds it and since when).
//
// A request body must be application/json: browsers send other types
// (text/plain, forms) from any page without asking the server first. Wrap
// the handler in Guard, as Serve does, to refuse other sites' pages.
//
// A client that disconnects does not cancel the run mid-step: the current
// step finishes and is checkpointed, then the run pauses, and a later
// request on the thread with no new input continues it.
type Handler struct {
	cfg    config
	agents map[string]*engine.Graph
	paths  []string

	mu   sync.Mutex
	busy map[string]bool
	// handBack gives the memory of finished runs back to the OS once no
	// run is left (see unlock); nil until a run has ended.
	handBack *time.Timer

	stopping atomic.Bool
	// Test hooks: onGone is called when a run's client is found gone, onEnd
	// when a request on a thread has ended and released the thread.
	onGone func(thread string)
	onEnd  func(thread string)
}

// NewHandler returns a Handler serving each graph at its path (the map key,
// which must start with "/"). Every graph needs a checkpoint saver, from
// engine.WithSaver at compile time or from the WithSaver option.
func NewHandler(graphs map[string]*engine.Graph, opts ...Option) (*Handler, error) {
	cfg := config{clock: time.Now, newID: randomID, keepAlive: 15 * time.Second, maxBody: 32 << 20, writeTimeout: time.Minute, maxEvent: DefaultMaxEvent}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.newID == nil {
		cfg.newID = randomID
	}
	if len(graphs) == 0 {
		return nil, errors.New("agui: no graphs to serve")
	}
	h := &Handler{cfg: cfg, agents: map[string]*engine.Graph{}, busy: map[string]bool{}}
	for path, g := range graphs {
		if g == nil {
			return nil, fmt.Errorf("agui: path %q: the graph is nil", path)
		}
		if !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("agui: path %q for graph %q must start with /", path, g.Name())
		}
		if cfg.saver != nil {
			g = g.WithSaver(cfg.saver)
		}
		if g.Saver() == nil {
			return nil, fmt.Errorf("agui: graph %q has no checkpoint saver: compile it with engine.WithSaver or pass agui.WithSaver", g.Name())
		}
		h.agents[strings.TrimSuffix(path, "/")] = g
		h.paths = append(h.paths, strings.TrimSuffix(path, "/"))
	}
	slices.Sort(h.paths)
	return h, nil
}

// Paths returns the paths the handler serves, sorted.
func (h *Handler) Paths() []string { return slices.Clone(h.paths) }

// Graph returns the graph served at path (with the handler's saver), or nil.
func (h *Handler) Graph(path string) *engine.Graph { return h.agents[strings.TrimSuffix(path, "/")] }

// StopRuns makes every run in progress, and every later one, pause at its
// next step boundary (after checkpointing), for a clean shutdown.
func (h *Handler) StopRuns() { h.stopping.Store(true) }

func (h *Handler) lock(thread string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.busy[thread] {
		return false
	}
	h.busy[thread] = true
	return true
}

func (h *Handler) unlock(thread string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.busy, thread)
	if len(h.busy) == 0 {
		// A run on large values leaves gigabytes of garbage, and an idle
		// server runs no collection for two minutes, nor gives the pages
		// back quickly after one: it stayed at 1.3 GB after two runs on a
		// 12 MB topic. A moment after the last run ends (a new run
		// starting meanwhile does not stop it; the collection is cheap
		// next to such a run), collect and return the memory.
		if h.handBack == nil {
			h.handBack = time.AfterFunc(handBackDelay, debug.FreeOSMemory)
		} else {
			h.handBack.Reset(handBackDelay)
		}
	}
}

// handBackDelay is how long after the last run ends the handler gives its
// memory back.
const handBackDelay = time.Second

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, format+"\n", args...)
}

// ServeHTTP handles one AG-UI request. Requests that cannot start a run get
// a plain-text HTTP error: 404 for an unknown path, 405 for a method other
// than POST, 415 for a body that is not application/json, 400 for a body
// that is not a RunAgentInput or has no threadId, 413 for a body over the
// limit, 409 while the thread has a run in progress (here or in another
// process) and 503 when the store cannot be reached to claim the thread.
// Everything later is reported in the stream, as RUN_ERROR.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimSuffix(r.URL.Path, "/")
	g := h.agents[path]
	if g == nil {
		httpError(w, http.StatusNotFound, "no AG-UI agent at %s; agents are served at %s", r.URL.Path, strings.Join(h.paths, ", "))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "%s %s: AG-UI runs are started with POST and a RunAgentInput JSON body", r.Method, r.URL.Path)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		httpError(w, http.StatusUnsupportedMediaType, "the body must be a RunAgentInput sent as Content-Type: application/json, not %q", r.Header.Get("Content-Type"))
		return
	}
	var in RunAgentInput
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, h.cfg.maxBody))
	if err := dec.Decode(&in); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, "request body over %d bytes", tooBig.Limit)
			return
		}
		httpError(w, http.StatusBadRequest, "malformed RunAgentInput: %v", err)
		return
	}
	if dec.More() {
		httpError(w, http.StatusBadRequest, "malformed RunAgentInput: extra data after the JSON object")
		return
	}
	if in.ThreadID == "" {
		httpError(w, http.StatusBadRequest, "RunAgentInput has no threadId: every run belongs to a thread")
		return
	}
	if in.RunID == "" {
		in.RunID = h.cfg.newID()
	}
	if !h.lock(in.ThreadID) {
		httpError(w, http.StatusConflict, "thread %q already has a run in progress; send the next request after its RUN_FINISHED or RUN_ERROR", in.ThreadID)
		return
	}
	defer func() {
		h.unlock(in.ThreadID)
		if h.onEnd != nil {
			h.onEnd(in.ThreadID)
		}
	}()
	// The run must not die with the request: a disconnect pauses it at the
	// next step boundary instead (see stop).
	ctx := context.WithoutCancel(r.Context())
	// Claim the thread across processes before reading it: what plan sees
	// is what the run starts from.
	claim, err := g.Claim(ctx, engine.WithThread(in.ThreadID), engine.WithLeaseTTL(h.cfg.leaseTTL),
		engine.WithLeaseOwner(engine.DefaultLeaseOwner()+" AG-UI run "+in.RunID))
	switch {
	case errors.Is(err, checkpoint.ErrLeaseHeld):
		httpError(w, http.StatusConflict, "%v; send the next request after that run ends", err)
		return
	case err != nil:
		httpError(w, http.StatusServiceUnavailable, "claiming thread %q: %v", in.ThreadID, err)
		return
	}
	defer claim.Release()

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)

	sse := newSSEWriter(w, h.cfg.clock)
	sse.timeout, sse.max = h.cfg.writeTimeout, h.cfg.maxEvent
	defer sse.close()
	if h.onGone != nil {
		sse.onGone = func() { h.onGone(in.ThreadID) }
	}
	sse.keepAlive(h.cfg.keepAlive)
	defer sse.stopKeepAlive()
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-r.Context().Done():
			sse.markGone(fmt.Errorf("client gone: %w", context.Cause(r.Context())))
		case <-finished:
		}
	}()
	h.run(ctx, g, &in, sse, claim)
	sse.finish()
}

// runError is a failure reported as RUN_ERROR.
type runError struct {
	code string
	err  error
}

func (e *runError) Error() string { return e.err.Error() }

func failf(code, format string, args ...any) *runError {
	return &runError{code, fmt.Errorf(format, args...)}
}

// run streams one run of g for in.
func (h *Handler) run(ctx context.Context, g *engine.Graph, in *RunAgentInput, sse *sseWriter, claim *engine.Claim) {
	ids := wireIDs{}
	emit := func(ev Event) { sse.write(ids.shorten(ev)) }
	fail := func(e *runError) { emit(&RunError{Message: e.err.Error(), Code: e.code}) }
	emit(&RunStarted{ThreadID: in.ThreadID, RunID: in.RunID, ParentRunID: in.ParentRunID})

	thread := engine.WithThread(in.ThreadID)
	snap, err := g.GetState(ctx, thread)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		snap = nil
	case err != nil:
		// A thread another graph wrote does not load; say so plainly.
		if tp, gerr := g.Saver().Get(ctx, checkpoint.Ref{ThreadID: in.ThreadID}); gerr == nil {
			if owner, _ := tp.Metadata.Extra[engine.MetaGraph].(string); owner != "" && owner != g.Name() {
				fail(failf(CodeWrongGraph, "thread %q belongs to graph %q, not %q: use a new threadId", in.ThreadID, owner, g.Name()))
				return
			}
		}
		fail(failf(CodeStore, "loading thread %q: %v", in.ThreadID, err))
		return
	}
	if snap != nil {
		if owner, _ := snap.Metadata.Extra[engine.MetaGraph].(string); owner != "" && owner != g.Name() {
			fail(failf(CodeWrongGraph, "thread %q belongs to graph %q, not %q: use a new threadId", in.ThreadID, owner, g.Name()))
			return
		}
	}
	msgChan := MessagesChannel(g)
	var known []string
	if snap != nil && msgChan != "" {
		msgs, _ := snap.Values[msgChan].([]engine.Message)
		for _, m := range msgs {
			known = append(known, m.ID)
		}
	}
	input, rerr := plan(g, in, snap, msgChan)
	if rerr != nil {
		fail(rerr)
		return
	}
	mapper := NewMapper(g, emit, h.cfg.newID, known)
	mapper.maxEvent = h.cfg.maxEvent
	if input.run {
		stop := func() bool { return h.stopping.Load() || sse.gone() || sse.tooLarge() != nil }
		opts := []engine.RunOption{engine.WithMetadata(map[string]any{"source": "ag-ui"})}
		opts = append(opts, h.cfg.runOpts...)
		opts = append(opts, thread, engine.WithRunID(in.RunID), engine.WithStopCheck(stop), engine.WithClaim(claim))
		var runErr error
		for ev, err := range g.Stream(ctx, input.input, StreamModes, opts...) {
			if err != nil {
				runErr = err
				break
			}
			mapper.Handle(ev)
		}
		if runErr != nil {
			fail(&runError{CodeRunFailed, runErr})
			return
		}
		if snap, err = g.GetState(ctx, thread); err != nil {
			fail(failf(CodeStore, "reading thread %q after the run: %v", in.ThreadID, err))
			return
		}
	}
	h.tail(mapper, in, snap, msgChan, emit)
	if snap != nil && sse.tooLarge() != nil {
		// The client will not see the interrupts' outcome: the RUN_ERROR
		// names them, so that it can still answer them by id.
		for _, it := range interruptsToAGUI(snap.OpenInterrupts()) {
			sse.pending = append(sse.pending, it.ID)
		}
	}
}

// tail closes the run: everything still open, the final state and
// messages, and RUN_FINISHED with the outcome (after one CUSTOM
// on_interrupt per interrupt, for clients that predate outcomes).
func (h *Handler) tail(m *Mapper, in *RunAgentInput, snap *engine.Snapshot, msgChan string, emit func(Event)) {
	m.Close()
	var vals engine.Values
	var pending []engine.PendingInterrupt
	done := true
	if snap != nil {
		vals, pending, done = snap.Values, snap.OpenInterrupts(), snap.Done()
	}
	ints := interruptsToAGUI(pending)
	m.State(vals, len(ints) > 0)
	if msgChan != "" {
		msgs, _ := vals[msgChan].([]engine.Message)
		m.Messages(msgs)
	} else {
		// The graph keeps no conversation: hand the client's back unchanged.
		msgs := in.Messages
		if msgs == nil {
			msgs = []Message{}
		}
		emit(&MessagesSnapshot{Messages: msgs})
	}
	fin := &RunFinished{ThreadID: in.ThreadID, RunID: in.RunID}
	switch {
	case len(ints) > 0:
		payload := map[string]any{}
		for _, p := range pending {
			if _, ok := payload[p.ID]; !ok {
				payload[p.ID] = p.Value
			}
		}
		for _, it := range ints {
			emit(&Custom{Name: "on_interrupt", Value: legacyInterruptValue(payload[it.ID])})
		}
		fin.Outcome = &Outcome{Type: "interrupt", Interrupts: ints}
	case done:
		fin.Outcome = &Outcome{Type: "success"}
	}
	emit(fin)
}

// runInput is what a request asks of the engine: run is false when it only
// reports the thread's current state (its interrupts, or its finished
// result).
type runInput struct {
	input engine.Input
	run   bool
}

// plan turns a request into engine input:
//   - resume[] (or the legacy forwardedProps.command.resume) answers the
//     pending interrupts, all of them, by id;
//   - otherwise, on a thread waiting at interrupts, nothing runs and the
//     interrupts are reported again;
//   - otherwise the messages the thread does not have yet, and state keys
//     whose values differ from the thread's, are the input of a new run;
//   - with nothing new, a thread with tasks left continues (a paused one,
//     or one whose run stopped after some of a step's tasks finished: Next
//     is then empty, yet the step is not done) and a finished one is
//     reported as it is.
func plan(g *engine.Graph, in *RunAgentInput, snap *engine.Snapshot, msgChan string) (runInput, *runError) {
	edits, rerr := edits(g, in, snap, msgChan)
	if rerr != nil {
		return runInput{}, rerr
	}
	answers, hasResume, rerr := resumeAnswers(in, snap)
	if rerr != nil {
		return runInput{}, rerr
	}
	// Where the thread stands is the engine's call (engine.StatusOf), so AG-UI
	// agrees with the studio and weft threads. The run's own claim comes
	// later; no lease is asked about here.
	var status engine.ThreadStatus
	if snap != nil {
		status = engine.StatusOf(snap, nil)
	}
	switch {
	case hasResume:
		return runInput{input: engine.Command{ResumeByID: answers, Update: edits}, run: true}, nil
	case status == engine.StatusWaiting:
		return runInput{}, nil
	case snap == nil:
		vals := engine.Values{}
		for _, w := range edits {
			vals[w.Channel] = w.Value
		}
		return runInput{input: vals, run: true}, nil
	case len(edits) > 0:
		return runInput{input: edits, run: true}, nil
	case status != engine.StatusDone:
		return runInput{input: nil, run: true}, nil
	}
	return runInput{}, nil
}

// edits returns the writes a request makes: new messages appended to the
// messages channel, and state keys replaced where the client's value
// differs from the thread's. Keys that are not channels are ignored.
func edits(g *engine.Graph, in *RunAgentInput, snap *engine.Snapshot, msgChan string) (engine.Update, *runError) {
	var cur engine.Values
	if snap != nil {
		cur = snap.Values
	}
	var up engine.Update
	if st := strings.TrimSpace(string(in.State)); st != "" && st != "null" {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(in.State, &obj); err != nil {
			return nil, failf(CodeInvalidInput, "RunAgentInput.state must be a JSON object: %v", err)
		}
		chans := map[string]bool{}
		for _, c := range g.Channels() {
			chans[c.Name] = c.Kind != "untracked" && c.Name != msgChan
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if !chans[k] || isOmitted(obj[k]) {
				continue // not state, or a value too large to send that the client hands back
			}
			v, err := g.DecodeValue(k, obj[k])
			if err != nil {
				return nil, failf(CodeInvalidInput, "RunAgentInput.state key %q: %v", k, err)
			}
			if old, ok := cur[k]; ok {
				a, _ := json.Marshal(old)
				b, _ := json.Marshal(v)
				if string(a) == string(b) {
					continue
				}
			}
			w, err := g.Replace(k, v)
			if err != nil {
				return nil, failf(CodeInvalidInput, "RunAgentInput.state key %q: %v", k, err)
			}
			up = append(up, w)
		}
	}
	if msgChan != "" {
		have := map[string]bool{}
		if msgs, ok := cur[msgChan].([]engine.Message); ok {
			for _, m := range msgs {
				have[m.ID], have[wireID(m.ID)] = true, true // the client knows long ids by their short form
			}
		}
		var added []engine.Message
		for _, am := range in.Messages {
			if am.ID != "" && have[am.ID] {
				continue
			}
			em, ok, err := FromAGUIMessage(am)
			if err != nil {
				return nil, failf(CodeInvalidInput, "RunAgentInput.messages: %v", err)
			}
			if ok {
				added = append(added, em)
			}
		}
		if len(added) > 0 {
			w, err := g.Write(msgChan, added)
			if err != nil {
				return nil, failf(CodeInvalidInput, "RunAgentInput.messages: %v", err)
			}
			up = append(up, w)
		}
	}
	return up, nil
}

// cancelledAnswer is what a graph receives for a resume entry with status
// "cancelled", as the LangGraph integration passes it.
func cancelledAnswer(id string) map[string]any {
	return map[string]any{"__agui_cancelled__": true, "interrupt_id": id}
}

// resumeAnswers checks resume[] (or the legacy forwardedProps.command.resume)
// against the thread's pending interrupts and returns the answers by id.
// Every pending interrupt must be answered, and only those.
func resumeAnswers(in *RunAgentInput, snap *engine.Snapshot) (map[string]any, bool, *runError) {
	legacy, hasLegacy, err := legacyResume(in.ForwardedProps)
	if err != nil {
		return nil, false, failf(CodeInvalidResume, "%v", err)
	}
	if len(in.Resume) == 0 && !hasLegacy {
		return nil, false, nil
	}
	var pending []string
	if snap != nil {
		for _, p := range snap.OpenInterrupts() {
			if !slices.Contains(pending, p.ID) {
				pending = append(pending, p.ID)
			}
		}
	}
	if len(pending) == 0 {
		return nil, false, failf(CodeInvalidResume, "thread %q has no pending interrupts to resume", in.ThreadID)
	}
	answers := map[string]any{}
	if len(in.Resume) == 0 {
		if len(pending) > 1 {
			return nil, false, failf(CodeInvalidResume, "forwardedProps.command.resume answers one interrupt but thread %q has %d pending (%s): answer each with resume[]",
				in.ThreadID, len(pending), strings.Join(pending, ", "))
		}
		answers[pending[0]] = legacy
		return answers, true, nil
	}
	for i, r := range in.Resume {
		switch {
		case r.InterruptID == "":
			return nil, false, failf(CodeInvalidResume, "resume[%d] has no interruptId", i)
		case !slices.Contains(pending, r.InterruptID):
			return nil, false, failf(CodeInvalidResume, "resume[%d] names interrupt %q, which is not pending on thread %q (pending: %s)",
				i, r.InterruptID, in.ThreadID, strings.Join(pending, ", "))
		}
		if _, dup := answers[r.InterruptID]; dup {
			return nil, false, failf(CodeInvalidResume, "resume[%d] answers interrupt %q a second time", i, r.InterruptID)
		}
		switch r.Status {
		case "resolved":
			var v any
			if len(r.Payload) > 0 {
				if err := json.Unmarshal(r.Payload, &v); err != nil {
					return nil, false, failf(CodeInvalidResume, "resume[%d].payload: %v", i, err)
				}
			}
			answers[r.InterruptID] = v
		case "cancelled":
			answers[r.InterruptID] = cancelledAnswer(r.InterruptID)
		default:
			return nil, false, failf(CodeInvalidResume, "resume[%d].status is %q; want \"resolved\" or \"cancelled\"", i, r.Status)
		}
	}
	var missing []string
	for _, id := range pending {
		if _, ok := answers[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, false, failf(CodeInvalidResume, "resume does not answer pending interrupt(s) %s of thread %q: every pending interrupt needs an entry",
			strings.Join(missing, ", "), in.ThreadID)
	}
	return answers, true, nil
}

// legacyResume reads forwardedProps.command.resume. A string that holds
// JSON is decoded, as the LangGraph integration does.
func legacyResume(fp json.RawMessage) (any, bool, error) {
	if len(fp) == 0 {
		return nil, false, nil
	}
	var props struct {
		Command *struct {
			Resume json.RawMessage `json:"resume"`
		} `json:"command"`
	}
	if err := json.Unmarshal(fp, &props); err != nil {
		// forwardedProps is free-form; only a command object matters here.
		return nil, false, nil
	}
	if props.Command == nil || len(props.Command.Resume) == 0 || string(props.Command.Resume) == "null" {
		return nil, false, nil
	}
	var v any
	if err := json.Unmarshal(props.Command.Resume, &v); err != nil {
		return nil, false, fmt.Errorf("forwardedProps.command.resume: %v", err)
	}
	if s, ok := v.(string); ok {
		var inner any
		if json.Unmarshal([]byte(s), &inner) == nil {
			v = inner
		}
	}
	return v, true, nil
}
