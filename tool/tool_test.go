package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

type Address struct {
	Street string `json:"street" jsonschema:"description=Street and number"`
	Zip    string `json:"zip,omitempty" jsonschema:"pattern=^[0-9]{5}$"`
}

type BookArgs struct {
	Guest  string   `json:"guest" jsonschema:"description=Who stays"`
	Nights int      `json:"nights" jsonschema:"minimum=1,maximum=14"`
	Room   string   `json:"room,omitempty" jsonschema:"enum=single,enum=double,enum=suite"`
	Extras []string `json:"extras,omitempty"`
	Bill   Address  `json:"bill"`
	Ship   *Address `json:"ship,omitempty"`
}

func book(_ context.Context, a BookArgs) (map[string]any, error) {
	if a.Guest == "nobody" {
		return nil, errors.New("no such guest")
	}
	return map[string]any{"guest": a.Guest, "nights": a.Nights, "room": a.Room}, nil
}

// The schema comes from the struct: nested structs inline, omitempty
// fields optional, enums and bounds from tags.
func TestSchemaFromStruct(t *testing.T) {
	b := tool.Must(tool.New("book", "Books a room.", book))
	spec := b.Spec()
	if spec.Name != "book" || spec.Description != "Books a room." {
		t.Errorf("spec %+v", spec)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, spec.Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "book.schema.json")
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pretty.String() != string(want) {
		t.Errorf("schema:\n%s\nwant:\n%s", pretty.String(), want)
	}
	var s struct {
		Required   []string
		Properties map[string]struct {
			Enum     []string
			Required []string
		}
	}
	_ = json.Unmarshal(spec.Parameters, &s)
	if strings.Join(s.Required, ",") != "guest,nights,bill" || len(s.Properties["room"].Enum) != 3 ||
		strings.Join(s.Properties["bill"].Required, ",") != "street" {
		t.Errorf("required %v, room enum %v, bill required %v", s.Required, s.Properties["room"].Enum, s.Properties["bill"].Required)
	}
	if _, err := tool.New("bad", "", func(context.Context, int) (string, error) { return "", nil }); err == nil {
		t.Error("a tool of int arguments was made")
	}
}

// Arguments are validated before the function runs.
func TestArgumentsValidated(t *testing.T) {
	ran := false
	b := tool.Must(tool.New("book", "", func(ctx context.Context, a BookArgs) (map[string]any, error) { ran = true; return book(ctx, a) }))
	ctx := context.Background()
	for args, want := range map[string][]string{
		`{"guest":"Ann","nights":20,"room":"attic","bill":{"zip":"1"},"pets":1}`: {"at /nights", "at /room", "at /bill: missing property 'street'", "at /bill/zip", "'pets' not allowed"},
		`{"guest":"Ann"`:           {"not JSON"},
		`{"guest":3,"nights":"2"}`: {"at /guest", "at /nights", "missing property 'bill'"},
	} {
		_, err := b.Call(ctx, args)
		var ae *tool.ArgumentError
		if !errors.As(err, &ae) || ae.Tool != "book" {
			t.Errorf("%s: err = %v", args, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", args, err, w)
			}
		}
	}
	if ran {
		t.Error("the function ran on invalid arguments")
	}
	out, err := b.Call(ctx, `{"guest":"Ann","nights":2,"room":"suite","bill":{"street":"Main 1","zip":"12345"}}`)
	if err != nil || out != `{"guest":"Ann","nights":2,"room":"suite"}` {
		t.Errorf("valid call: %q, %v", out, err)
	}
}

var msgs = engine.Messages("messages")

