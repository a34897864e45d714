package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/weftstudio/weft/engine"
)

// runRecord is what a traced run leaves for the builder.
type runRecord struct {
	start, end     time.Time
	graph, thread  string
	from           string // the checkpoint the run was asked to start from
	resume         bool   // the input answers interrupts or continues the thread
	parent         trace.SpanContext
	traceID        trace.TraceID
	spanID         trace.SpanID
	link           trace.SpanContext // the previous run's span, when valid
	linkCheckpoint string
	res            *engine.Result
	err            error
	mu             sync.Mutex // guards events: tasks report concurrently
	events         *[]recEvent
	flushed        chan struct{} // set on a flush marker instead of a run
}

// recEvent is what the builder needs of an event: a third of its size.
type recEvent struct {
	time time.Time
	ns   string
	step int
	life *engine.Lifecycle
	call *engine.CallEvent
}

// eventSlices recycles the runs' event buffers once their spans are built.
var eventSlices = sync.Pool{New: func() any { s := make([]recEvent, 0, 64); return &s }}

// add records one event; it is the run's OnEvent, so it only appends.
func (r *runRecord) add(ev engine.Event) {
	r.mu.Lock()
	if r.events == nil {
		r.events = eventSlices.Get().(*[]recEvent)
	}
	*r.events = append(*r.events, recEvent{time: ev.Time, ns: ev.NS, step: ev.Step, life: ev.Lifecycle, call: ev.Call})
	r.mu.Unlock()
}

// recycle gives the record's event buffer back for another run.
func (r *runRecord) recycle() {
	if r.events == nil {
		return
	}
	clear(*r.events) // drop the pointers before the buffer is reused
	*r.events = (*r.events)[:0]
	eventSlices.Put(r.events)
	r.events = nil
}

// Attribute keys of Weft's own.
const (
	keyGraph      = attribute.Key("weft.graph")
	keyThread     = attribute.Key("weft.thread_id")
	keyCheckpoint = attribute.Key("weft.checkpoint_id")
	keyTask       = attribute.Key("weft.task_id")
	keyNode       = attribute.Key("weft.node")
	keyStep       = attribute.Key("weft.step")
	keyNS         = attribute.Key("weft.ns")
)

// openTask is a task span being built, with the context its calls and
// its subgraph's steps start from.
type openTask struct {
	span trace.Span
	ctx  context.Context
}

// builder state for one run.
type spanTree struct {
	t      *Tracer
	rec    *runRecord
	runCtx context.Context
	steps  map[string]trace.Span // by namespace: the step in progress there
	tasks  map[string]openTask   // by namespace and task id
	ended  map[string]time.Time  // task end times by task id, for interrupt events
}

func taskKey(ns, id string) string { return ns + "\x00" + id }

// build turns a finished run's record into spans.
func (t *Tracer) build(rec *runRecord) {
	ctx := context.Background()
	if rec.parent.IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, rec.parent)
	}
	attrs := []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "invoke_agent"),
		attribute.String("gen_ai.agent.name", rec.graph),
		keyGraph.String(rec.graph),
	}
	if rec.thread != "" {
		attrs = append(attrs, attribute.String("gen_ai.conversation.id", rec.thread), keyThread.String(rec.thread))
	}
	if rec.from != "" {
		attrs = append(attrs, attribute.String("weft.from_checkpoint_id", rec.from))
	}
	if rec.resume {
		attrs = append(attrs, attribute.Bool("weft.resume", true))
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(rec.start), trace.WithAttributes(attrs...)}
	if rec.link.IsValid() {
		why := "previous_run"
		if rec.resume {
			why = "resume"
		}
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: rec.link, Attributes: []attribute.KeyValue{
			attribute.String("weft.link", why), keyCheckpoint.String(rec.linkCheckpoint),
		}}))
	}
	_, run := t.tracer.Start(withIDs(ctx, rec.traceID, rec.spanID), "invoke_agent "+rec.graph, opts...)
	if !run.IsRecording() { // sampled out: its children would be too
		rec.recycle()
		return
	}
	st := &spanTree{
		t: t, rec: rec,
		runCtx: trace.ContextWithSpan(ctx, run),
		steps:  map[string]trace.Span{},
		tasks:  map[string]openTask{},
		ended:  map[string]time.Time{},
	}
	if rec.events != nil {
		for _, ev := range *rec.events {
			st.event(ev)
		}
	}
	rec.recycle()
	// Spans left open lost their end to a failure or a dropped event.
	for _, ot := range st.tasks {
		ot.span.SetAttributes(attribute.Bool("weft.incomplete", true))
		ot.span.End(trace.WithTimestamp(rec.end))
	}
	for _, s := range st.steps {
		s.SetAttributes(attribute.Bool("weft.incomplete", true))
		s.End(trace.WithTimestamp(rec.end))
	}
	st.endRun(run)
}

// event adds one recorded event to the tree.
func (st *spanTree) event(ev recEvent) {
	switch {
	case ev.life != nil:
		st.lifecycle(ev)
	case ev.call != nil:
		st.call(ev)
	}
}

