package telemetry_test

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/telemetry"
	"github.com/weftstudio/weft/tool"
)

// receiver is an OTLP/HTTP trace endpoint in the test process: it decodes
// what the exporter sends with OTLP's own protobuf types.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []string // service.name of each batch
	srv   *httptest.Server
	t     *testing.T
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("receiver: %s %s with Content-Type %q, want POST /v1/traces application/x-protobuf", req.Method, req.URL.Path, req.Header.Get("Content-Type"))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			t.Errorf("receiver: %v", err)
			return
		}
		var ex collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &ex); err != nil {
			t.Errorf("receiver: decoding OTLP: %v", err)
			http.Error(w, "bad protobuf", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range ex.ResourceSpans {
			r.res = append(r.res, attr(rs.Resource.Attributes, "service.name"))
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != telemetry.ScopeName {
					t.Errorf("receiver: scope %q, want %q", ss.Scope.GetName(), telemetry.ScopeName)
				}
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) all() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.spans)
}

// attr returns an attribute's value as text ("" when absent).
func attr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key != key {
			continue
		}
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			return v.StringValue
		case *commonpb.AnyValue_IntValue:
			return itoa(v.IntValue)
		case *commonpb.AnyValue_BoolValue:
			if v.BoolValue {
				return "true"
			}
			return "false"
		case *commonpb.AnyValue_ArrayValue:
			var parts []string
			for _, x := range v.ArrayValue.Values {
				parts = append(parts, x.GetStringValue())
			}
			return strings.Join(parts, ",")
		}
		return kv.Value.String()
	}
	return ""
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

func has(kvs []*commonpb.KeyValue, key string) bool {
	return slices.ContainsFunc(kvs, func(kv *commonpb.KeyValue) bool { return kv.Key == key })
}

type sendArgs struct {
	To     string `json:"to"`
	Amount int    `json:"amount"`
}

// bankAgent is the tool agent of the tests: its model asks to send money,
// which waits for approval (an interrupt), then answers.
func bankAgent(t *testing.T) (*engine.Graph, *memory.Saver) {
	t.Helper()
	send := tool.Must(tool.New("send_money", "Sends money.", func(_ context.Context, a sendArgs) (string, error) {
		return "sent " + itoa(int64(a.Amount)) + " to " + a.To, nil
	}))
	m := scripted.New(scripted.Replies(
		scripted.Turn{Text: "Sending it.", Calls: []engine.ToolCall{{ID: "call-1", Name: "send_money", Args: `{"to":"Ada","amount":5}`}}},
		scripted.Turn{Text: "Done: Ada got 5."},
	), scripted.WithModelName("bank-model-1"))
	s := memory.New()
	g, err := agent.New(m, []tool.Tool{send}, agent.WithName("bank"), agent.WithApproval("send_money"),
		agent.WithCompileOptions(engine.WithSaver(s)))
	if err != nil {
		t.Fatal(err)
	}
	return g, s
}

func flush(t *testing.T, tr *telemetry.Tracer) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
}

type tree struct {
	byID     map[string]*tracepb.Span
	children map[string][]*tracepb.Span
}

func index(spans []*tracepb.Span) tree {
	tr := tree{byID: map[string]*tracepb.Span{}, children: map[string][]*tracepb.Span{}}
	for _, s := range spans {
		tr.byID[string(s.SpanId)] = s
		tr.children[string(s.ParentSpanId)] = append(tr.children[string(s.ParentSpanId)], s)
	}
	return tr
}

