package agui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// liveStream reads a response frame by frame while the run goes on.
type liveStream struct {
	t      testing.TB
	resp   *http.Response
	r      *bufio.Reader
	cancel context.CancelFunc
	frames []string
}

func openStream(t testing.TB, url string, body any) *liveStream {
	t.Helper()
	b, _ := json.Marshal(body)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("status %d", resp.StatusCode)
	}
	return &liveStream{t: t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
}

// next returns the next frame ("" at the end of the stream).
func (l *liveStream) next() string {
	l.t.Helper()
	var frame strings.Builder
	for {
		line, err := l.r.ReadString('\n')
		if err != nil {
			if err != io.EOF || frame.Len() > 0 || line != "" {
				l.t.Fatalf("stream broke: %v (partial %q)", err, frame.String()+line)
			}
			return ""
		}
		if line == "\n" {
			f := strings.TrimSuffix(frame.String(), "\n")
			l.frames = append(l.frames, f)
			return f
		}
		frame.WriteString(line)
	}
}

// until reads frames up to and including the first that contains want.
func (l *liveStream) until(want string) {
	l.t.Helper()
	for {
		f := l.next()
		if f == "" {
			l.t.Fatalf("stream ended before %s", want)
		}
		if strings.Contains(f, want) {
			return
		}
	}
}

// rest reads to the end and returns the whole stream.
func (l *liveStream) rest() *stream {
	l.t.Helper()
	for l.next() != "" {
	}
	l.resp.Body.Close()
	l.cancel()
	s := &stream{status: 200}
	s.parse(l.t, strings.Join(l.frames, "\n\n")+"\n\n")
	return s
}

var (
	gateWait  = engine.LastValue[bool]("wait")
	gateCount = engine.LastValue[int]("count")
)

// gateGraph runs a then b, each adding 1 to count; a waits for release
// when the state says wait.
func gateGraph(t testing.TB, release <-chan struct{}) *engine.Graph {
	g, err := engine.NewGraph("gate", gateWait, gateCount).
		AddNode("a", func(_ context.Context, s engine.State) (engine.Output, error) {
			if gateWait.Get(s) {
				<-release
			}
			return engine.Updates(gateCount.Set(gateCount.Get(s) + 1)), nil
		}).
		AddNode("b", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(gateCount.Set(gateCount.Get(s) + 1)), nil
		}).
		AddEdge(engine.START, "a").AddEdge("a", "b").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// threadRecord is everything the store holds for a thread, to show that a
// rejected request changed nothing.
func threadRecord(t testing.TB, saver checkpoint.Saver, thread string) string {
	t.Helper()
	var b strings.Builder
	for tp, err := range saver.List(context.Background(), checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s/%s %d writes\n", tp.Ref.NS, tp.Ref.CheckpointID, len(tp.PendingWrites))
		for _, w := range tp.PendingWrites {
			fmt.Fprintf(&b, "  %s %s %s\n", w.TaskID, w.Channel, w.Value)
		}
	}
	return b.String()
}

