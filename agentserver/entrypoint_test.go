package agentserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// fnGraph is testdata/entrypoint-app/src/fn.ts in Go: an entrypoint whose
// input and output are any JSON value. A number is doubled by task
// "double", "ask" stops at an interrupt and returns the answer with the
// previous return value, another string is described, a list reversed,
// anything else returned as is.
func fnGraph(t *testing.T, ref engine.Reference) *engine.Graph {
	t.Helper()
	double := functional.NewTask("double", func(_ context.Context, n float64) (float64, error) { return 2 * n, nil })
	wf, err := functional.Entrypoint("fn", func(ctx context.Context, in any, prev *any) (any, error) {
		switch v := in.(type) {
		case float64:
			return double.Call(ctx, v).Get(ctx)
		case string:
			if v != "ask" {
				return "got " + v, nil
			}
			answer, err := engine.Interrupt(ctx, "answer?")
			if err != nil {
				return nil, err
			}
			var p any
			if prev != nil {
				p = *prev
			}
			return map[string]any{"answer": answer, "prev": p}, nil
		case []any:
			out := slices.Clone(v)
			slices.Reverse(out)
			return out, nil
		}
		return in, nil
	}, functional.WithCompile(engine.WithReference(ref)))
	if err != nil {
		t.Fatal(err)
	}
	return wf.Graph()
}

// A functional graph on the Agent Server takes a run's input as is — a
// number, a string, a list, an object, false, 0, "" — and answers its
// return value as the run's outcome, the thread's and the state's values
// and the values chunks, a task's update as {name: result}, and a state
// update as the entrypoint's return value and next prev, as LangGraph's
// server does (LangGraph.js's dev server, recorded in
// testdata/entrypoint-exchange.json by record-entrypoint-exchange.py).
func TestEntrypointAnswersAsLangGraph(t *testing.T) {
	b, err := testdataFile("entrypoint-exchange.json")
	if err != nil {
		t.Fatal(err)
	}
	var exchange []struct {
		Kind, Method, Path string
		Body               json.RawMessage
		Status             int
		Response           json.RawMessage
	}
	if err := json.Unmarshal(b, &exchange); err != nil {
		t.Fatal(err)
	}
	h, err := agentserver.New(map[string]*engine.Graph{"fn": fnGraph(t, engine.LangGraphJS)}, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, srv: httptest.NewServer(h)}
	defer s.srv.Close()
	ids := map[string]string{}
	for i, x := range exchange {
		path := x.Path
		for k, v := range ids {
			path = strings.ReplaceAll(path, "{"+k+"}", v)
		}
		body := ""
		if len(x.Body) > 0 && string(x.Body) != "null" {
			body = string(x.Body)
		}
		what := fmt.Sprintf("step %d: %s %s %s", i, x.Method, x.Path, body)
		var got any
		code := 0
		if x.Kind == "stream" {
			var evs []sseEvent
			code, evs, _ = s.stream(path, body)
			list := []any{}
			for _, ev := range evs {
				if ev.Name != "metadata" {
					list = append(list, []any{ev.Name, stripInterruptIDs(ev.Data)})
				}
			}
			got = list
		} else {
			code, got = s.call(x.Method, path, body)
		}
		if code != x.Status {
			t.Fatalf("%s: status %d, LangGraph's %d (%v)", what, code, x.Status, got)
		}
		switch x.Kind {
		case "create", "create2":
			key := map[string]string{"create": "thread", "create2": "thread2"}[x.Kind]
			ids[key] = get(got, "thread_id").(string)
			continue
		case "state":
			tasks, _ := get(got, "tasks").([]any)
			values := []any{}
			for _, task := range tasks {
				for _, it := range task.(map[string]any)["interrupts"].([]any) {
					values = append(values, it.(map[string]any)["value"])
				}
			}
			got = map[string]any{"values": get(got, "values"), "next": get(got, "next"), "interrupts": values}
		case "thread":
			got = map[string]any{"values": get(got, "values"), "status": get(got, "status")}
		case "update":
			continue
		default:
			got = stripInterruptIDs(got)
		}
		var want any
		if err := json.Unmarshal(x.Response, &want); err != nil {
			t.Fatalf("%s: recorded %s: %v", what, x.Response, err)
		}
		if !reflect.DeepEqual(got, want) {
			gb, _ := json.Marshal(got)
			t.Errorf("%s: answered %s, LangGraph %s", what, gb, x.Response)
		}
	}
}

