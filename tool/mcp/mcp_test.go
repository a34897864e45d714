package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftstudio/weft/internal/testenv"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool"
	"github.com/weftstudio/weft/tool/mcp"
)

var msgs = engine.Messages("messages")

func connect(t testing.TB, srv mcp.Server, opts ...mcp.Option) *mcp.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func tools(c *mcp.Client) []tool.Tool { return c.Tools() }

// agentRun runs a ReAct agent whose scripted model makes calls, then
// answers "done"; it returns the conversation and the custom stream's
// events. The run must end within limit.
func agentRun(t *testing.T, ts []tool.Tool, limit time.Duration, calls ...engine.ToolCall) (conv, seen []engine.Message) {
	t.Helper()
	turns := scripted.Replies(scripted.Turn{Calls: calls}, scripted.Turn{Text: "done"})
	var mu sync.Mutex
	m := scripted.New(func(req *model.Request) (scripted.Turn, error) {
		mu.Lock()
		seen = req.Messages // the last request: what the model read of the tools' results
		mu.Unlock()
		return turns(req)
	})
	g, err := agent.New(m, ts, agent.WithCompileOptions(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "go"}}}, engine.WithThread("t"))
	if err != nil {
		t.Fatalf("the run failed: %v", err)
	}
	if !res.Done {
		t.Fatalf("the run did not finish: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	return msgs.Get(engine.StateOf(res.Values)), seen
}

// attached returns the attachments the model was given with the result of
// the call id.
func attached(seen []engine.Message, id string) []engine.Attachment {
	for _, m := range seen {
		if m.Role == engine.RoleTool && m.ToolCallID == id {
			return m.Attachments
		}
	}
	return nil
}

// results maps each tool message's call id to its content.
func results(conv []engine.Message) map[string]string {
	out := map[string]string{}
	for _, m := range conv {
		if m.Role == engine.RoleTool {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

func TestToolsListedWithTheServersSchemas(t *testing.T) {
	c := connect(t, goServer(t), mcp.WithPrefix("go_"), mcp.WithTools("echo", "shout"))
	got := c.Tools()
	if len(got) != 2 || got[0].Spec().Name != "go_echo" || got[1].Spec().Name != "go_shout" || c.Tool("echo") != got[0] || c.Tool("go_echo") != nil || c.Tool("add") != nil {
		t.Fatalf("tools %v", got)
	}
	if got[0].Spec().Description != "Echoes text." {
		t.Errorf("description %q", got[0].Spec().Description)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(got[1].Spec().Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) != 1 || schema.Required[0] != "word" || !strings.Contains(string(schema.Properties["word"]), `"minLength":2`) {
		t.Errorf("shout's parameters %s are not the server's schema", got[1].Spec().Parameters)
	}
}

func TestAgentCallsToolsOverStdio(t *testing.T) {
	c := connect(t, goServer(t))
	conv, seen := agentRun(t, tools(c), 30*time.Second,
		engine.ToolCall{ID: "e", Name: "echo", Args: `{"text":"hi"}`},
		engine.ToolCall{ID: "a", Name: "add", Args: `{"a":2,"b":40}`},
		engine.ToolCall{ID: "r", Name: "report", Args: `{}`},
		engine.ToolCall{ID: "p", Name: "picture", Args: `{}`},
		engine.ToolCall{ID: "w", Name: "wrap", Args: `{}`},
		engine.ToolCall{ID: "f", Name: "fail", Args: `{}`},
		engine.ToolCall{ID: "s", Name: "shout", Args: `{"word":"x"}`},
	)
	r := results(conv)
	want := map[string]string{
		"e": "echo: hi",
		"a": `{"sum":42}`,                    // structured content, once: the SDK's text repeats it
		"r": "three items\n" + `{"items":3}`, // text and structured content that differ: both
		"p": "a dot\n[attachment 1: image image/png, " + fmt.Sprint(len(pngBytes)) + " B]\n" + `{"png":"[attachment 1]","width":1}`,
		"f": "Error: the disk is full",
		"w": "a\nb", // structured content that only wraps the text: once
	}
	for id, w := range want {
		if r[id] != w {
			t.Errorf("call %s: got %q, want %q", id, r[id], w)
		}
	}
	if !strings.HasPrefix(r["s"], `Error: invalid arguments for tool "shout": at /word: minLength`) || !strings.Contains(r["s"], "fit its schema") {
		t.Errorf("invalid arguments: got %q", r["s"])
	}
	if conv[len(conv)-1].Content != "done" {
		t.Errorf("last message %+v", conv[len(conv)-1])
	}
	for _, id := range []string{"e", "a", "r", "w", "f", "s"} {
		if a := attached(seen, id); a != nil {
			t.Errorf("call %s: attachments %+v on a text result", id, a)
		}
	}
	if a := attached(seen, "p"); len(a) != 1 || a[0].Kind != engine.AttachImage || a[0].MIMEType != "image/png" || !bytes.Equal(a[0].Data, pngBytes) {
		t.Errorf("the model was given the picture as %+v", a)
	}
}

func TestInvalidArgumentsNeverReachTheServer(t *testing.T) {
	var calls atomic.Int32
	srv := httpServer(t, "", &calls)
	c := connect(t, mcp.Server{URL: srv.URL})
	shout := find(t, c, "shout")
	for _, args := range []string{`{"word":"x"}`, `{}`, `{"word":3}`, `[1]`, `{"word":`} {
		_, err := shout.Call(context.Background(), args)
		var ae *tool.ArgumentError
		if !errors.As(err, &ae) {
			t.Errorf("args %s: got %v, want an ArgumentError", args, err)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the server got %d calls with invalid arguments", n)
	}
	out, err := shout.Call(context.Background(), `{"word":"hey"}`)
	if err != nil || out != `{"word":"hey"}!` || calls.Load() != 1 {
		t.Errorf("valid call: %q, %v (%d calls)", out, err, calls.Load())
	}
}

func find(t testing.TB, c *mcp.Client, name string) *mcp.Tool {
	t.Helper()
	x := c.Tool(name)
	if x == nil {
		t.Fatalf("no tool %q", name)
	}
	return x
}

// A server that exits during a call fails that call, through the agent,
// with an error saying so (with its exit status and last stderr), without
// holding up the run; the next call starts it again.
func TestServerThatDiesMidCall(t *testing.T) {
	c := connect(t, goServer(t))
	start := time.Now()
	conv, _ := agentRun(t, tools(c), 20*time.Second, engine.ToolCall{ID: "d", Name: "die", Args: `{}`})
	got := results(conv)["d"]
	for _, want := range []string{"Error: MCP server go-test stopped during the call of die", "exit status 3", "dying on purpose", "next call reconnects"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model read %q, want it to say %q", got, want)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %v after the server died", d)
	}
	_, err := find(t, c, "die").Call(context.Background(), `{}`) // reconnects, dies again
	var te *mcp.ToolError
	if !errors.As(err, &te) || !te.Lost {
		t.Fatalf("second die: %v", err)
	}
	out, err := find(t, c, "echo").Call(context.Background(), `{"text":"back"}`)
	if err != nil || out != "echo: back" {
		t.Fatalf("after the crash: %q, %v", out, err)
	}
}

// A server that never answers times out with a tool error the model reads;
// the run goes on.
func TestServerThatHangs(t *testing.T) {
	c := connect(t, goServer(t), mcp.WithCallTimeout(300*time.Millisecond))
	start := time.Now()
	conv, _ := agentRun(t, tools(c), 20*time.Second, engine.ToolCall{ID: "h", Name: "hang", Args: `{}`})
	got := results(conv)["h"]
	if got != "Error: MCP server go-test did not answer the call of hang within 300ms; the call was cancelled" {
		t.Errorf("the model read %q", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %v", d)
	}
	// The server is alive (it answers pings), so the session is kept.
	out, err := find(t, c, "echo").Call(context.Background(), `{"text":"still here"}`)
	if err != nil || out != "echo: still here" {
		t.Fatalf("after the timeout: %q, %v", out, err)
	}
}

// Cancelling the run cancels the call on the server, and the node fails
// with the cancellation, not a tool error.
func TestCancellationReachesTheServer(t *testing.T) {
	var stderr testenv.Buffer
	c := connect(t, goServer(t), mcp.WithStderr(&stderr))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := find(t, c, "sleep").Call(ctx, `{"ms":20000}`)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call took %v to end after the cancellation", d)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "sleep was cancelled") {
		if time.Now().After(deadline) {
			t.Fatalf("the server was not told the call was cancelled; its stderr: %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Over HTTP, headers go with every request, and a server that goes away
// during a call fails it with a clear error; once it is back, the next call
// opens a new session.
func TestHTTPHeadersAndLostServer(t *testing.T) {
	if _, err := mcp.Connect(context.Background(), mcp.Server{URL: httpServer(t, "Bearer s3cret", nil).URL}); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("without the header: %v, want Unauthorized", err)
	}
	srv := httpServer(t, "Bearer s3cret", nil)
	c := connect(t, mcp.Server{Name: "web", URL: srv.URL, Header: http.Header{"Authorization": {"Bearer s3cret"}}}, mcp.WithCallTimeout(10*time.Second))
	out, err := find(t, c, "echo").Call(context.Background(), `{"text":"over http"}`)
	if err != nil || out != "echo: over http" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		srv.CloseClientConnections()
	}()
	start := time.Now()
	_, err = find(t, c, "sleep").Call(context.Background(), `{"ms":1500}`)
	var te *mcp.ToolError
	if !errors.As(err, &te) || !te.Lost || !strings.Contains(te.Message, "MCP server web dropped the connection during the call of sleep") {
		t.Fatalf("got %v after %v, want the lost connection", err, time.Since(start))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the call took %v to fail", d)
	}
	out, err = find(t, c, "echo").Call(context.Background(), `{"text":"again"}`)
	if err != nil || out != "echo: again" {
		t.Fatalf("after reconnecting: %q, %v", out, err)
	}
}

func TestConnectErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		srv  mcp.Server
		opts []mcp.Option
		want string
	}{
		{mcp.Server{}, nil, "neither a Command nor a URL"},
		{mcp.Server{Command: "x", URL: "http://x"}, nil, "both a Command"},
		{mcp.Server{URL: "ftp://x"}, nil, "not an http:// or https:// URL"},
		{mcp.Server{Command: "x", Header: http.Header{}}, nil, "Header and HTTPClient are for a URL"},
		{mcp.Server{Command: "weft-no-such-server-command"}, nil, `starting server weft-no-such-server-command: exec: "weft-no-such-server-command": executable file not found`},
		{goServer(t), []mcp.Option{mcp.WithTools("echo", "nope")}, "WithTools names nope, which server go-test does not have; it has: add, die, echo, fail, "},
		{mcp.Server{Name: "false", Command: "sh", Args: []string{"-c", "echo broken config >&2; exit 2"}}, nil, `connecting to server false`},
	} {
		_, err := mcp.Connect(ctx, c.srv, c.opts...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Connect(%+v): %v, want %q", c.srv, err, c.want)
		}
	}
	// A command that exits at once says how, and what it printed.
	_, err := mcp.Connect(ctx, mcp.Server{Name: "false", Command: "sh", Args: []string{"-c", "echo broken config >&2; exit 2"}})
	if err == nil || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "broken config") {
		t.Errorf("a command that exits: %v", err)
	}
	// One that never lists its tools fails Connect within the connect
	// timeout.
	hang := goServer(t)
	hang.Env = []string{"WEFT_MCP_TEST_SERVER=hang-list"}
	start := time.Now()
	_, err = mcp.Connect(ctx, hang, mcp.WithConnectTimeout(500*time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), "listing the tools of server go-test") || !strings.Contains(err.Error(), "no answer within 500ms") {
		t.Errorf("a server that never lists its tools: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Connect took %v with a 500ms timeout", d)
	}
	// A chatty one is quoted by its last lines only.
	_, err = mcp.Connect(ctx, mcp.Server{Name: "chatty", Command: "sh", Args: []string{"-c", "for i in $(seq 300); do echo log line $i >&2; done; exit 1"}})
	if err == nil || !strings.Contains(err.Error(), "log line 300") || strings.Contains(err.Error(), "log line 200\\n") || len(err.Error()) > 600 {
		t.Errorf("a chatty command that exits: %v", err)
	}
	c := connect(t, goServer(t))
	c.Close()
	if _, err := find(t, c, "echo").Call(ctx, `{"text":"x"}`); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("a call after Close: %v", err)
	}
}

// An MCP tool can need approval like any other: the call waits for the
// human, and runs once approved.
func TestApprovalBeforeAnMCPTool(t *testing.T) {
	c := connect(t, goServer(t))
	m := scripted.New(func(req *model.Request) (scripted.Turn, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == engine.RoleTool {
			return scripted.Turn{Text: "said: " + last.Content}, nil
		}
		return scripted.Turn{Calls: []engine.ToolCall{{ID: "e1", Name: "echo", Args: `{"text":"approved"}`}}}, nil
	})
	g, err := agent.New(m, tools(c), agent.WithApproval("echo"), agent.WithCompileOptions(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "go"}}}, engine.WithThread("a"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("want one question: %v %+v", err, res)
	}
	if q, ok := res.Interrupts[0].Value.(agent.ApprovalRequest); !ok || q.Tool != "echo" {
		t.Fatalf("question %#v", res.Interrupts[0].Value)
	}
	res, err = g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("a"))
	if err != nil || !res.Done {
		t.Fatalf("after approval: %v %+v", err, res)
	}
	conv := msgs.Get(engine.StateOf(res.Values))
	if last := conv[len(conv)-1].Content; last != "said: echo: approved" {
		t.Errorf("the answer %q", last)
	}
}

// A server that changes its tools says so (notifications/tools/
// list_changed): the client lists them again, the Tools it handed out
// take their new definitions, a removed one fails its calls saying why,
// and the program is told, over stdio and over HTTP.
func TestToolListChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		srv  func(t *testing.T) mcp.Server
	}{
		{"stdio", func(t *testing.T) mcp.Server { return goServer(t) }},
		{"http", func(t *testing.T) mcp.Server { return mcp.Server{URL: httpServer(t, "", nil).URL} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			changed := make(chan []tool.Tool, 4)
			c := connect(t, tc.srv(t), mcp.WithToolsChanged(func(ts []tool.Tool, err error) {
				if err != nil {
					t.Errorf("relisting: %v", err)
				}
				changed <- ts
			}))
			echo, fail := find(t, c, "echo"), find(t, c, "fail")
			if out, err := find(t, c, "reshape").Call(context.Background(), `{}`); err != nil || out != "reshaped" {
				t.Fatalf("reshape: %q %v", out, err)
			}
			deadline := time.After(10 * time.Second)
			for c.Tool("extra") == nil || c.Tool("fail") != nil || echo.Spec().Description != "Echoes text, loudly." {
				select {
				case <-changed:
				case <-deadline:
					t.Fatalf("the client did not take the new tools: %v", tools(c))
				}
			}
			if c.Tool("echo") != echo {
				t.Error("echo is a new *Tool: a graph holding the old one would not see the change")
			}
			if _, err := echo.Call(context.Background(), `{"text":"hi"}`); err == nil {
				t.Error("echo took arguments its new schema refuses")
			}
			if out, err := echo.Call(context.Background(), `{"loud":"hi"}`); err != nil || out != `ECHO {"loud":"hi"}` {
				t.Errorf("echo with its new schema: %q %v", out, err)
			}
			_, err := fail.Call(context.Background(), `{}`)
			var te *mcp.ToolError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), "no longer offers the tool fail") || !strings.Contains(err.Error(), "extra") {
				t.Errorf("a removed tool's call: %v", err)
			}
		})
	}
}