func TestHTTPErrors(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil, WithMaxBody(1<<10))
	url := ts.URL + "/agents/map-reduce"
	for _, c := range []struct {
		name, path, method, body string
		status                   int
		want                     string
		ctype                    string // "" means application/json
	}{
		// What any page can send without a preflight: refused, and nothing runs.
		{"text/plain", "/agents/map-reduce", "POST", `{"threadId": "t1", "messages": []}`, 415, "application/json", "text/plain;charset=UTF-8"},
		{"form", "/agents/map-reduce", "POST", `threadId=t1`, 415, "application/json", "application/x-www-form-urlencoded"},
		{"multipart", "/agents/map-reduce", "POST", "--b\r\n\r\n{}\r\n--b--", 415, "application/json", "multipart/form-data; boundary=b"},
		{"no type", "/agents/map-reduce", "POST", `{"threadId": "t1", "messages": []}`, 415, "application/json", "-"},
		{"malformed JSON", "/agents/map-reduce", "POST", `{"threadId": "t1", "runId": `, 400, "malformed RunAgentInput", ""},
		{"not an object", "/agents/map-reduce", "POST", `["threadId"]`, 400, "malformed RunAgentInput", ""},
		{"trailing data", "/agents/map-reduce", "POST", `{"threadId": "t1"} {}`, 400, "extra data", ""},
		{"no threadId", "/agents/map-reduce", "POST", `{"runId": "r1", "messages": []}`, 400, "no threadId", ""},
		{"too big", "/agents/map-reduce", "POST", `{"threadId": "t1", "state": {"subjects": ["` + strings.Repeat("x", 2000) + `"]}}`, 413, "over 1024 bytes", ""},
		{"unknown graph", "/agents/nope", "POST", `{"threadId": "t1"}`, 404, "/agents/map-reduce", ""},
		{"GET", "/agents/map-reduce", "GET", ``, 405, "POST", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, ts.URL+c.path, strings.NewReader(c.body))
			switch c.ctype {
			case "":
				req.Header.Set("Content-Type", "application/json; charset=utf-8")
			case "-":
			default:
				req.Header.Set("Content-Type", c.ctype)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(body), c.want) {
				t.Errorf("got %d %q, want %d containing %q", resp.StatusCode, body, c.status, c.want)
			}
		})
	}
	// Nothing reached the store.
	if rec := threadRecord(t, ts.saver, "t1"); rec != "" {
		t.Errorf("store after rejected requests:\n%s", rec)
	}
	_ = url
}

func TestSecondRunOnBusyThread(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, []*engine.Graph{gateGraph(t, release)}, nil)
	url := ts.URL + "/agents/gate"
	first := openStream(t, url, input("busy", "run-1", "state", map[string]any{"wait": true}))
	first.until(`"stepName":"a"`)

	again := post(t, url, input("busy", "run-2", "state", map[string]any{"wait": false}))
	if again.status != http.StatusConflict || !strings.Contains(again.body, `thread "busy" already has a run in progress`) {
		t.Fatalf("second run: %d %s", again.status, again.body)
	}
	// Other threads are not held up.
	other := post(t, url, input("other", "run-3", "state", map[string]any{"wait": false}))
	if other.status != 200 || other.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("other thread: %d %v", other.status, other.types())
	}
	close(release)
	s := first.rest()
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	if s.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("first run %v", s.types())
	}
	// Once the first run is over the thread takes runs again.
	if s := post(t, url, input("busy", "run-4")); s.status != 200 {
		t.Fatalf("after the run: %d %s", s.status, s.body)
	}
}