// The tool node runs the calls concurrently, writes results in call order,
// and hands errors back to the model instead of failing.
func TestNodeRunsCallsConcurrentlyInOrder(t *testing.T) {
	var started sync.WaitGroup
	started.Add(2)
	release := make(chan struct{})
	go func() { started.Wait(); close(release) }()
	slow := tool.Must(tool.New("slow", "", func(ctx context.Context, a struct {
		N int `json:"n"`
	}) (string, error) {
		started.Done()
		select {
		case <-release: // both calls run at once, or this waits for the safety net
		case <-time.After(10 * time.Second):
			return "", errors.New("the other call never started: calls ran one after the other")
		}
		time.Sleep(time.Duration(3-a.N) * 10 * time.Millisecond) // the first call finishes last
		return "done " + string(rune('0'+a.N)), nil
	}))
	b := tool.Must(tool.New("book", "", book))
	g, err := engine.NewGraph("tools", msgs).AddNode("tools", tool.Node(msgs, slow, b)).AddEdge(engine.START, "tools").
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	ai := engine.Message{ID: "ai", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{
		{ID: "c1", Name: "slow", Args: `{"n":1}`},
		{ID: "c2", Name: "slow", Args: `{"n":2}`},
		{ID: "c3", Name: "book", Args: `{"guest":"nobody","nights":1,"bill":{"street":"x"}}`},
		{ID: "c4", Name: "book", Args: `{"guest":"Ann"}`},
		{ID: "c5", Name: "fly", Args: `{}`},
	}}
	res, err := g.Invoke(context.Background(), engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "go"}, ai}}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	got := msgs.Get(engine.StateOf(res.Values))[2:]
	want := []struct{ id, prefix string }{
		{"c1", "done 1"}, {"c2", "done 2"}, {"c3", "Error: no such guest"},
		{"c4", `Error: invalid arguments for tool "book": at /: missing properties 'nights', 'bill'`},
		{"c5", `Error: there is no tool "fly"; the tools are: book, slow`},
	}
	if len(got) != len(want) {
		t.Fatalf("%d results: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].ToolCallID != w.id || got[i].Role != engine.RoleTool || got[i].ID != tool.ResultID(w.id) || !strings.HasPrefix(got[i].Content, w.prefix) {
			t.Errorf("result %d = %+v, want %s %q…", i, got[i], w.id, w.prefix)
		}
	}
	hist, err := g.History(context.Background(), checkpoint.ListOptions{}, engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	var calls []engine.CallRecord
	for _, s := range hist {
		for _, ts := range s.Tasks {
			if ts.Name == "tools" {
				calls = ts.Calls
			}
		}
	}
	if len(calls) != 5 {
		t.Fatalf("%d tool calls recorded", len(calls))
	}
	for _, c := range calls {
		if c.Kind != engine.CallTool || c.ToolCallID == "" || c.Result.Text == "" {
			t.Errorf("record %+v", c)
		}
		if (c.ToolCallID == "c3" || c.ToolCallID == "c5") && c.Error == "" {
			t.Errorf("failed call %s recorded without its error", c.ToolCallID)
		}
	}
}

func TestConditionAndPendingCalls(t *testing.T) {
	ai := engine.Message{ID: "ai", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "a"}, {ID: "b"}}}
	answered := engine.Message{Role: engine.RoleTool, ToolCallID: "a"}
	cond := tool.Condition(msgs, "tools")
	for _, c := range []struct {
		msgs    []engine.Message
		pending int
		to      string
	}{
		{[]engine.Message{{Role: engine.RoleUser}}, 0, engine.END},
		{[]engine.Message{{Role: engine.RoleUser}, ai}, 2, "tools"},
		{[]engine.Message{{Role: engine.RoleUser}, ai, answered}, 1, "tools"},
		{[]engine.Message{ai, answered, {Role: engine.RoleTool, ToolCallID: "b"}}, 0, engine.END},
		{[]engine.Message{ai, {Role: engine.RoleUser}}, 0, engine.END},
	} {
		if n := len(tool.PendingCalls(c.msgs)); n != c.pending {
			t.Errorf("%d pending, want %d", n, c.pending)
		}
		r, err := cond(context.Background(), engine.StateOf(engine.Values{"messages": c.msgs}))
		if err != nil || len(r.Keys) != 1 || r.Keys[0] != c.to {
			t.Errorf("routed to %v, want %s", r.Keys, c.to)
		}
	}
}