func (tr tree) named(parent *tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, c := range tr.children[string(parent.SpanId)] {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

func (tr tree) parent(s *tracepb.Span) *tracepb.Span { return tr.byID[string(s.ParentSpanId)] }

// within checks a child's times lie inside its parent's.
func within(t *testing.T, child, parent *tracepb.Span) {
	t.Helper()
	if child.StartTimeUnixNano < parent.StartTimeUnixNano || child.EndTimeUnixNano > parent.EndTimeUnixNano {
		t.Errorf("span %q [%d, %d] is not inside its parent %q [%d, %d]", child.Name, child.StartTimeUnixNano, child.EndTimeUnixNano,
			parent.Name, parent.StartTimeUnixNano, parent.EndTimeUnixNano)
	}
}

// TestTraceOfInterruptAndResume runs the tool agent to its approval
// interrupt and resumes it, traced by FromEnv to an OTLP/HTTP receiver,
// and checks the two traces: their trees, names, attributes, the
// interrupt event, and the resumed run's link to the interrupted one.
func TestTraceOfInterruptAndResume(t *testing.T) {
	rcv := newReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "weft-test")
	t.Setenv(telemetry.ContentEnv, "true")
	ctx := context.Background()
	tr, err := telemetry.FromEnv(ctx)
	if err != nil || tr == nil {
		t.Fatalf("FromEnv = %v, %v; want a tracer", tr, err)
	}
	defer tr.Shutdown(ctx)
	raw, saver := bankAgent(t)
	g := tr.Instrument(raw)

	in := engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "Send Ada 5."}}}
	res1, err := g.Invoke(ctx, in, engine.WithThread("t1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res1.Interrupts) != 1 {
		t.Fatalf("first run: interrupts %v, want the approval", res1.Interrupts)
	}
	res2, err := g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("t1"))
	if err != nil || !res2.Done {
		t.Fatalf("resume: %v, %+v; want done", err, res2)
	}
	flush(t, tr)
	spans := rcv.all()
	tt := index(spans)
	if len(rcv.res) == 0 || rcv.res[0] != "weft-test" {
		t.Errorf("service.name %v, want weft-test from OTEL_SERVICE_NAME", rcv.res)
	}

	var runs []*tracepb.Span
	for _, s := range spans {
		if len(s.ParentSpanId) == 0 {
			runs = append(runs, s)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d root spans, want 2 (one per run): %v", len(runs), names(spans))
	}
	slices.SortFunc(runs, func(a, b *tracepb.Span) int { return int(int64(a.StartTimeUnixNano) - int64(b.StartTimeUnixNano)) })
	first, second := runs[0], runs[1]
	for _, r := range runs {
		if r.Name != "invoke_agent bank" || attr(r.Attributes, "gen_ai.operation.name") != "invoke_agent" ||
			attr(r.Attributes, "gen_ai.agent.name") != "bank" || attr(r.Attributes, "weft.thread_id") != "t1" ||
			attr(r.Attributes, "gen_ai.conversation.id") != "t1" {
			t.Errorf("run span %q attributes %v", r.Name, r.Attributes)
		}
	}
	if string(first.TraceId) == string(second.TraceId) {
		t.Error("the resumed run shares the interrupted run's trace; want a trace of its own, linked")
	}

	// The interrupted run: its interrupt as an event, its checkpoints
	// carrying its span.
	if got := attr(first.Attributes, "weft.checkpoint_id"); got != res1.Ref.CheckpointID {
		t.Errorf("first run weft.checkpoint_id %q, want %q", got, res1.Ref.CheckpointID)
	}
	if len(first.Events) != 1 || first.Events[0].Name != "weft.interrupt" ||
		attr(first.Events[0].Attributes, "weft.interrupt.id") != res1.Interrupts[0].ID ||
		attr(first.Events[0].Attributes, "weft.node") != agent.ApproveNode ||
		!strings.Contains(attr(first.Events[0].Attributes, "weft.interrupt.value"), "send_money") {
		t.Errorf("first run events %v, want one weft.interrupt for %s", first.Events, res1.Interrupts[0].ID)
	}
	tup, err := saver.Get(ctx, res1.Ref)
	if err != nil {
		t.Fatal(err)
	}
	want := "00-" + hexs(first.TraceId) + "-" + hexs(first.SpanId) + "-01"
	if got := tup.Metadata.Extra[telemetry.MetadataKey]; got != want {
		t.Errorf("interrupt checkpoint metadata %s = %v, want %s", telemetry.MetadataKey, got, want)
	}

	// The resumed run links to it.
	if len(second.Links) != 1 || string(second.Links[0].TraceId) != string(first.TraceId) ||
		string(second.Links[0].SpanId) != string(first.SpanId) ||
		attr(second.Links[0].Attributes, "weft.link") != "resume" ||
		attr(second.Links[0].Attributes, "weft.checkpoint_id") != res1.Ref.CheckpointID ||
		attr(second.Attributes, "weft.resume") != "true" {
		t.Errorf("resumed run links %v attributes %v; want a resume link to the first run's span", second.Links, second.Attributes)
	}
	if len(first.Links) != 0 {
		t.Errorf("first run links %v, want none (a new thread)", first.Links)
	}

	// Steps under runs, tasks under steps, calls under tasks.
	stepsOf := func(run *tracepb.Span) map[string]*tracepb.Span {
		m := map[string]*tracepb.Span{}
		for _, s := range tt.children[string(run.SpanId)] {
			if !strings.HasPrefix(s.Name, "step ") {
				t.Errorf("span %q under run %q, want only steps", s.Name, run.Name)
				continue
			}
			within(t, s, run)
			if attr(s.Attributes, "weft.step") != strings.TrimPrefix(s.Name, "step ") {
				t.Errorf("step span %q has weft.step %q", s.Name, attr(s.Attributes, "weft.step"))
			}
			m[s.Name] = s
		}
		return m
	}
	taskIn := func(step *tracepb.Span, node string) *tracepb.Span {
		ts := tt.named(step, node)
		if len(ts) != 1 {
			t.Fatalf("step %q has tasks %v, want one %q", step.Name, names(tt.children[string(step.SpanId)]), node)
		}
		task := ts[0]
		within(t, task, step)
		if attr(task.Attributes, "weft.node") != node || attr(task.Attributes, "weft.task_id") == "" || attr(task.Attributes, "weft.thread_id") != "t1" {
			t.Errorf("task span %q attributes %v", task.Name, task.Attributes)
		}
		return task
	}
	// First run: step 1 agent (a model call), step 2 approve (interrupted);
	// step 0, the input's, has no task to show.
	s1 := stepsOf(first)
	if len(s1) != 2 || s1["step 1"] == nil || s1["step 2"] == nil {
		t.Fatalf("first run steps %v, want step 1 and step 2", keys(s1))
	}
	agentTask := taskIn(s1["step 1"], agent.AgentNode)
	chat := tt.named(agentTask, "chat bank-model-1")
	if len(chat) != 1 {
		t.Fatalf("agent task has %v, want one chat span", names(tt.children[string(agentTask.SpanId)]))
	}
	c := chat[0]
	within(t, c, agentTask)
	if c.Kind != tracepb.Span_SPAN_KIND_CLIENT || attr(c.Attributes, "gen_ai.operation.name") != "chat" ||
		attr(c.Attributes, "gen_ai.request.model") != "bank-model-1" || attr(c.Attributes, "gen_ai.provider.name") != "scripted" ||
		attr(c.Attributes, "gen_ai.usage.input_tokens") == "" || attr(c.Attributes, "gen_ai.usage.output_tokens") == "" ||
		attr(c.Attributes, "weft.task_id") != attr(agentTask.Attributes, "weft.task_id") {
		t.Errorf("chat span attributes %v", c.Attributes)
	}
	if !strings.Contains(attr(c.Attributes, "gen_ai.input.messages"), "Send Ada 5.") ||
		!strings.Contains(attr(c.Attributes, "gen_ai.output.messages"), `"name":"send_money"`) {
		t.Errorf("chat span contents %q / %q, want the prompt and the tool call (content is on)",
			attr(c.Attributes, "gen_ai.input.messages"), attr(c.Attributes, "gen_ai.output.messages"))
	}
	// The step's checkpoint is one the thread has.
	cp1 := attr(s1["step 1"].Attributes, "weft.checkpoint_id")
	if tup, err := saver.Get(ctx, checkpoint.Ref{ThreadID: "t1", CheckpointID: cp1}); err != nil || tup.Metadata.Step != 1 {
		t.Errorf("step 1 weft.checkpoint_id %q: %v, %+v; want the thread's step-1 checkpoint", cp1, err, tup)
	}
	approve := taskIn(s1["step 2"], agent.ApproveNode)
	if len(approve.Events) != 1 || approve.Events[0].Name != "weft.interrupt" {
		t.Errorf("approve task events %v, want its interrupt", approve.Events)
	}
	if got := attr(s1["step 2"].Attributes, "weft.checkpoint_id"); got != res1.Ref.CheckpointID {
		t.Errorf("interrupted step's checkpoint %q, want the interrupt checkpoint %q", got, res1.Ref.CheckpointID)
	}

	// Second run: approve (answered) at step 2 again, tools at 3, agent at 4.
	s2 := stepsOf(second)
	if len(s2) != 3 || s2["step 2"] == nil || s2["step 3"] == nil || s2["step 4"] == nil {
		t.Fatalf("resumed run steps %v, want steps 2 to 4", keys(s2))
	}
	taskIn(s2["step 2"], agent.ApproveNode)
	tools := taskIn(s2["step 3"], agent.ToolsNode)
	exec := tt.named(tools, "execute_tool send_money")
	if len(exec) != 1 {
		t.Fatalf("tools task has %v, want one execute_tool span", names(tt.children[string(tools.SpanId)]))
	}
	e := exec[0]
	within(t, e, tools)
	if attr(e.Attributes, "gen_ai.operation.name") != "execute_tool" || attr(e.Attributes, "gen_ai.tool.name") != "send_money" ||
		attr(e.Attributes, "gen_ai.tool.call.id") != "call-1" || attr(e.Attributes, "gen_ai.tool.call.result") != "sent 5 to Ada" ||
		attr(e.Attributes, "gen_ai.tool.call.arguments") != `{"to":"Ada","amount":5}` {
		t.Errorf("execute_tool attributes %v", e.Attributes)
	}
	last := taskIn(s2["step 4"], agent.AgentNode)
	if len(tt.named(last, "chat bank-model-1")) != 1 {
		t.Errorf("last agent task has %v, want its chat span", names(tt.children[string(last.SpanId)]))
	}
	if tt.parent(last) != s2["step 4"] {
		t.Error("task span's parent is not its step")
	}
}