// twoQuestions asks two interrupts in parallel (nodes q1 and q2), and
// stores the answers.
func twoQuestions(t testing.TB) *engine.Graph {
	answers := engine.List[string]("answers")
	ask := func(name string) engine.NodeFunc {
		return func(ctx context.Context, s engine.State) (engine.Output, error) {
			v, err := engine.Interrupt(ctx, map[string]any{"question": name + "?", "responseSchema": map[string]any{"type": "string"}})
			if err != nil {
				return nil, err
			}
			return engine.Updates(answers.Add(fmt.Sprintf("%s=%v", name, v))), nil
		}
	}
	g, err := engine.NewGraph("two questions", answers).
		AddNode("q1", ask("q1")).AddNode("q2", ask("q2")).
		AddEdge(engine.START, "q1").AddEdge(engine.START, "q2").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestResumeErrorsChangeNothing(t *testing.T) {
	ts := newTestServer(t, append(demoGraphs(t), twoQuestions(t)), nil)
	url := ts.URL + "/agents/two-questions"
	s := post(t, url, input("q", "run-1"))
	ids := s.interruptIDs()
	if len(ids) != 2 {
		t.Fatalf("interrupts %v (%v)", ids, s.types())
	}
	ints := s.last()["outcome"].(map[string]any)["interrupts"].([]any)
	if schema := ints[0].(map[string]any)["responseSchema"]; fmt.Sprint(schema) != "map[type:string]" {
		t.Errorf("responseSchema %v", schema)
	}
	if n := len(s.find("CUSTOM")); n != 2 {
		t.Errorf("%d on_interrupt events, want one per interrupt", n)
	}
	before := threadRecord(t, ts.saver, "q")

	entry := func(id, status string, payload any) map[string]any {
		e := map[string]any{"interruptId": id, "status": status}
		if payload != nil {
			e["payload"] = payload
		}
		return e
	}
	for _, c := range []struct {
		name string
		body map[string]any
		want string
	}{
		{"missing one", input("q", "run-2", "resume", []any{entry(ids[0], "resolved", "yes")}), "does not answer pending interrupt(s) " + ids[1]},
		{"unknown id", input("q", "run-2", "resume", []any{entry(ids[0], "resolved", "yes"), entry(ids[1], "resolved", "no"), entry("nope", "resolved", "x")}), `names interrupt "nope", which is not pending`},
		{"twice", input("q", "run-2", "resume", []any{entry(ids[0], "resolved", "yes"), entry(ids[0], "resolved", "no")}), "a second time"},
		{"no id", input("q", "run-2", "resume", []any{entry("", "resolved", "yes")}), "has no interruptId"},
		{"bad status", input("q", "run-2", "resume", []any{entry(ids[0], "approved", nil), entry(ids[1], "resolved", "no")}), `status is "approved"`},
		{"legacy with two pending", input("q", "run-2", "forwardedProps", map[string]any{"command": map[string]any{"resume": "yes"}}), "has 2 pending"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := post(t, url, c.body)
			if err := verify(r.lines); err != nil {
				t.Fatal(err)
			}
			if got := r.types(); len(got) != 2 || got[1] != "RUN_ERROR" {
				t.Fatalf("events %v", got)
			}
			e := r.last()
			if e["code"] != CodeInvalidResume || !strings.Contains(e["message"].(string), c.want) {
				t.Errorf("RUN_ERROR %v, want %q", e, c.want)
			}
			if after := threadRecord(t, ts.saver, "q"); after != before {
				t.Errorf("the store changed:\nbefore\n%s\nafter\n%s", before, after)
			}
		})
	}

	// Without a resume the thread reports its interrupts again.
	again := post(t, url, input("q", "run-3"))
	if got := again.interruptIDs(); len(got) != 2 || again.find("STATE_SNAPSHOT") == nil || again.find("MESSAGES_SNAPSHOT") == nil {
		t.Errorf("repeat: %v %v", got, again.types())
	}
	if after := threadRecord(t, ts.saver, "q"); after != before {
		t.Errorf("a request without resume changed the store")
	}

	// Answering both resumes; one cancelled answer reaches the node as the
	// LangGraph integration's marker.
	done := post(t, url, input("q", "run-4", "resume", []any{entry(ids[0], "resolved", "yes"), entry(ids[1], "cancelled", nil)}))
	if err := verify(done.lines); err != nil {
		t.Fatal(err)
	}
	if out := done.last()["outcome"]; fmt.Sprint(out) != "map[type:success]" {
		t.Fatalf("outcome %v (%v)", out, done.types())
	}
	snap, _ := ts.h.Graph("/agents/two-questions").GetState(context.Background(), engine.WithThread("q"))
	got := fmt.Sprint(snap.Values["answers"])
	if !strings.Contains(got, "=yes") || !strings.Contains(got, "__agui_cancelled__:true") {
		t.Errorf("answers %v", got)
	}

	// Resuming a thread with no interrupts, or no thread at all, is an error.
	for _, thread := range []string{"q", "fresh"} {
		r := post(t, url, input(thread, "run-5", "resume", []any{entry(ids[0], "resolved", "yes")}))
		if e := r.last(); e["type"] != "RUN_ERROR" || !strings.Contains(e["message"].(string), "has no pending interrupts") {
			t.Errorf("thread %s: %v", thread, e)
		}
	}
	if rec := threadRecord(t, ts.saver, "fresh"); rec != "" {
		t.Errorf("a rejected resume created thread fresh:\n%s", rec)
	}
}