// parentOf returns the context a step of namespace ns starts from: the run
// at the root, the subgraph's task inside a subgraph.
func (st *spanTree) parentOf(ns string) context.Context {
	if ns == "" {
		return st.runCtx
	}
	outer, last := "", ns
	if i := strings.LastIndexByte(ns, '|'); i >= 0 {
		outer, last = ns[:i], ns[i+1:]
	}
	if i := strings.LastIndexByte(last, ':'); i >= 0 {
		if ot, ok := st.tasks[taskKey(outer, last[i+1:])]; ok {
			return ot.ctx
		}
	}
	return st.runCtx
}

func (st *spanTree) common(ev recEvent) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 1, 6) // room for what most spans add
	a[0] = keyStep.Int(ev.step)
	if st.rec.thread != "" {
		a = append(a, keyThread.String(st.rec.thread))
	}
	if ev.ns != "" {
		a = append(a, keyNS.String(ev.ns))
	}
	return a
}

func (st *spanTree) lifecycle(ev recEvent) {
	l := ev.life
	switch l.Kind {
	case engine.StepStart:
		if l.Tasks == 0 {
			return // the input's step, whose only task is the hidden start task: a span without content
		}
		a := append(st.common(ev), attribute.Int("weft.tasks", l.Tasks))
		_, s := st.t.tracer.Start(st.parentOf(ev.ns), "step "+strconv.Itoa(ev.step), trace.WithTimestamp(ev.time), trace.WithAttributes(a...))
		st.steps[ev.ns] = s
	case engine.StepEnd:
		s, ok := st.steps[ev.ns]
		if !ok {
			return
		}
		delete(st.steps, ev.ns)
		if l.Checkpoint != "" {
			s.SetAttributes(keyCheckpoint.String(l.Checkpoint))
		}
		if len(l.Interrupts) > 0 {
			s.SetAttributes(attribute.Int("weft.interrupts", len(l.Interrupts)))
		}
		if l.Error != "" {
			s.SetStatus(codes.Error, l.Error)
		}
		s.End(trace.WithTimestamp(ev.time))
	case engine.TaskStart:
		parent := st.runCtx
		if s, ok := st.steps[ev.ns]; ok {
			parent = trace.ContextWithSpan(st.runCtx, s)
		}
		a := append(st.common(ev), keyTask.String(l.TaskID), keyNode.String(l.Node))
		ctx, s := st.t.tracer.Start(parent, l.Node, trace.WithTimestamp(ev.time), trace.WithAttributes(a...))
		st.tasks[taskKey(ev.ns, l.TaskID)] = openTask{span: s, ctx: ctx}
	case engine.TaskEnd:
		k := taskKey(ev.ns, l.TaskID)
		ot, ok := st.tasks[k]
		if !ok {
			return
		}
		delete(st.tasks, k)
		st.ended[l.TaskID] = ev.time
		for _, in := range l.Interrupts {
			ot.span.AddEvent("weft.interrupt", trace.WithTimestamp(ev.time), trace.WithAttributes(st.interruptAttrs(in)...))
		}
		if l.Error != "" {
			ot.span.RecordError(errors.New(l.Error), trace.WithTimestamp(ev.time))
			ot.span.SetAttributes(attribute.String("error.type", errorType(l.ErrorKind)))
			ot.span.SetStatus(codes.Error, l.Error)
		}
		ot.span.End(trace.WithTimestamp(ev.time))
	}
}

// errorType names a task's failure for error.type.
func errorType(k engine.ErrorKind) string {
	if s := string(k); s != "" {
		return s
	}
	return "_OTHER"
}

func (st *spanTree) interruptAttrs(in engine.PendingInterrupt) []attribute.KeyValue {
	a := []attribute.KeyValue{attribute.String("weft.interrupt.id", in.ID), keyNode.String(in.Node), keyTask.String(in.TaskID)}
	if in.NS != "" {
		a = append(a, keyNS.String(in.NS))
	}
	if st.t.content {
		a = append(a, attribute.String("weft.interrupt.value", jsonText(in.Value)))
	}
	return a
}

