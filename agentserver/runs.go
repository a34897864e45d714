package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// runRec is a run this process started.
type runRec struct {
	id, thread, assistant string
	created               time.Time
	metadata              map[string]any
	multitask             string

	mu      sync.Mutex
	status  string // pending, running, success, interrupted, error
	updated time.Time
	result  any       // the last values chunk, what join and wait answer
	runErr  any       // the error event's data when the run failed
	events  []logged  // every event so far, for late joiners (Last-Event-ID)
	wake    chan bool // closed and replaced when an event is logged
	done    chan struct{}

	// stop asks the run to stop at its next step boundary: a cancel, a
	// newer run under multitask_strategy interrupt, or its streaming
	// client gone.
	stop atomic.Bool
	// abort cancels the running node's context as well: a cancel or a
	// newer run under multitask_strategy interrupt stops the run at once,
	// as LangGraph aborts its node, and the step it was in stores nothing.
	abort context.CancelFunc
	// rollback (guarded by mu) asks that the run, once stopped, be
	// deleted with the checkpoints it wrote and the writes it added to
	// the checkpoints it started from (starts, recorded before it ran);
	// ending is set when the run is past the point where it can be asked.
	rollback, ending bool
	starts           []checkpoint.RunStart
	startsErr        error // why starts could not be recorded; a rollback then deletes nothing
}

// askRollback asks the run to stop and be rolled back; false when it has
// already ended (or is ending).
func (rr *runRec) askRollback() bool {
	rr.mu.Lock()
	if rr.ending {
		rr.mu.Unlock()
		return false
	}
	rr.rollback = true
	rr.mu.Unlock()
	rr.interrupt()
	return true
}

// interrupt stops the run now: its node's context is cancelled and it
// ends with status interrupted.
func (rr *runRec) interrupt() {
	rr.stop.Store(true)
	rr.mu.Lock()
	abort := rr.abort
	rr.mu.Unlock()
	if abort != nil {
		abort()
	}
}

// logged is one event of a run, encoded.
type logged struct {
	name string
	data []byte
}

// log records an event and wakes whoever follows the run.
func (rr *runRec) log(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		name = "error"
		b, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
	}
	rr.mu.Lock()
	rr.events = append(rr.events, logged{name, b})
	if name == "error" {
		rr.runErr = data
	}
	close(rr.wake)
	rr.wake = make(chan bool)
	rr.mu.Unlock()
}