func TestLegacyResume(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	// The agent's approval, as CopilotKit ≤1.60 sends it.
	url := ts.URL + "/agents/tool-agent"
	user := []map[string]any{{"id": "u1", "role": "user", "content": "Check my balance, then send 100 to Bob."}}
	s := post(t, url, input("legacy", "run-1", "messages", user))
	if len(s.interruptIDs()) != 1 {
		t.Fatalf("no interrupt: %v", s.types())
	}
	msgs := s.find("MESSAGES_SNAPSHOT")[0]["messages"]
	r := post(t, url, input("legacy", "run-2", "messages", msgs,
		"forwardedProps", map[string]any{"command": map[string]any{"resume": "approve", "interruptEvent": "…"}}))
	if err := verify(r.lines); err != nil {
		t.Fatal(err)
	}
	final := r.find("MESSAGES_SNAPSHOT")[0]["messages"].([]any)
	if last := final[len(final)-1].(map[string]any); !strings.Contains(last["content"].(string), "Sent 100 to Bob.") {
		t.Errorf("answer %v", last)
	}

	// A JSON text resume is decoded, as the LangGraph integration does.
	url = ts.URL + "/agents/writing-assistant"
	post(t, url, input("legacy-w", "run-1", "state", map[string]any{"topic": "kelp"}))
	r = post(t, url, input("legacy-w", "run-2", "forwardedProps", map[string]any{"command": map[string]any{"resume": `{"action":"revise","feedback":"shorter"}`}}))
	if err := verify(r.lines); err != nil {
		t.Fatal(err)
	}
	snaps := r.find("STATE_SNAPSHOT")
	if len(r.interruptIDs()) != 1 || !strings.Contains(fmt.Sprint(snaps[len(snaps)-1]["snapshot"]), "Revised after review: shorter") {
		t.Errorf("revise: %v", r.types())
	}
}

func TestWrongGraphAndBadState(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	post(t, ts.URL+"/agents/map-reduce", input("mine", "run-1", "state", map[string]any{"subjects": []string{"kelp"}}))
	before := threadRecord(t, ts.saver, "mine")
	r := post(t, ts.URL+"/agents/writing-assistant", input("mine", "run-2", "state", map[string]any{"topic": "kelp"}))
	if e := r.last(); e["code"] != CodeWrongGraph || !strings.Contains(e["message"].(string), `thread "mine" belongs to graph "map-reduce"`) {
		t.Errorf("wrong graph: %v", e)
	}
	if threadRecord(t, ts.saver, "mine") != before {
		t.Error("the store changed")
	}

	for _, c := range []struct{ state, want string }{
		{`{"topic": 5}`, `state key "topic"`},
		{`"a string"`, "must be a JSON object"},
	} {
		body := input("bad-state", "run-1")
		body["state"] = json.RawMessage(c.state)
		r = post(t, ts.URL+"/agents/writing-assistant", body)
		if e := r.last(); e["code"] != CodeInvalidInput || !strings.Contains(e["message"].(string), c.want) {
			t.Errorf("state %s: %v", c.state, e)
		}
	}
	body := input("bad-msg", "run-1", "messages", []map[string]any{{"id": "x", "role": "wizard", "content": "hi"}})
	if e := post(t, ts.URL+"/agents/tool-agent", body).last(); e["code"] != CodeInvalidInput || !strings.Contains(e["message"].(string), `unknown role "wizard"`) {
		t.Errorf("bad message: %v", e)
	}
	for _, thread := range []string{"bad-state", "bad-msg"} {
		if rec := threadRecord(t, ts.saver, thread); rec != "" {
			t.Errorf("thread %s was stored:\n%s", thread, rec)
		}
	}
}