// A server that changes its tools and then fails to list them: the
// program is told, the next call lists again first and fails saying why
// (rather than call a tool the server changed), and once the server lists
// again the calls work.
func TestFailedRelistIsNotSilent(t *testing.T) {
	var refuse atomic.Bool
	var srv *sdk.Server
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server {
		srv = testServer(nil)
		srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "tools/list" && refuse.Load() {
					return nil, errors.New("the tool registry is down")
				}
				return next(ctx, method, req)
			}
		})
		return srv
	}, nil)
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	changed := make(chan error, 4)
	c := connect(t, mcp.Server{URL: hs.URL}, mcp.WithToolsChanged(func(_ []tool.Tool, err error) { changed <- err }))
	echo := find(t, c, "echo")
	refuse.Store(true)
	if _, err := find(t, c, "reshape").Call(context.Background(), `{}`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-changed:
		if err == nil || !strings.Contains(err.Error(), "listing them again failed") {
			t.Fatalf("the program was told %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the program was not told of the failed listing")
	}
	if _, err := echo.Call(context.Background(), `{"loud":"hi"}`); err == nil || !strings.Contains(err.Error(), "the tool registry is down") {
		t.Errorf("a call while the list is stale: %v", err)
	}
	refuse.Store(false)
	if out, err := echo.Call(context.Background(), `{"loud":"hi"}`); err != nil || out != `ECHO {"loud":"hi"}` {
		t.Errorf("once the server lists again: %q %v (the new schema should apply)", out, err)
	}
}