// TestNoContentByDefault checks that prompts, completions, tool arguments
// and results and interrupt payloads stay out of spans unless asked for.
func TestNoContentByDefault(t *testing.T) {
	rcv := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	t.Setenv(telemetry.ContentEnv, "")
	ctx := context.Background()
	tr, err := telemetry.FromEnv(ctx)
	if err != nil || tr == nil {
		t.Fatalf("FromEnv = %v, %v", tr, err)
	}
	defer tr.Shutdown(ctx)
	raw, _ := bankAgent(t)
	g := tr.Instrument(raw)
	in := engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "Send Ada 5."}}}
	if _, err := g.Invoke(ctx, in, engine.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("t1")); err != nil {
		t.Fatal(err)
	}
	flush(t, tr)
	spans := rcv.all()
	var sawChat, sawTool, sawInterrupt bool
	for _, s := range spans {
		for _, k := range []string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
			if has(s.Attributes, k) {
				t.Errorf("span %q has %s without content turned on", s.Name, k)
			}
		}
		for _, ev := range s.Events {
			if ev.Name == "weft.interrupt" {
				sawInterrupt = true
				if has(ev.Attributes, "weft.interrupt.value") {
					t.Errorf("span %q interrupt event has its payload without content turned on", s.Name)
				}
			}
		}
		sawChat = sawChat || strings.HasPrefix(s.Name, "chat ")
		sawTool = sawTool || strings.HasPrefix(s.Name, "execute_tool ")
	}
	if !sawChat || !sawTool || !sawInterrupt {
		t.Errorf("spans %v: want chat and execute_tool spans and an interrupt event", names(spans))
	}
}