// follow passes the run's events from index from on to fn, waiting for
// more until the run ends or ctx does; fn's error ends it too.
func (rr *runRec) follow(ctx context.Context, from int, fn func(id int, e logged) error) {
	for {
		rr.mu.Lock()
		evs, wake := rr.events[min(from, len(rr.events)):], rr.wake
		rr.mu.Unlock()
		for i, e := range evs {
			if fn(from+i, e) != nil {
				return
			}
		}
		from += len(evs)
		if len(evs) > 0 {
			continue // more may have come meanwhile
		}
		select {
		case <-wake:
		case <-rr.done:
			rr.mu.Lock()
			n := len(rr.events)
			rr.mu.Unlock()
			if from >= n {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (rr *runRec) finished() bool {
	select {
	case <-rr.done:
		return true
	default:
		return false
	}
}

func (rr *runRec) wire() map[string]any {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	return rr.wireLocked()
}

func (rr *runRec) wireLocked() map[string]any {
	return map[string]any{"run_id": rr.id, "thread_id": rr.thread, "assistant_id": rr.assistant,
		"created_at": rr.created.Format(timeFormat), "updated_at": rr.updated.Format(timeFormat),
		"status": rr.status, "metadata": rr.metadata, "kwargs": map[string]any{}, "multitask_strategy": rr.multitask}
}

// modes maps stream mode names to engine modes. messages-tuple is the
// engine's message stream as (chunk, metadata) pairs.
var modes = map[string]engine.StreamMode{
	"values": engine.ModeValues, "updates": engine.ModeUpdates, "debug": engine.ModeDebug, "tasks": engine.ModeTasks,
	"checkpoints": engine.ModeCheckpoints, "custom": engine.ModeCustom, "messages-tuple": engine.ModeMessages,
	// Studio's messages mode: accumulated chunks, each message complete
	// once its node's update has it, and the values it implies.
	"messages": engine.ModeMessages | engine.ModeUpdates | engine.ModeValues,
	// LangChain's stream events, made from the task events (chainEvents).
	"events": engine.ModeTasks | engine.ModeValues,
}

// runBody is a run request (LangGraph's RunCreate).
type runBody struct {
	AssistantID       string          `json:"assistant_id"`
	Input             json.RawMessage `json:"input"`
	Command           json.RawMessage `json:"command"`
	StreamMode        json.RawMessage `json:"stream_mode"`
	StreamSubgraphs   bool            `json:"stream_subgraphs"`
	InterruptBefore   json.RawMessage `json:"interrupt_before"`
	InterruptAfter    json.RawMessage `json:"interrupt_after"`
	CheckpointID      string          `json:"checkpoint_id"`
	Checkpoint        *checkpointSel  `json:"checkpoint"`
	Metadata          map[string]any  `json:"metadata"`
	MultitaskStrategy string          `json:"multitask_strategy"`
	IfNotExists       string          `json:"if_not_exists"`
	OnCompletion      string          `json:"on_completion"`
	OnDisconnect      string          `json:"on_disconnect"`
	Config            struct {
		Configurable   map[string]any `json:"configurable"`
		RecursionLimit int            `json:"recursion_limit"`
	} `json:"config"`
}

// Configurable is a run's config.configurable as the request gave it,
// passed to every node of the run (engine.WithRunContext), which reads it
// with engine.RunContext[agentserver.Configurable](ctx), as a LangGraph
// node reads config.configurable. A run whose request has none has no run
// context. It is not saved: each run, a resume included, gives its own.
type Configurable map[string]any

// prepared is a run checked and ready to start.
type prepared struct {
	g                *engine.Graph
	thread           string
	stateless        bool
	keepOnDisconnect bool // on_disconnect "continue": the run outlives its client
	keepThread       bool // on_completion "keep": a stateless run's thread stays
	create           bool // the thread is new (if_not_exists "create"): record it when the run starts
	input            engine.Input
	opts             []engine.RunOption
	modes            []string       // the wire names asked for
	taskMeta         map[string]any // what a task's start event names as its metadata (LangGraph.js)
	rawInput         any            // the input or command as the request gave it (the events mode's first event)
	subgraphs        bool
	rec              *runRec
	claim            *engine.Claim
	from             string // the checkpoint the request named to start from; "" for the thread's head
}

// httpErr is a refused request: its status and sentence.
type httpErr struct {
	code int
	msg  string
}

func refuse(code int, format string, args ...any) *httpErr {
	return &httpErr{code, fmt.Sprintf(format, args...)}
}

// busy is the refusal of a second run on a thread (multitask_strategy
// reject), with LangGraph's status code.
func busy(tid string) *httpErr {
	return refuse(http.StatusUnprocessableEntity, "Thread %s is busy with another run (multitask_strategy reject): wait for it, or join it", tid)
}

// names reads a list of names: a string ("*" for every node) or an array.
func names(raw json.RawMessage, g *engine.Graph, what string) ([]string, *httpErr) {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "*" {
			return g.Nodes(), nil
		}
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, "%s must be a name, \"*\" or a list of names", what)
	}
	return list, nil
}

// prepare checks a run request and claims its thread; on failure nothing
// is stored and the error says why, with LangGraph's status code.
func (h *Handler) prepare(ctx context.Context, tid string, body runBody) (*prepared, *httpErr) {
	p := &prepared{thread: tid, subgraphs: body.StreamSubgraphs}
	if body.AssistantID == "" {
		return nil, refuse(http.StatusUnprocessableEntity, "assistant_id is required: one of %v", h.ids)
	}
	g := h.graphs[body.AssistantID]
	if g == nil {
		return nil, refuse(http.StatusNotFound, "Assistant %q not found: this server serves %v", body.AssistantID, h.ids)
	}
	p.g = g
	strategy := body.MultitaskStrategy
	switch strategy {
	case "":
		strategy = "reject"
	case "reject", "interrupt", "enqueue":
	case "rollback":
		if _, ok := h.saver.(checkpoint.RunDeleter); !ok {
			return nil, refuse(http.StatusNotImplemented, "multitask_strategy rollback needs a checkpoint store that can delete one run (checkpoint.RunDeleter), which %T cannot; use interrupt, enqueue or reject", h.saver)
		}
	default:
		return nil, refuse(http.StatusUnprocessableEntity, "multitask_strategy must be reject, interrupt, rollback or enqueue, not %q", strategy)
	}
	switch body.OnCompletion {
	case "", "delete":
	case "keep":
		p.keepThread = true
	default:
		return nil, refuse(http.StatusUnprocessableEntity, "on_completion must be delete or keep, not %q", body.OnCompletion)
	}
	switch body.OnDisconnect {
	case "", "cancel":
	case "continue":
		p.keepOnDisconnect = true
	default:
		return nil, refuse(http.StatusUnprocessableEntity, "on_disconnect must be cancel or continue, not %q", body.OnDisconnect)
	}
	// Stream modes.
	p.modes = []string{"values"}
	if s := strings.TrimSpace(string(body.StreamMode)); s != "" && s != "null" {
		var one string
		if json.Unmarshal(body.StreamMode, &one) == nil {
			p.modes = []string{one}
		} else if err := json.Unmarshal(body.StreamMode, &p.modes); err != nil {
			return nil, refuse(http.StatusUnprocessableEntity, "stream_mode must be a mode or a list of modes")
		}
	}
	for _, m := range p.modes {
		if _, ok := modes[m]; !ok {
			return nil, refuse(http.StatusUnprocessableEntity, "stream_mode %q is not one this server streams: %v", m, slices.Sorted(maps.Keys(modes)))
		}
	}
	// The thread.
	var snap *engine.Snapshot
	if tid == "" {
		p.stateless, p.thread = true, uuid.NewString()
	} else {
		if strategy != "reject" && !h.waitFree(ctx, tid, strategy) {
			return nil, refuse(http.StatusServiceUnavailable, "the request ended while waiting for thread %s to be free", tid)
		}
		t, ok, err := h.findThread(ctx, tid)
		switch {
		case err != nil:
			return nil, refuse(http.StatusInternalServerError, "reading thread %s: %v", tid, err)
		case !ok && body.IfNotExists != "create":
			return nil, refuse(http.StatusNotFound, "Thread with ID %s not found", tid)
		case t.graph != nil && t.graph != g:
			return nil, refuse(http.StatusConflict, "Thread %s holds a run of assistant %s, not %s: use a new thread", tid, h.assistantID(t.graph), body.AssistantID)
		case t.busy && strategy == "reject":
			return nil, busy(tid)
		}
		p.create = !ok
		snap = t.snap
	}
	cid := body.CheckpointID
	if body.Checkpoint != nil && body.Checkpoint.ID != "" {
		cid = body.Checkpoint.ID
	}
	if c, _ := body.Config.Configurable["checkpoint_id"].(string); c != "" && cid == "" {
		cid = c
	}
	if cid != "" {
		if snap == nil {
			return nil, refuse(http.StatusNotFound, "Checkpoint %s not found: thread %s has no checkpoints", cid, p.thread)
		}
		s, err := g.GetState(ctx, engine.WithThread(p.thread), engine.WithCheckpoint(cid))
		if err != nil {
			return nil, refuse(http.StatusNotFound, "Checkpoint %s not found in thread %s", cid, p.thread)
		}
		snap = s
		p.opts = append(p.opts, engine.WithCheckpoint(cid))
		p.from = cid
	}
	// Input or command.
	hasInput := len(body.Input) > 0 && strings.TrimSpace(string(body.Input)) != "null"
	hasCommand := len(body.Command) > 0 && strings.TrimSpace(string(body.Command)) != "null"
	switch {
	case hasInput && hasCommand:
		return nil, refuse(http.StatusBadRequest, "a run takes input or command, not both")
	case hasCommand:
		cmd, e := h.command(g, body.Command, snap)
		if e != nil {
			return nil, e
		}
		p.input = cmd
		var raw map[string]any
		_ = json.Unmarshal(body.Command, &raw) // h.command has read it
		p.rawInput = map[string]any{"lg_name": "Command", "goto": []any{}}
		maps.Copy(p.rawInput.(map[string]any), raw)
	case hasInput && h.isEntrypoint(g):
		// An entrypoint takes the input as is, as LangGraph's server
		// passes it: a number, a string, a list or an object.
		_ = json.Unmarshal(body.Input, &p.rawInput)
		vals, err := entrypointInput(g, body.Input)
		if err != nil {
			return nil, refuse(http.StatusBadRequest, "input of entrypoint %s: %v", h.assistantID(g), err)
		}
		p.input = vals
	case hasInput:
		_ = json.Unmarshal(body.Input, &p.rawInput) // decodeWrites reads it next
		up, err := decodeWrites(g, body.Input)
		if err != nil {
			return nil, refuse(http.StatusBadRequest, "input: %v", err)
		}
		vals := engine.Values{}
		for _, wr := range up {
			vals[wr.Channel] = wr.Value
		}
		p.input = vals
	}
	before, e := names(body.InterruptBefore, g, "interrupt_before")
	if e != nil {
		return nil, e
	}
	after, e := names(body.InterruptAfter, g, "interrupt_after")
	if e != nil {
		return nil, e
	}
	if before != nil {
		p.opts = append(p.opts, engine.BreakBefore(before...))
	}
	if after != nil {
		p.opts = append(p.opts, engine.BreakAfter(after...))
	}
	if body.Config.RecursionLimit > 0 {
		p.opts = append(p.opts, engine.WithRecursionLimit(body.Config.RecursionLimit))
	}
	if body.Config.Configurable != nil {
		p.opts = append(p.opts, engine.WithRunContext(Configurable(body.Config.Configurable)))
	}
	// Claim the thread across processes before anything runs.
	runID := uuid.NewString()
	// The claim outlives the request: a background run goes on after it.
	claim, err := g.Claim(context.WithoutCancel(ctx), engine.WithThread(p.thread), engine.WithLeaseTTL(h.leaseTTL),
		engine.WithLeaseOwner(engine.DefaultLeaseOwner()+" Agent Server run "+runID))
	// Under interrupt, rollback or enqueue a run of another process
	// sharing the store is waited for, neither stopped nor rolled back
	// (this process's runs were, above): only its own process holds it.
	for wait := time.Now().Add(leaseWait); errors.Is(err, checkpoint.ErrLeaseHeld) && strategy != "reject" && time.Now().Before(wait) && ctx.Err() == nil; {
		time.Sleep(100 * time.Millisecond)
		claim, err = g.Claim(context.WithoutCancel(ctx), engine.WithThread(p.thread), engine.WithLeaseTTL(h.leaseTTL),
			engine.WithLeaseOwner(engine.DefaultLeaseOwner()+" Agent Server run "+runID))
	}
	switch {
	case errors.Is(err, checkpoint.ErrLeaseHeld):
		return nil, refuse(http.StatusUnprocessableEntity, "Thread %s is busy with another run (multitask_strategy reject): %v", p.thread, err)
	case err != nil:
		return nil, refuse(http.StatusServiceUnavailable, "claiming thread %s: %v", p.thread, err)
	}
	p.claim = claim
	now := h.now().UTC()
	md := maps.Clone(body.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	p.rec = &runRec{id: runID, thread: p.thread, assistant: body.AssistantID, created: now, updated: now,
		metadata: md, multitask: strategy, status: "pending", done: make(chan struct{}), wake: make(chan bool)}
	p.rec.log("metadata", map[string]any{"run_id": runID, "attempt": 1})
	if !p.stateless {
		// The lease guards processes; this guards a store without leases
		// and two requests of this process that both saw the thread idle.
		h.mu.Lock()
		for _, rr := range h.runs {
			if rr.thread == p.thread && !rr.finished() {
				h.mu.Unlock()
				claim.Release()
				return nil, busy(p.thread)
			}
		}
		h.runs[runID] = p.rec
		if p.create {
			h.threads[p.thread] = &threadRec{ID: p.thread, Created: now, Updated: now, Metadata: map[string]any{}}
		}
		h.mu.Unlock()
	}
	meta := h.runMetadata(p.thread, g)
	maps.Copy(meta, md)
	p.taskMeta = maps.Clone(meta)
	p.taskMeta["run_id"], p.taskMeta["thread_id"] = runID, p.thread
	p.opts = append(p.opts, engine.WithThread(p.thread), engine.WithRunID(runID), engine.WithClaim(claim), engine.WithMetadata(meta))
	return p, nil
}

// leaseWait bounds how long a run under multitask_strategy interrupt or
// enqueue waits for another process's run on its thread.
const leaseWait = time.Minute

// waitFree waits until this process runs nothing on thread tid, first
// asking its runs to stop (strategy interrupt) or to stop and be rolled
// back (strategy rollback); false when ctx ended first.
func (h *Handler) waitFree(ctx context.Context, tid, strategy string) bool {
	for {
		h.mu.Lock()
		var busy []*runRec
		for _, rr := range h.runs {
			if rr.thread == tid && !rr.finished() {
				busy = append(busy, rr)
			}
		}
		h.mu.Unlock()
		if len(busy) == 0 {
			return true
		}
		for _, rr := range busy {
			switch strategy {
			case "interrupt":
				rr.interrupt()
			case "rollback":
				rr.askRollback()
			}
			select {
			case <-rr.done:
			case <-ctx.Done():
				return false
			}
		}
	}
}

// runMetadata is the checkpoint metadata of a run on thread: the thread's
// metadata (so the store finds the thread by it) and the assistant.
func (h *Handler) runMetadata(tid string, g *engine.Graph) map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	md := map[string]any{"graph_id": h.assistantID(g), "assistant_id": h.assistantID(g)}
	if rec := h.threads[tid]; rec != nil && len(rec.Metadata) > 0 {
		md[metaThreadKey] = maps.Clone(rec.Metadata)
	}
	return md
}

// touch marks a thread updated now.
func (h *Handler) touch(tid string) {
	h.mu.Lock()
	if rec := h.threads[tid]; rec != nil {
		rec.Updated = h.now().UTC()
	}
	h.mu.Unlock()
}

// command reads a Command: resume (a value for the one waiting interrupt,
// or a map from interrupt id to value), update and goto.
func (h *Handler) command(g *engine.Graph, raw json.RawMessage, snap *engine.Snapshot) (engine.Command, *httpErr) {
	var c struct {
		Resume json.RawMessage `json:"resume"`
		Update json.RawMessage `json:"update"`
		Goto   json.RawMessage `json:"goto"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return engine.Command{}, refuse(http.StatusUnprocessableEntity, "command must be an object with resume, update or goto: %v", err)
	}
	var cmd engine.Command
	has := func(r json.RawMessage) bool { return len(r) > 0 && strings.TrimSpace(string(r)) != "null" }
	if !has(c.Resume) && !has(c.Update) && !has(c.Goto) {
		return cmd, refuse(http.StatusUnprocessableEntity, "command has none of resume, update or goto")
	}
	if has(c.Resume) {
		var pending []engine.PendingInterrupt
		if snap != nil {
			pending = snap.OpenInterrupts()
		}
		if len(pending) == 0 {
			return cmd, refuse(http.StatusBadRequest, "Cannot resume: the thread has no interrupt waiting for an answer")
		}
		var v any
		if err := json.Unmarshal(c.Resume, &v); err != nil {
			return cmd, refuse(http.StatusUnprocessableEntity, "command.resume: %v", err)
		}
		byID, isMap := v.(map[string]any)
		ids := map[string]bool{}
		for _, it := range pending {
			ids[it.ID] = true
		}
		allIDs := isMap && len(byID) > 0
		for k := range byID {
			allIDs = allIDs && ids[k]
		}
		switch {
		case allIDs:
			cmd.ResumeByID = byID
		case len(ids) > 1:
			return cmd, refuse(http.StatusBadRequest, "Cannot resume: %d interrupts are waiting; answer them by id with {\"resume\": {\"<interrupt id>\": value}}", len(ids))
		default:
			cmd.Resume = v
		}
	}
	if has(c.Update) {
		up, err := decodeWrites(g, c.Update)
		if err != nil {
			return cmd, refuse(http.StatusBadRequest, "command.update: %v", err)
		}
		cmd.Update = up
	}
	if has(c.Goto) {
		gotos, e := names(c.Goto, g, "command.goto")
		if e != nil {
			return cmd, e
		}
		for _, n := range gotos {
			if !slices.Contains(g.Nodes(), n) && n != engine.END {
				return cmd, refuse(http.StatusBadRequest, "command.goto: %q is not a node of graph %s", n, h.assistantID(g))
			}
		}
		cmd.Goto = gotos
	}
	return cmd, nil
}

// readRun decodes a run request and prepares it, answering a refusal.
func (h *Handler) readRun(w http.ResponseWriter, r *http.Request) (*prepared, bool) {
	var body runBody
	if !decode(w, r, &body) {
		return nil, false
	}
	p, e := h.prepare(r.Context(), r.PathValue("tid"), body)
	if e != nil {
		fail(w, e.code, "%s", e.msg)
		return nil, false
	}
	return p, true
}

// location is the run's Content-Location, which gives clients its id
// before any event.
func (p *prepared) location() string {
	if p.stateless {
		return "/runs/" + p.rec.id
	}
	return "/threads/" + p.thread + "/runs/" + p.rec.id
}

// execute runs p, logging each event in its record, and ends the record
// with the run's outcome. The run does not die with a request: it stops at
// a step boundary when asked to (runRec.stop).
func (h *Handler) execute(ctx context.Context, p *prepared) {
	emit := p.rec.log
	gone := func() bool { return p.rec.stop.Load() || h.stopping.Load() }
	rr := p.rec
	// The run's nodes get runCtx, which a cancel ends; what follows the
	// run (its state, a stateless run's deletion) keeps ctx.
	runCtx, abort := context.WithCancel(ctx)
	defer abort()
	rr.mu.Lock()
	rr.status, rr.abort = "running", abort
	rr.mu.Unlock()
	if rr.stop.Load() { // interrupted before it started
		abort()
	}
	var mask engine.StreamMode = engine.ModeValues // wait and join answer the last values chunk
	for _, m := range p.modes {
		mask |= modes[m]
	}
	want := map[string]bool{}
	for _, m := range p.modes {
		want[m] = true
	}
	var studio *studioMessages
	if want["messages"] {
		want["values"] = true
		studio = &studioMessages{partial: map[string]*engine.Message{}, complete: map[string]bool{}}
		if vals, ok := p.input.(engine.Values); ok {
			for _, v := range vals {
				studio.completeAll(v, emit)
			}
		}
	}
	var chains *chainEvents
	if want["events"] {
		chains = newChainEvents(rr.id, p.taskMeta)
		chains.start(p.rawInput, emit)
	}
	if _, ok := h.saver.(checkpoint.RunDeleter); ok && !p.stateless {
		rr.starts, rr.startsErr = h.runStarts(ctx, p)
	}
	opts := append(slices.Clone(p.opts), engine.WithStopCheck(gone))
	entry, python := h.isEntrypoint(p.g), p.g.Reference() == engine.LangGraphPython
	var last any
	var asked any // the interrupts of the run's last values chunk that had them
	status := "success"
	for ev, err := range p.g.Stream(runCtx, p.input, mask, opts...) {
		if err != nil && rr.stop.Load() && errors.Is(err, context.Canceled) {
			status = "interrupted"
			break
		}
		if err != nil {
			status = "error"
			emit("error", map[string]any{"error": errorName(err), "message": err.Error()})
			break
		}
		if ev.NS == "" && ev.Mode == engine.ModeValues {
			last = valuesChunk(ev)
			if entry {
				last = entrypointValuesChunk(ev, python)
			}
			if ev.Interrupts != nil {
				asked = wireInterrupts(ev.Interrupts)
			}
		}
		if chains != nil {
			chains.handle(ev, emit)
		}
		if ev.NS != "" && !p.subgraphs {
			continue
		}
		if studio != nil && ev.NS == "" {
			studio.handle(ev, emit)
		}
		evs := wireEvents(ev, p.g.Reference() == engine.LangGraphJS, p.taskMeta)
		if entry && ev.NS == "" {
			evs = entrypointEvents(ev, evs, python)
		}
		for _, out := range evs {
			if !want[out.mode] {
				continue
			}
			name := out.mode
			if out.mode == "messages-tuple" {
				name = "messages"
			}
			if ev.NS != "" {
				name += "|" + ev.NS
			}
			emit(name, out.data)
		}
	}
	rr.mu.Lock()
	rr.ending = true
	rollback := rr.rollback
	rr.mu.Unlock()
	if rollback && h.rollback(ctx, p) {
		return
	}
	if chains != nil && status == "success" { // a cancelled or failed run has no end, as its nodes have none
		if snap, err := p.g.GetState(ctx, engine.WithThread(p.thread)); err == nil {
			chains.end(h.stateValues(p.g, snap.Values), emit)
		}
	}
	if status == "success" {
		if snap, err := p.g.GetState(ctx, engine.WithThread(p.thread)); err == nil && !snap.Done() {
			// A run that stopped at an interrupt or a breakpoint:
			// interrupted, or, on LangGraph.js's server, a success
			// (interrupted is only a cancelled run there).
			if p.g.Reference() != engine.LangGraphJS || rr.stop.Load() {
				status = "interrupted"
			}
			// A graph following Python LangGraph reports the state once
			// more after its interrupt chunk (the finished siblings'
			// writes applied); the run's outcome, as Python's invoke
			// returns it, is that state with the interrupts.
			// (LangGraph.js's last values chunk is the interrupts alone.)
			if m, ok := last.(map[string]any); ok && asked != nil && m["__interrupt__"] == nil && p.g.Reference() == engine.LangGraphPython {
				m["__interrupt__"] = asked
			} else if _, ok := last.(map[string]any); entry && asked != nil && !ok {
				// An entrypoint's return value that is no object has
				// no keys to carry them: its outcome is the
				// interrupts alone, as Python's chunk is.
				last = map[string]any{"__interrupt__": asked}
			}
			// A static breakpoint needs nothing added: the engine reports
			// it as its reference does (B1): LangGraph.js's values and
			// updates chunks {"__interrupt__": []}, Python's updates
			// chunk alone, its run's outcome the state.
		}
	}
	if status == "interrupted" && rr.stop.Load() {
		if snap, err := p.g.GetState(ctx, engine.WithThread(p.thread)); err == nil {
			h.mu.Lock()
			if rec := h.threads[p.thread]; rec != nil {
				rec.Cancelled = snap.Ref.CheckpointID
			}
			h.mu.Unlock()
		}
	}
	if p.stateless && !p.keepThread {
		_ = h.saver.DeleteThread(ctx, p.thread) // on_completion "delete", the default
	}
	h.touch(p.thread)
	rr.mu.Lock()
	rr.status, rr.result, rr.updated = status, last, h.now().UTC()
	rr.mu.Unlock()
	// Free the thread before saying the run ended: whoever waits for
	// the end (wait, join, enqueue) may start the next run at once.
	p.claim.Release()
	close(rr.done)
	h.forgetRuns()
}

// keptRuns is how many ended runs (with their events, for late joiners)
// this process remembers; older ones are forgotten, oldest first.
const keptRuns = 256

// forgetRuns drops the oldest ended runs beyond keptRuns.
func (h *Handler) forgetRuns() {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ended []*runRec
	for _, rr := range h.runs {
		if rr.finished() {
			ended = append(ended, rr)
		}
	}
	if len(ended) <= keptRuns {
		return
	}
	slices.SortFunc(ended, func(a, b *runRec) int { return a.created.Compare(b.created) })
	for _, rr := range ended[:len(ended)-keptRuns] {
		delete(h.runs, rr.id)
	}
}

// studioMessages turns a run's message chunks and updates into Studio's
// messages mode: messages/metadata when a message starts, messages/partial
// with the message accumulated so far, messages/complete once a node's
// update (or the input) holds it.
type studioMessages struct {
	partial  map[string]*engine.Message
	complete map[string]bool
}

func (sm *studioMessages) handle(ev engine.Event, emit func(string, any)) {
	switch {
	case ev.Mode == engine.ModeMessages:
		c := ev.Message
		key := c.Message.ID
		if key == "" {
			key = "run-" + c.TaskID // chunks without an id belong to their task's message
		}
		acc := sm.partial[key]
		if acc == nil {
			acc = &engine.Message{Role: c.Message.Role, ID: key, Name: c.Message.Name}
			sm.partial[key] = acc
			emit("messages/metadata", map[string]any{key: map[string]any{"metadata": map[string]any{
				"langgraph_node": c.Node, "langgraph_step": ev.Step, "langgraph_task_id": c.TaskID}}})
		}
		acc.Content += c.Message.Content
		acc.ToolCalls = append(acc.ToolCalls, c.Message.ToolCalls...)
		emit("messages/partial", []any{lcMessage(*acc, false)})
	case ev.Mode == engine.ModeUpdates && ev.Update != nil:
		for _, w := range ev.Update.Writes {
			sm.completeAll(w.Value, emit)
		}
	}
}

// completeAll reports the messages in a written value as complete, once.
func (sm *studioMessages) completeAll(v any, emit func(string, any)) {
	var msgs []engine.Message
	switch x := v.(type) {
	case []engine.Message:
		msgs = x
	case engine.Message:
		msgs = []engine.Message{x}
	case engine.Overwrite:
		sm.completeAll(x.Value, emit)
		return
	}
	for _, m := range msgs {
		if m.ID != "" && sm.complete[m.ID] {
			continue
		}
		sm.complete[m.ID] = true
		emit("messages/complete", []any{lcMessage(m, false)})
	}
}

// errorName is the error's class name as LangGraph reports it.
func errorName(err error) string {
	var ne *engine.NodeError
	var rl *engine.RecursionLimitError
	switch {
	case errors.As(err, &rl):
		return "GraphRecursionError"
	case errors.As(err, &ne):
		return "NodeError"
	}
	return "Error"
}

// valuesChunk is a values event as LangGraph's values chunk: the state, or
// at an interrupt {"__interrupt__": […]} (LangGraph.js) or the state with
// "__interrupt__" (Python LangGraph), as the graph's reference gives it.
func valuesChunk(ev engine.Event) map[string]any {
	if ev.Values == nil && ev.Interrupts != nil {
		return map[string]any{"__interrupt__": wireInterrupts(ev.Interrupts)}
	}
	out := wireValues(ev.Values)
	if ev.Interrupts != nil { // Python LangGraph's chunk: the state and its interrupts
		out["__interrupt__"] = wireInterrupts(ev.Interrupts)
	}
	return out
}

type wireEvent struct {
	mode string
	data any
}

// wireEvents turns one engine event into the API's events, shaped as
// LangGraph.js's server sends them when js is set.
// A task's start event carries taskMeta on LangGraph.js's server.
func wireEvents(ev engine.Event, js bool, taskMeta map[string]any) []wireEvent {
	switch ev.Mode {
	case engine.ModeValues:
		return []wireEvent{{"values", valuesChunk(ev)}}
	case engine.ModeUpdates:
		u := ev.Update
		if u.Node == "__interrupt__" || len(u.Interrupts) > 0 && len(u.Writes) == 0 {
			return []wireEvent{{"updates", map[string]any{"__interrupt__": wireInterrupts(u.Interrupts)}}}
		}
		var w any = wireWrites(u.Writes)
		if u.Returned { // a call task's result (engine.Call, a functional task)
			w = wireValue(u.Return)
		}
		return []wireEvent{{"updates", map[string]any{u.Node: w}}}
	case engine.ModeCustom:
		return []wireEvent{{"custom", ev.Custom}}
	case engine.ModeMessages:
		m := ev.Message
		meta := map[string]any{"langgraph_node": m.Node, "langgraph_step": ev.Step, "langgraph_checkpoint_ns": ev.NS, "langgraph_task_id": m.TaskID}
		return []wireEvent{{"messages-tuple", []any{lcMessage(m.Message, true), meta}}}
	case engine.ModeTasks:
		return []wireEvent{{"tasks", wireTaskEvent(ev.Task, js, taskMeta)}}
	case engine.ModeCheckpoints:
		return []wireEvent{{"checkpoints", checkpointPayload(ev.State, "checkpoints", js)}}
	case engine.ModeDebug:
		d := map[string]any{"step": ev.Step, "timestamp": ev.Time.UTC().Format(timeFormat), "type": ev.Debug}
		switch {
		case ev.State != nil:
			d["payload"] = checkpointPayload(ev.State, "debug", js)
		case ev.Task != nil:
			d["payload"] = wireTaskEvent(ev.Task, js, taskMeta)
		}
		return []wireEvent{{"debug", d}}
	}
	return nil
}

// wireTaskEvent is a task's start or result as the tasks stream shows it.
// A task that wrote nothing (one that stopped at an interrupt) has the
// result null, or {} on LangGraph.js's server (js).
func wireTaskEvent(t *engine.TaskEvent, js bool, taskMeta map[string]any) map[string]any {
	if t.Done {
		var errv any
		if t.Error != "" {
			errv = t.Error
		}
		var result any = wireWrites(t.Result)
		if r, _ := result.(map[string]any); r == nil && js {
			result = map[string]any{}
		}
		return map[string]any{"id": t.ID, "name": t.Name, "result": result, "interrupts": wireInterrupts(t.Interrupts), "error": errv}
	}
	var input any = t.Input
	if v, ok := t.Input.(engine.Values); ok {
		input = wireValues(v)
	}
	triggers := t.Triggers
	if triggers == nil {
		triggers = []string{}
	}
	out := map[string]any{"id": t.ID, "name": t.Name, "input": input, "triggers": triggers, "interrupts": wireInterrupts(t.Interrupts)}
	if js {
		out["metadata"] = taskMeta
	}
	return out
}

// checkpointPayload is a checkpoint as debug and checkpoints events carry
// it: its config, parent, values, metadata, next and tasks. LangGraph.js's
// server sends less (js): a checkpoints event is the values, metadata and
// next alone, and a debug event has no parent_config for a first checkpoint
// and names each task by id, name, path, interrupts and a subgraph's
// namespace.
func checkpointPayload(s *engine.Snapshot, mode string, js bool) map[string]any {
	next := s.Next
	if next == nil {
		next = []string{}
	}
	if js && mode == "checkpoints" {
		return map[string]any{"values": wireValues(s.Values), "metadata": wireMetadata(s.Metadata), "next": next}
	}
	tasks := make([]map[string]any, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		wt := wireTask(s.Ref.ThreadID, t)
		if js {
			wt = map[string]any{"id": wt["id"], "name": wt["name"], "path": wt["path"], "interrupts": wt["interrupts"]}
			if t.NS != "" { // a subgraph's address, its checkpoint not yet written
				wt["checkpoint"] = map[string]any{"thread_id": s.Ref.ThreadID, "checkpoint_ns": t.NS, "checkpoint_id": nil, "checkpoint_map": nil}
			}
		}
		tasks = append(tasks, wt)
	}
	ref := s.Ref
	out := map[string]any{"config": wireConfig(&ref, s.Metadata.Parents), "parent_config": wireConfig(s.Parent, s.Metadata.Parents), "checkpoint": nestedRef(&ref, s.Metadata.Parents, false),
		"parent_checkpoint": nestedRef(s.Parent, s.Metadata.Parents, false), "values": wireValues(s.Values), "metadata": wireMetadata(s.Metadata),
		"next": next, "tasks": tasks}
	if js && s.Parent == nil {
		delete(out, "parent_config")
	}
	return out
}

// streamRun answers a run as server-sent events: metadata first, then the
// events of the modes asked for; the stream closes at the run's end. A
// client that leaves stops the run at its next step boundary, unless the
// run was asked with on_disconnect "continue".
func (h *Handler) streamRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Location", p.location())
	go h.execute(context.Background(), p)
	sendEvents(w, r, p.rec, 0)
	if r.Context().Err() != nil && !p.keepOnDisconnect {
		p.rec.stop.Store(true)
	}
}

// sendEvents streams a run's events from index from as server-sent events.
func sendEvents(w http.ResponseWriter, r *http.Request, rr *runRec, from int) {
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	rr.follow(r.Context(), from, func(id int, e logged) error {
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\nid: %d\n\n", e.name, e.data, id); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	})
}

// waitRun runs to the end and answers the last values chunk (the state,
// or {"__interrupt__": […]} at an interrupt), or the error of a failed
// run.
func (h *Handler) waitRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	go h.execute(context.Background(), p)
	select {
	case <-p.rec.done:
	case <-r.Context().Done():
		if !p.keepOnDisconnect {
			p.rec.stop.Store(true)
		}
		return
	}
	w.Header().Set("Content-Location", p.location())
	writeJSON(w, 200, p.rec.outcome())
}

// outcome is what wait and join answer: the run's error, or its last
// values chunk.
func (rr *runRec) outcome() any {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	switch {
	case rr.runErr != nil:
		return rr.runErr
	case rr.result != nil:
		return rr.result
	}
	return map[string]any{}
}

// createRun starts a background run and answers the Run at once.
func (h *Handler) createRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	p.rec.mu.Lock()
	wire := p.rec.wireLocked()
	p.rec.mu.Unlock()
	go h.execute(context.Background(), p)
	w.Header().Set("Content-Location", p.location())
	writeJSON(w, 200, wire)
}

// threadRun finds a run of a thread, answering 404.
func (h *Handler) threadRun(w http.ResponseWriter, r *http.Request) (*runRec, bool) {
	tid, rid := r.PathValue("tid"), r.PathValue("rid")
	h.mu.Lock()
	rr := h.runs[rid]
	h.mu.Unlock()
	if rr == nil || rr.thread != tid {
		fail(w, http.StatusNotFound, "Run %s not found in thread %s", rid, tid)
		return nil, false
	}
	return rr, true
}

func (h *Handler) getRun(w http.ResponseWriter, r *http.Request) {
	if rr, ok := h.threadRun(w, r); ok {
		writeJSON(w, 200, rr.wire())
	}
}

// joinRun waits for a run's end and answers its last values chunk.
func (h *Handler) joinRun(w http.ResponseWriter, r *http.Request) {
	rr, ok := h.threadRun(w, r)
	if !ok {
		return
	}
	select {
	case <-rr.done:
	case <-r.Context().Done():
		return
	}
	writeJSON(w, 200, rr.outcome())
}

// joinStream streams a run's events, from after the Last-Event-ID the
// client saw (-1 or none: from the first), until the run ends.
func (h *Handler) joinStream(w http.ResponseWriter, r *http.Request) {
	rr, ok := h.threadRun(w, r)
	if !ok {
		return
	}
	from := 0
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		n, err := strconv.Atoi(last)
		if err != nil || n < -1 {
			fail(w, http.StatusUnprocessableEntity, "Last-Event-ID must be an event id the stream sent, not %q", last)
			return
		}
		from = n + 1
	}
	sendEvents(w, r, rr, from)
}

// cancelRun stops a run now, its running node's context cancelled
// (action=interrupt, the default), or stops it and deletes it with the
// checkpoints it wrote, so the thread is as it was before the run
// (action=rollback); wait=true answers once that is done.
func (h *Handler) cancelRun(w http.ResponseWriter, r *http.Request) {
	rr, ok := h.threadRun(w, r)
	if !ok {
		return
	}
	rollback := false
	switch a := r.URL.Query().Get("action"); a {
	case "", "interrupt":
	case "rollback":
		if _, ok := h.saver.(checkpoint.RunDeleter); !ok {
			fail(w, http.StatusNotImplemented, "cancel with action=rollback needs a checkpoint store that can delete one run (checkpoint.RunDeleter), which %T cannot; use action=interrupt", h.saver)
			return
		}
		rollback = true
	default:
		fail(w, http.StatusUnprocessableEntity, "action must be interrupt or rollback, not %q", a)
		return
	}
	if rr.finished() || rollback && !rr.askRollback() {
		fail(w, http.StatusConflict, "Run %s has already ended", rr.id)
		return
	}
	rr.interrupt()
	if r.URL.Query().Get("wait") == "true" || r.URL.Query().Get("wait") == "1" {
		select {
		case <-rr.done:
		case <-r.Context().Done():
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// listRuns lists the runs of a thread this process started, newest first.
func (h *Handler) listRuns(w http.ResponseWriter, r *http.Request) {
	tid := r.PathValue("tid")
	if _, ok := h.loadThread(w, r, tid); !ok {
		return
	}
	h.mu.Lock()
	var rs []*runRec
	for _, rr := range h.runs {
		if rr.thread == tid {
			rs = append(rs, rr)
		}
	}
	h.mu.Unlock()
	slices.SortFunc(rs, func(a, b *runRec) int { return b.created.Compare(a.created) })
	out := []map[string]any{}
	for _, rr := range rs {
		out = append(out, rr.wire())
	}
	writeJSON(w, 200, out)
}