// A client holding the conversation asks a follow-up: only the new message
// is input, and state it echoes back unchanged is not written again (a list
// channel would otherwise grow).
func TestFollowUpAndNothingNew(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	url := ts.URL + "/agents/tool-agent"
	user := []map[string]any{{"id": "u1", "role": "user", "content": "Check my balance, then send 250 to Alice."}}
	s := post(t, url, input("chat", "run-1", "messages", user))
	msgs := s.find("MESSAGES_SNAPSHOT")[0]["messages"]
	s = post(t, url, input("chat", "run-2", "messages", msgs, "resume", []any{map[string]any{"interruptId": s.interruptIDs()[0], "status": "resolved", "payload": "approve"}}))
	msgs = s.find("MESSAGES_SNAPSHOT")[0]["messages"]
	state := s.find("STATE_SNAPSHOT")
	clientState := state[len(state)-1]["snapshot"]

	// Nothing new: the thread is reported as it is, nothing runs.
	before := threadRecord(t, ts.saver, "chat")
	same := post(t, url, input("chat", "run-3", "messages", msgs, "state", clientState))
	if got := strings.Join(same.types(), " "); got != "RUN_STARTED STATE_SNAPSHOT MESSAGES_SNAPSHOT RUN_FINISHED" {
		t.Errorf("nothing new: %s", got)
	}
	if threadRecord(t, ts.saver, "chat") != before {
		t.Error("a request with nothing new changed the store")
	}

	follow := append(msgs.([]any), map[string]any{"id": "u2", "role": "user", "content": [](map[string]any){{"type": "text", "text": "What is my balance now?"}}})
	s = post(t, url, input("chat", "run-4", "messages", follow, "state", clientState))
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	snap, _ := ts.h.Graph("/agents/tool-agent").GetState(context.Background(), engine.WithThread("chat"))
	if ledger := snap.Values["ledger"].([]string); len(ledger) != 1 {
		t.Errorf("ledger %v: echoed state was written again", ledger)
	}
	all := snap.Values["messages"].([]engine.Message)
	if all[5].ID != "u2" || all[5].Content != "What is my balance now?" || !strings.HasPrefix(all[len(all)-1].Content, "Done.") {
		t.Errorf("messages %+v", all[5:])
	}
}

// A client that disconnects mid-step: the step finishes and is
// checkpointed, the run pauses before the next step, and a later request
// with nothing new continues the thread.
func TestClientDisconnectPausesCleanly(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, []*engine.Graph{gateGraph(t, release)}, nil)
	gone, ended := make(chan string, 1), make(chan string, 4)
	ts.h.onGone = func(thread string) { gone <- thread }
	ts.h.onEnd = func(thread string) { ended <- thread }
	url := ts.URL + "/agents/gate"

	l := openStream(t, url, input("dc", "run-1", "state", map[string]any{"wait": true}))
	l.until(`"stepName":"a"`)
	l.cancel()
	l.resp.Body.Close()
	if th := <-gone; th != "dc" {
		t.Fatalf("gone %q", th)
	}
	close(release)
	if th := <-ended; th != "dc" {
		t.Fatalf("ended %q", th)
	}
	g := ts.h.Graph("/agents/gate")
	snap, err := g.GetState(context.Background(), engine.WithThread("dc"))
	if err != nil {
		t.Fatal(err)
	}
	if snap.Values["count"] != 1 || fmt.Sprint(snap.Next) != "[b]" {
		t.Fatalf("after the disconnect: count %v, next %v", snap.Values["count"], snap.Next)
	}

	s := post(t, url, input("dc", "run-2", "state", map[string]any{"wait": true, "count": 1}))
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.types(), " "); !strings.Contains(got, "STEP_STARTED STEP_FINISHED") || s.last()["outcome"] == nil {
		t.Fatalf("continue: %s", got)
	}
	snap, _ = g.GetState(context.Background(), engine.WithThread("dc"))
	if snap.Values["count"] != 2 || len(snap.Next) != 0 {
		t.Fatalf("after continuing: %v %v", snap.Values, snap.Next)
	}
}

func TestKeepAlivePings(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, []*engine.Graph{gateGraph(t, release)}, nil, WithKeepAlive(time.Millisecond))
	l := openStream(t, ts.URL+"/agents/gate", input("ping", "run-1", "state", map[string]any{"wait": true}))
	l.until(": ping") // the run is waiting in step a: only pings can arrive
	close(release)
	s := l.rest()
	if s.pings == 0 {
		t.Fatal("no ping parsed")
	}
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
}