// TestFromEnv checks which variables turn traces on, and that values it
// cannot honour are errors naming the variable.
func TestFromEnv(t *testing.T) {
	for _, c := range []struct {
		name         string
		env          map[string]string
		on           bool
		errSubstring string
	}{
		{"nothing set", nil, false, ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, true, ""},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, true, ""},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, ""},
		{"exporter none wins", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, false, ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false, ""},
		{"other exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "OTEL_TRACES_EXPORTER"},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, false, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{"bad content flag", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", telemetry.ContentEnv: "yes please"}, false, telemetry.ContentEnv},
		{"ratio sampler", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"}, true, ""},
		{"unknown sampler", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "jaeger_remote"}, false, "OTEL_TRACES_SAMPLER="},
		{"bad ratio", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, false, "OTEL_TRACES_SAMPLER_ARG"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
				"OTEL_SDK_DISABLED", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", telemetry.ContentEnv,
				"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG"} {
				t.Setenv(k, c.env[k])
			}
			tr, err := telemetry.FromEnv(context.Background())
			if tr != nil {
				defer tr.Shutdown(context.Background())
			}
			switch {
			case c.errSubstring != "":
				if err == nil || !strings.Contains(err.Error(), c.errSubstring) {
					t.Errorf("err = %v, want one naming %s", err, c.errSubstring)
				}
			case err != nil:
				t.Errorf("err = %v", err)
			case (tr != nil) != c.on:
				t.Errorf("tracer %v, want on = %v", tr, c.on)
			}
		})
	}
}