// call adds a span for a recorded model or tool call, from its own start
// and latency, under the task that made it.
func (st *spanTree) call(ev recEvent) {
	c := ev.call
	rec := c.Record
	parent := st.runCtx
	if ot, ok := st.tasks[taskKey(ev.ns, c.TaskID)]; ok {
		parent = ot.ctx
	}
	a := append(st.common(ev), keyTask.String(c.TaskID), keyNode.String(c.Node))
	var name string
	kind := trace.SpanKindInternal
	switch rec.Kind {
	case engine.CallModel:
		name = "chat " + rec.Name
		kind = trace.SpanKindClient
		a = append(a, attribute.String("gen_ai.operation.name", "chat"), attribute.String("gen_ai.request.model", rec.Name))
		if rec.Provider != "" {
			a = append(a, attribute.String("gen_ai.provider.name", rec.Provider))
		}
		if rec.InputTokens > 0 {
			a = append(a, attribute.Int("gen_ai.usage.input_tokens", rec.InputTokens))
		}
		if rec.OutputTokens > 0 {
			a = append(a, attribute.Int("gen_ai.usage.output_tokens", rec.OutputTokens))
		}
		if rec.FinishReason != "" {
			a = append(a, attribute.StringSlice("gen_ai.response.finish_reasons", []string{rec.FinishReason}))
		}
		if rec.Attempts > 1 {
			a = append(a, attribute.Int("weft.attempts", rec.Attempts))
		}
		if rec.FirstToken > 0 {
			a = append(a, attribute.Float64("weft.first_token_seconds", rec.FirstToken.Seconds()))
		}
		if st.t.content {
			a = append(a, attribute.String("gen_ai.input.messages", messagesJSON(rec.Request)))
			if rec.Reply != nil {
				a = append(a, attribute.String("gen_ai.output.messages", messagesJSON([]engine.CallMessage{*rec.Reply})))
			}
		}
	case engine.CallTool:
		name = "execute_tool " + rec.Name
		a = append(a, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", rec.Name),
			attribute.String("gen_ai.tool.type", "function"))
		if rec.ToolCallID != "" {
			a = append(a, attribute.String("gen_ai.tool.call.id", rec.ToolCallID))
		}
		if rec.Provider != "" { // where the tool ran: an MCP server and its name for the tool (tool.Origin)
			a = append(a, attribute.String("weft.tool.origin", rec.Provider))
		}
		if st.t.content {
			a = append(a, attribute.String("gen_ai.tool.call.arguments", rec.Args.Text), attribute.String("gen_ai.tool.call.result", rec.Result.Text))
		}
	default:
		name = string(rec.Kind) + " " + rec.Name
	}
	_, s := st.t.tracer.Start(parent, name, trace.WithSpanKind(kind), trace.WithTimestamp(rec.Start), trace.WithAttributes(a...))
	if rec.Error != "" {
		s.SetAttributes(attribute.String("error.type", "_OTHER"))
		s.SetStatus(codes.Error, rec.Error)
	}
	s.End(trace.WithTimestamp(rec.Start.Add(rec.Latency)))
}

// endRun finishes the run's span with its outcome and its interrupts.
func (st *spanTree) endRun(run trace.Span) {
	rec := st.rec
	if rec.err != nil {
		run.RecordError(rec.err, trace.WithTimestamp(rec.end))
		run.SetStatus(codes.Error, rec.err.Error())
	}
	if r := rec.res; r != nil {
		run.SetAttributes(attribute.Int("weft.steps", r.Steps), attribute.Bool("weft.done", r.Done))
		if r.Ref.CheckpointID != "" {
			run.SetAttributes(keyCheckpoint.String(r.Ref.CheckpointID))
		}
		if len(r.Next) > 0 {
			run.SetAttributes(attribute.StringSlice("weft.next", r.Next))
		}
		if r.Breakpoint != engine.StopNone {
			run.SetAttributes(attribute.String("weft.stop", string(r.Breakpoint)))
		}
		if r.Dropped > 0 {
			run.SetAttributes(attribute.Int("weft.dropped_events", r.Dropped))
		}
		for _, in := range r.Interrupts {
			at, ok := st.ended[in.TaskID]
			if !ok {
				at = rec.end
			}
			run.AddEvent("weft.interrupt", trace.WithTimestamp(at), trace.WithAttributes(st.interruptAttrs(in)...))
		}
	}
	run.End(trace.WithTimestamp(rec.end))
}

// messagesJSON writes messages in the GenAI conventions' shape: a role
// and parts (text, tool calls, tool results).
func messagesJSON(msgs []engine.CallMessage) string {
	type part struct {
		Type      string          `json:"type"`
		Content   string          `json:"content,omitempty"`
		ID        string          `json:"id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Response  string          `json:"response,omitempty"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	out := make([]message, 0, len(msgs))
	for _, m := range msgs {
		msg := message{Role: m.Role, Parts: []part{}}
		switch {
		case m.Role == engine.RoleTool:
			msg.Parts = append(msg.Parts, part{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
		case m.Content != "":
			msg.Parts = append(msg.Parts, part{Type: "text", Content: m.Content})
		}
		for _, tc := range m.ToolCalls {
			p := part{Type: "tool_call", ID: tc.ID, Name: tc.Name}
			if json.Valid([]byte(tc.Args)) {
				p.Arguments = json.RawMessage(tc.Args)
			} else {
				p.Content = tc.Args // cut, or not JSON: kept as text
			}
			msg.Parts = append(msg.Parts, p)
		}
		out = append(out, msg)
	}
	b, _ := json.Marshal(out) // strings only
	return string(b)
}

// jsonText writes an interrupt's payload as JSON, or says why it cannot.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "(not JSON: " + err.Error() + ")"
	}
	return string(b)
}