func TestTimestamps(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	ts := newTestServer(t, demoGraphs(t), nil, WithClock(func() time.Time { return at }))
	s := post(t, ts.URL+"/agents/map-reduce", input("ts", "run-1", "state", map[string]any{"subjects": []string{"kelp"}}))
	for _, e := range s.events {
		if e["timestamp"] != float64(at.UnixMilli()) {
			t.Fatalf("timestamp of %v", e)
		}
	}
	// A missing runId is made up, and the run stored under it.
	body := input("ts2", "")
	delete(body, "runId")
	body["state"] = map[string]any{"subjects": []string{"kelp"}}
	s = post(t, ts.URL+"/agents/map-reduce", body)
	if id := s.events[0]["runId"]; id != "id-1" || s.last()["runId"] != id {
		t.Fatalf("runId %v", id)
	}
	snap, _ := ts.h.Graph("/agents/map-reduce").GetState(context.Background(), engine.WithThread("ts2"))
	if snap.Metadata.RunID != "id-1" {
		t.Errorf("stored run id %q", snap.Metadata.RunID)
	}
}

func TestNewHandlerErrors(t *testing.T) {
	g := gateGraph(t, nil)
	for _, c := range []struct {
		graphs map[string]*engine.Graph
		opts   []Option
		want   string
	}{
		{nil, nil, "no graphs"},
		{map[string]*engine.Graph{"/gate": g}, nil, `graph "gate" has no checkpoint saver`},
		{map[string]*engine.Graph{"gate": g}, []Option{WithSaver(memory.New())}, "must start with /"},
		{map[string]*engine.Graph{"/gate": nil}, nil, "nil"},
	} {
		if _, err := NewHandler(c.graphs, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.graphs, err, c.want)
		}
	}
	if _, err := Mount([]*engine.Graph{g, g}); err == nil || !strings.Contains(err.Error(), "/agents/gate") {
		t.Errorf("duplicate slugs: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"writing assistant": "writing-assistant", "map-reduce": "map-reduce", "  Tool  Agent! ": "tool-agent",
		"v2_graph": "v2-graph", "": "graph", "émile": "mile", "--": "graph",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, "127.0.0.1:0", memory.New(), demoGraphs(t), WithOutput(pw))
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	sc.Scan()
	base := sc.Text()[strings.LastIndex(sc.Text(), " ")+1:]
	go io.Copy(io.Discard, pr)

	resp, err := http.Get(base + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	var list []struct{ Name, Path, URL string }
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	if len(list) != 3 || list[0].Path != "/agents/map-reduce" || list[0].URL != base+"/agents/map-reduce" {
		t.Fatalf("agents %+v", list)
	}
	s := post(t, base+"/agents/map-reduce", input("serve", "run-1", "state", map[string]any{"subjects": []string{"kelp"}}))
	if err := verify(s.lines); err != nil || s.last()["type"] != "RUN_FINISHED" {
		t.Fatalf("%v %v", err, s.types())
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), "127.0.0.1:bad", memory.New(), demoGraphs(t), WithOutput(nil)); err == nil || !strings.Contains(err.Error(), "listening on 127.0.0.1:bad") {
		t.Errorf("bad address: %v", err)
	}
}

// A node that fails ends the run with RUN_ERROR naming the node and its
// error; the thread keeps its input checkpoint and can be retried.
func TestNodeErrorIsRunError(t *testing.T) {
	ts := newTestServer(t, demoGraphs(t), nil)
	s := post(t, ts.URL+"/agents/writing-assistant", input("empty", "run-1", "state", map[string]any{"topic": " "}))
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	e := s.last()
	if e["type"] != "RUN_ERROR" || e["code"] != CodeRunFailed || !strings.Contains(e["message"].(string), `node "plan": the topic is empty`) {
		t.Fatalf("last event %v", e)
	}
	s = post(t, ts.URL+"/agents/writing-assistant", input("empty", "run-2", "state", map[string]any{"topic": "kelp"}))
	if len(s.interruptIDs()) != 1 {
		t.Fatalf("retry with a topic: %v", s.types())
	}
}