func names(spans []*tracepb.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func keys(m map[string]*tracepb.Span) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func hexs(b []byte) string { return hex.EncodeToString(b) }

// The sampler is asked as a run starts: a run sampled out records nothing
// and leaves no traceparent in its checkpoints, and exactly the runs it
// keeps have spans (the same answer the span's start gets).
func TestSampledOutRunsRecordNothing(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0.5")
	rcv := newReceiver(t)
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(rcv.srv.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := telemetry.New(exp)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	k := engine.LastValue[int]("k")
	g, err := engine.NewGraph("counter", k).AddNode("inc", func(_ context.Context, s engine.State) (engine.Output, error) {
		return engine.Updates(k.Set(k.Get(s) + 1)), nil
	}).AddEdge(engine.START, "inc").Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	g = tr.Instrument(g)
	const runs = 64
	marked := map[string]bool{}
	for i := range runs {
		thread := "t" + itoa(int64(i))
		if _, err := g.Invoke(context.Background(), engine.Values{"k": 0}, engine.WithThread(thread)); err != nil {
			t.Fatal(err)
		}
		tup, err := g.Saver().Get(context.Background(), checkpoint.Ref{ThreadID: thread})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := tup.Metadata.Extra[telemetry.MetadataKey].(string); ok {
			marked[v[3:35]] = true // the trace id
		}
	}
	flush(t, tr)
	traced := map[string]bool{}
	for _, sp := range rcv.all() {
		if strings.HasPrefix(sp.Name, "invoke_agent") {
			traced[hexs(sp.TraceId)] = true
		}
	}
	if len(marked) == 0 || len(marked) == runs {
		t.Fatalf("%d of %d runs sampled at a ratio of 0.5", len(marked), runs)
	}
	if !reflect.DeepEqual(marked, traced) {
		t.Errorf("runs marked in their checkpoints %d, runs with spans %d: they must be the same runs", len(marked), len(traced))
	}
}
