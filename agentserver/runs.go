package agentserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
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
	result  any // the last values chunk, what join and wait answer
	done    chan struct{}
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
	return map[string]any{"run_id": rr.id, "thread_id": rr.thread, "assistant_id": rr.assistant,
		"created_at": rr.created.Format(timeFormat), "updated_at": rr.updated.Format(timeFormat),
		"status": rr.status, "metadata": rr.metadata, "kwargs": map[string]any{}, "multitask_strategy": rr.multitask}
}

// modes maps stream mode names to engine modes. messages-tuple is the
// engine's message stream as (chunk, metadata) pairs.
var modes = map[string]engine.StreamMode{
	"values": engine.ModeValues, "updates": engine.ModeUpdates, "debug": engine.ModeDebug, "tasks": engine.ModeTasks,
	"checkpoints": engine.ModeCheckpoints, "custom": engine.ModeCustom, "messages-tuple": engine.ModeMessages,
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
	Config            struct {
		Configurable   map[string]any `json:"configurable"`
		RecursionLimit int            `json:"recursion_limit"`
	} `json:"config"`
}

// prepared is a run checked and ready to start.
type prepared struct {
	g         *engine.Graph
	thread    string
	stateless bool
	create    bool // the thread is new (if_not_exists "create"): record it when the run starts
	input     engine.Input
	opts      []engine.RunOption
	modes     []string // the wire names asked for
	subgraphs bool
	rec       *runRec
	claim     *engine.Claim
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
	switch body.MultitaskStrategy {
	case "", "reject":
	default:
		return nil, refuse(http.StatusNotImplemented, "multitask_strategy %q is not built on this server: only \"reject\" (a second run on a busy thread gets 409)", body.MultitaskStrategy)
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
		t, ok, err := h.findThread(ctx, tid)
		switch {
		case err != nil:
			return nil, refuse(http.StatusInternalServerError, "reading thread %s: %v", tid, err)
		case !ok && body.IfNotExists != "create":
			return nil, refuse(http.StatusNotFound, "Thread with ID %s not found", tid)
		case t.graph != nil && t.graph != g:
			return nil, refuse(http.StatusConflict, "Thread %s holds a run of assistant %s, not %s: use a new thread", tid, h.assistantID(t.graph), body.AssistantID)
		case t.busy:
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
	case hasInput:
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
	// Claim the thread across processes before anything runs.
	runID := uuid.NewString()
	// The claim outlives the request: a background run goes on after it.
	claim, err := g.Claim(context.WithoutCancel(ctx), engine.WithThread(p.thread), engine.WithLeaseTTL(h.leaseTTL),
		engine.WithLeaseOwner(engine.DefaultLeaseOwner()+" Agent Server run "+runID))
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
		metadata: md, multitask: "reject", status: "pending", done: make(chan struct{})}
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
	p.opts = append(p.opts, engine.WithThread(p.thread), engine.WithRunID(runID), engine.WithClaim(claim), engine.WithMetadata(meta))
	return p, nil
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

// execute runs p, passing each event to emit (name and data) and ending
// the run's record with its outcome. The run does not die with the
// request: a client that leaves stops it at the next step boundary.
func (h *Handler) execute(ctx context.Context, p *prepared, gone func() bool, emit func(name string, data any)) {
	defer p.claim.Release()
	rr := p.rec
	rr.mu.Lock()
	rr.status = "running"
	rr.mu.Unlock()
	var mask engine.StreamMode = engine.ModeValues // wait and join answer the last values chunk
	for _, m := range p.modes {
		mask |= modes[m]
	}
	want := map[string]bool{}
	for _, m := range p.modes {
		want[m] = true
	}
	opts := append(slices.Clone(p.opts), engine.WithStopCheck(gone))
	var last any
	status := "success"
	for ev, err := range p.g.Stream(ctx, p.input, mask, opts...) {
		if err != nil {
			status = "error"
			emit("error", map[string]any{"error": errorName(err), "message": err.Error()})
			break
		}
		if ev.NS == "" && ev.Mode == engine.ModeValues {
			last = valuesChunk(ev)
		}
		if ev.NS != "" && !p.subgraphs {
			continue
		}
		for _, out := range wireEvents(ev, p.thread) {
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
	if status == "success" {
		if snap, err := p.g.GetState(ctx, engine.WithThread(p.thread)); err == nil && !snap.Done() {
			status = "interrupted"
		}
	}
	if p.stateless && p.rec != nil {
		_ = h.saver.DeleteThread(ctx, p.thread)
	}
	h.touch(p.thread)
	rr.mu.Lock()
	rr.status, rr.result, rr.updated = status, last, h.now().UTC()
	rr.mu.Unlock()
	close(rr.done)
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
// {"__interrupt__": […]} at an interrupt.
func valuesChunk(ev engine.Event) map[string]any {
	if ev.Values == nil && ev.Interrupts != nil {
		return map[string]any{"__interrupt__": wireInterrupts(ev.Interrupts)}
	}
	return wireValues(ev.Values)
}

type wireEvent struct {
	mode string
	data any
}

// wireEvents turns one engine event into the API's events.
func wireEvents(ev engine.Event, thread string) []wireEvent {
	switch ev.Mode {
	case engine.ModeValues:
		return []wireEvent{{"values", valuesChunk(ev)}}
	case engine.ModeUpdates:
		u := ev.Update
		if u.Node == "__interrupt__" || len(u.Interrupts) > 0 && len(u.Writes) == 0 {
			return []wireEvent{{"updates", map[string]any{"__interrupt__": wireInterrupts(u.Interrupts)}}}
		}
		var w any = wireWrites(u.Writes)
		return []wireEvent{{"updates", map[string]any{u.Node: w}}}
	case engine.ModeCustom:
		return []wireEvent{{"custom", ev.Custom}}
	case engine.ModeMessages:
		m := ev.Message
		meta := map[string]any{"langgraph_node": m.Node, "langgraph_step": ev.Step, "langgraph_checkpoint_ns": ev.NS, "langgraph_task_id": m.TaskID}
		return []wireEvent{{"messages-tuple", []any{lcMessage(m.Message, true), meta}}}
	case engine.ModeTasks:
		return []wireEvent{{"tasks", wireTaskEvent(ev.Task)}}
	case engine.ModeCheckpoints:
		return []wireEvent{{"checkpoints", checkpointPayload(ev.State)}}
	case engine.ModeDebug:
		d := map[string]any{"step": ev.Step, "timestamp": ev.Time.UTC().Format(timeFormat), "type": ev.Debug}
		switch {
		case ev.State != nil:
			d["payload"] = checkpointPayload(ev.State)
		case ev.Task != nil:
			d["payload"] = wireTaskEvent(ev.Task)
		}
		return []wireEvent{{"debug", d}}
	}
	return nil
}

// wireTaskEvent is a task's start or result as the tasks stream shows it.
func wireTaskEvent(t *engine.TaskEvent) map[string]any {
	if t.Done {
		var errv any
		if t.Error != "" {
			errv = t.Error
		}
		return map[string]any{"id": t.ID, "name": t.Name, "result": wireWrites(t.Result), "interrupts": wireInterrupts(t.Interrupts), "error": errv}
	}
	var input any = t.Input
	if v, ok := t.Input.(engine.Values); ok {
		input = wireValues(v)
	}
	triggers := t.Triggers
	if triggers == nil {
		triggers = []string{}
	}
	return map[string]any{"id": t.ID, "name": t.Name, "input": input, "triggers": triggers, "interrupts": wireInterrupts(t.Interrupts)}
}

// checkpointPayload is a checkpoint as debug and checkpoints events carry
// it: its config, parent, values, metadata, next and tasks.
func checkpointPayload(s *engine.Snapshot) map[string]any {
	tasks := make([]map[string]any, 0, len(s.Tasks))
	for _, t := range s.Tasks {
		tasks = append(tasks, wireTask(s.Ref.ThreadID, t))
	}
	next := s.Next
	if next == nil {
		next = []string{}
	}
	ref := s.Ref
	return map[string]any{"config": wireConfig(&ref), "parent_config": wireConfig(s.Parent), "checkpoint": wireRef(&ref),
		"parent_checkpoint": wireRef(s.Parent), "values": wireValues(s.Values), "metadata": wireMetadata(s.Metadata),
		"next": next, "tasks": tasks}
}

// streamRun answers a run as server-sent events: metadata first, then the
// events of the modes asked for; the stream closes at the run's end.
func (h *Handler) streamRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	hd.Set("Content-Location", p.location())
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	var mu sync.Mutex
	seq := 0
	dead := false
	emit := func(name string, data any) {
		mu.Lock()
		defer mu.Unlock()
		if dead {
			return
		}
		b, err := json.Marshal(data)
		if err != nil {
			b, _ = json.Marshal(map[string]any{"error": "EncodeError", "message": err.Error()})
			name = "error"
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\nid: %d\n\n", name, b, seq); err != nil {
			dead = true
			return
		}
		seq++
		if flusher != nil {
			flusher.Flush()
		}
	}
	emit("metadata", map[string]any{"run_id": p.rec.id, "attempt": 1})
	ctx := context.WithoutCancel(r.Context())
	gone := func() bool { return r.Context().Err() != nil }
	h.execute(ctx, p, gone, emit)
}

// waitRun runs to the end and answers the last values chunk (the state,
// or {"__interrupt__": […]} at an interrupt).
func (h *Handler) waitRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	var runErr any
	emit := func(name string, data any) {
		if name == "error" {
			runErr = data
		}
	}
	h.execute(context.WithoutCancel(r.Context()), p, func() bool { return r.Context().Err() != nil }, emit)
	w.Header().Set("Content-Location", p.location())
	if runErr != nil {
		writeJSON(w, 200, runErr)
		return
	}
	res := p.rec.result
	if res == nil {
		res = map[string]any{}
	}
	writeJSON(w, 200, res)
}

// createRun starts a background run and answers the Run at once.
func (h *Handler) createRun(w http.ResponseWriter, r *http.Request) {
	p, ok := h.readRun(w, r)
	if !ok {
		return
	}
	go h.execute(context.Background(), p, func() bool { return false }, func(string, any) {})
	w.Header().Set("Content-Location", p.location())
	writeJSON(w, 200, p.rec.wire())
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
	rr.mu.Lock()
	res := rr.result
	rr.mu.Unlock()
	if res == nil {
		res = map[string]any{}
	}
	writeJSON(w, 200, res)
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