// An interrupt raised inside a subgraph is reported with its namespace and
// resumed by id like any other.
func TestSubgraphInterrupt(t *testing.T) {
	answer := engine.LastValue[string]("answer")
	sub, err := engine.NewGraph("inner", answer).
		AddNode("ask", func(ctx context.Context, s engine.State) (engine.Output, error) {
			v, err := engine.Interrupt(ctx, "Name?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(answer.Set(fmt.Sprint(v))), nil
		}).
		AddEdge(engine.START, "ask").Compile()
	if err != nil {
		t.Fatal(err)
	}
	outer, err := engine.NewGraph("outer", answer).
		AddSubgraph("inner", sub).
		AddEdge(engine.START, "inner").Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, []*engine.Graph{outer}, nil)
	url := ts.URL + "/agents/outer"
	s := post(t, url, input("sub", "run-1"))
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	ints := s.last()["outcome"].(map[string]any)["interrupts"].([]any)
	it := ints[0].(map[string]any)
	weft := it["metadata"].(map[string]any)["weft"].(map[string]any)
	if it["message"] != "Name?" || weft["node"] != "ask" || !strings.HasPrefix(fmt.Sprint(weft["ns"]), "inner:") {
		t.Fatalf("interrupt %v", it)
	}
	if c := s.find("CUSTOM"); len(c) != 1 || c[0]["value"] != "Name?" {
		t.Errorf("legacy event %v", c)
	}
	r := post(t, url, input("sub", "run-2", "resume", []any{map[string]any{"interruptId": it["id"], "status": "resolved", "payload": "Ada"}}))
	if err := verify(r.lines); err != nil {
		t.Fatal(err)
	}
	snaps := r.find("STATE_SNAPSHOT")
	if fmt.Sprint(r.last()["outcome"]) != "map[type:success]" || fmt.Sprint(snaps[len(snaps)-1]["snapshot"]) != "map[answer:Ada]" {
		t.Fatalf("resume: %v", r.lines)
	}
}

// StopRuns pauses a run at its next step boundary: the client gets a
// RUN_FINISHED without an outcome, and the thread is ready to continue.
func TestStopRuns(t *testing.T) {
	release := make(chan struct{})
	ts := newTestServer(t, []*engine.Graph{gateGraph(t, release)}, nil)
	l := openStream(t, ts.URL+"/agents/gate", input("stop", "run-1", "state", map[string]any{"wait": true}))
	l.until(`"stepName":"a"`)
	ts.h.StopRuns()
	close(release)
	s := l.rest()
	if err := verify(s.lines); err != nil {
		t.Fatal(err)
	}
	if fin := s.last(); fin["type"] != "RUN_FINISHED" || fin["outcome"] != nil {
		t.Fatalf("last event %v", fin)
	}
	snap, _ := ts.h.Graph("/agents/gate").GetState(context.Background(), engine.WithThread("stop"))
	if fmt.Sprint(snap.Next) != "[b]" || snap.Values["count"] != 1 {
		t.Fatalf("thread after stop: %v %v", snap.Next, snap.Values)
	}
}

// A client that stops reading without disconnecting is treated as gone once
// a write has waited longer than the write timeout: the run pauses at the
// next step boundary and the thread is released.
func TestStalledClientReleasesThread(t *testing.T) {
	quit := make(chan struct{})
	big := strings.Repeat("x", 64<<10)
	g, err := engine.NewGraph("flood", gateCount).
		AddNode("a", func(ctx context.Context, s engine.State) (engine.Output, error) {
			for range 4096 { // up to 256 MiB, far more than socket buffers hold
				select {
				case <-quit:
					return engine.Updates(gateCount.Set(1)), nil
				default:
				}
				engine.EmitMessage(ctx, engine.Message{ID: "flood", Role: engine.RoleAssistant, Content: big})
			}
			return nil, fmt.Errorf("the client kept reading")
		}).
		AddNode("b", func(ctx context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(gateCount.Set(2)), nil
		}).
		AddEdge(engine.START, "a").AddEdge("a", "b").Compile()
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, []*engine.Graph{g}, nil, WithWriteTimeout(20*time.Millisecond))
	ended := make(chan string, 1)
	ts.h.onGone = func(string) { close(quit) }
	ts.h.onEnd = func(thread string) { ended <- thread }
	l := openStream(t, ts.URL+"/agents/flood", input("stall", "run-1"))
	defer l.cancel()
	// Read nothing more: the server's writes back up until one times out.
	<-ended
	snap, _ := ts.h.Graph("/agents/flood").GetState(context.Background(), engine.WithThread("stall"))
	if snap.Values["count"] != 1 || fmt.Sprint(snap.Next) != "[b]" {
		t.Fatalf("thread after the stall: %v %v", snap.Values, snap.Next)
	}
}
