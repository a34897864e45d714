package agui

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// counterIDs returns a deterministic id source: id-1, id-2, …
func counterIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("id-%d", n) }
}

// testServer serves graphs on a loopback httptest server.
type testServer struct {
	*httptest.Server
	h     *Handler
	saver checkpoint.Saver
}

func newTestServer(t testing.TB, graphs []*engine.Graph, saver checkpoint.Saver, opts ...Option) *testServer {
	t.Helper()
	if saver == nil {
		saver = memory.New()
	}
	mounted, err := Mount(graphs)
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]Option{WithSaver(saver), WithClock(nil), WithIDs(counterIDs()), WithKeepAlive(0)}, opts...)
	h, err := NewHandler(mounted, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, h: h, saver: saver}
}

func demoGraphs(t testing.TB) []*engine.Graph {
	t.Helper()
	demos, err := examples.All(nil)
	if err != nil {
		t.Fatal(err)
	}
	var gs []*engine.Graph
	for _, d := range demos {
		gs = append(gs, d.Graph)
	}
	return gs
}

// stream is one response: its frames, raw and decoded.
type stream struct {
	status int
	body   string
	lines  []string         // the JSON of each data frame
	events []map[string]any // the same, decoded
	pings  int
}

func (s *stream) types() []string {
	var out []string
	for _, e := range s.events {
		out = append(out, e["type"].(string))
	}
	return out
}

func (s *stream) last() map[string]any { return s.events[len(s.events)-1] }

// find returns the events of type typ.
func (s *stream) find(typ string) []map[string]any {
	var out []map[string]any
	for _, e := range s.events {
		if e["type"] == typ {
			out = append(out, e)
		}
	}
	return out
}

// interruptIDs returns the ids in the outcome of the final RUN_FINISHED.
func (s *stream) interruptIDs() []string {
	out, _ := s.last()["outcome"].(map[string]any)
	ints, _ := out["interrupts"].([]any)
	var ids []string
	for _, it := range ints {
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	return ids
}

func post(t testing.TB, url string, body any) *stream {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s := &stream{status: resp.StatusCode, body: string(raw)}
	if resp.StatusCode != http.StatusOK {
		return s
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	s.parse(t, string(raw))
	return s
}

// parse splits an SSE body exactly as @ag-ui/client does: frames end with
// "\n\n"; each is a ": ping" comment or one "data: " line of JSON.
func (s *stream) parse(t testing.TB, body string) {
	t.Helper()
	if body != "" && !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("stream does not end with a frame boundary: %q", body[max(0, len(body)-40):])
	}
	for _, frame := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		if frame == ": ping" {
			s.pings++
			continue
		}
		data, ok := strings.CutPrefix(frame, "data: ")
		if !ok || strings.Contains(data, "\n") || strings.Contains(data, "\r") {
			t.Fatalf("bad frame %q", frame)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("frame is not JSON: %v: %s", err, data)
		}
		if typ, _ := ev["type"].(string); typ == "" {
			t.Fatalf("frame without a type: %s", data)
		}
		s.lines = append(s.lines, data)
		s.events = append(s.events, ev)
	}
}

// input builds a RunAgentInput body.
func input(thread, run string, kv ...any) map[string]any {
	in := map[string]any{"threadId": thread, "runId": run, "messages": []any{}, "tools": []any{}, "context": []any{},
		"state": map[string]any{}, "forwardedProps": map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return in
}

// normalize makes a stream comparable across runs: interrupt ids (they hash
// checkpoint ids) become interrupt-1, …, and inside the named steps, whose
// tasks run in parallel so that the interleaving of what they stream is not
// defined, events are grouped by message or tool call id (each id's own
// events keep their order).
func normalize(lines []string, parallel ...string) []string {
	out := slices.Clone(lines)
	ids := map[string]string{}
	for _, l := range lines {
		var ev struct {
			Outcome struct {
				Interrupts []struct{ ID string } `json:"interrupts"`
			} `json:"outcome"`
		}
		_ = json.Unmarshal([]byte(l), &ev)
		for _, it := range ev.Outcome.Interrupts {
			if _, ok := ids[it.ID]; !ok {
				ids[it.ID] = fmt.Sprintf("interrupt-%d", len(ids)+1)
			}
		}
	}
	for i := range out {
		for id, rep := range ids {
			out[i] = strings.ReplaceAll(out[i], id, rep)
		}
	}
	type head struct{ Type, StepName, MessageID, ToolCallID string }
	parse := func(l string) head {
		var h head
		_ = json.Unmarshal([]byte(l), &h)
		return h
	}
	for i := 0; i < len(out); i++ {
		h := parse(out[i])
		if h.Type != "STEP_STARTED" || !slices.Contains(parallel, h.StepName) {
			continue
		}
		j := i + 1
		for j < len(out) {
			if e := parse(out[j]); e.Type == "STEP_FINISHED" && e.StepName == h.StepName {
				break
			}
			j++
		}
		slices.SortStableFunc(out[i+1:j], func(a, b string) int {
			ha, hb := parse(a), parse(b)
			return strings.Compare(ha.MessageID+ha.ToolCallID, hb.MessageID+hb.ToolCallID)
		})
		i = j
	}
	return out
}

// checkGolden compares a stream with testdata/<name>.jsonl (or rewrites it
// with -update).
func checkGolden(t *testing.T, name string, s *stream, parallel ...string) {
	t.Helper()
	got := strings.Join(normalize(s.lines, parallel...), "\n") + "\n"
	path := filepath.Join("testdata", name+".jsonl")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}