// stripInterruptIDs drops the ids of interrupts (objects with a value and
// an id): they are each server's own.
func stripInterruptIDs(v any) any {
	switch x := v.(type) {
	case map[string]any:
		_, hasValue := x["value"]
		out := map[string]any{}
		for k, e := range x {
			if k == "id" && hasValue {
				continue
			}
			out[k] = stripInterruptIDs(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripInterruptIDs(e)
		}
		return out
	}
	return v
}

// Following Python (the default reference) the same graph takes raw input
// and answers raw output too; at an interrupt whose previous return value
// is an object the outcome carries its keys (B2), otherwise only the
// interrupts. An input the entrypoint's type cannot hold is refused with
// a 400 naming the entrypoint, and a graph of another shape still takes
// an object of state keys.
func TestEntrypointPythonAndRefusals(t *testing.T) {
	h, err := agentserver.New(map[string]*engine.Graph{"fn": fnGraph(t, engine.LangGraphPython)}, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	s := &server{t: t, srv: httptest.NewServer(h)}
	defer s.srv.Close()
	_, th := s.call("POST", "/threads", "{}")
	tid := get(th, "thread_id").(string)
	wait := func(body string) any {
		t.Helper()
		code, out := s.call("POST", "/threads/"+tid+"/runs/wait", body)
		if code != 200 {
			t.Fatalf("%s: %d %v", body, code, out)
		}
		return stripInterruptIDs(out)
	}
	if got := wait(`{"assistant_id":"fn","input":21}`); got != float64(42) {
		t.Fatalf("21: %v, want 42", got)
	}
	if got := wait(`{"assistant_id":"fn","input":"ask"}`); !reflect.DeepEqual(got, map[string]any{"__interrupt__": []any{map[string]any{"value": "answer?"}}}) {
		t.Fatalf("ask after a number: %v, want the interrupts alone", got)
	}
	wait(`{"assistant_id":"fn","command":{"resume":"yes"}}`)
	got := wait(`{"assistant_id":"fn","input":"ask"}`)
	want := map[string]any{"answer": "yes", "prev": float64(42), "__interrupt__": []any{map[string]any{"value": "answer?"}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ask after an object: %v, want %v", got, want)
	}

	typed, err := functional.Entrypoint("typed", func(_ context.Context, n int, _ *int) (int, error) { return n + 1, nil })
	if err != nil {
		t.Fatal(err)
	}
	h2, err := agentserver.New(map[string]*engine.Graph{"typed": typed.Graph()}, memory.New())
	if err != nil {
		t.Fatal(err)
	}
	s2 := &server{t: t, srv: httptest.NewServer(h2)}
	defer s2.srv.Close()
	if code, out := s2.call("POST", "/runs/wait", `{"assistant_id":"typed","input":41}`); code != 200 || out != float64(42) {
		t.Fatalf("typed 41: %d %v, want 42", code, out)
	}
	code, out := s2.call("POST", "/runs/wait", `{"assistant_id":"typed","input":"kelp"}`)
	if msg, _ := get(out, "detail").(string); code != 400 || !strings.Contains(msg, "input of entrypoint typed") {
		t.Fatalf("a string for an int entrypoint: %d %v, want a 400 naming the entrypoint", code, out)
	}
	other, err := engine.NewGraph("x", engine.LastValue[int]("n")).
		AddNode("x", func(context.Context, engine.State) (engine.Output, error) { return nil, nil }).
		AddEdge(engine.START, "x").Compile()
	if err != nil {
		t.Fatal(err)
	}
	if functional.IsEntrypoint(other) || !functional.IsEntrypoint(typed.Graph().WithSaver(memory.New())) {
		t.Fatal("IsEntrypoint: a one-node graph of other channels counts, or a copy of an entrypoint's does not")
	}
}
