package agentserver_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// demoGraphs are the example graphs keyed by their AG-UI slugs, as weft
// serve mounts them.
func demoGraphs(t testing.TB) map[string]*engine.Graph {
	t.Helper()
	demos, err := examples.All(nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*engine.Graph{}
	for _, d := range demos {
		out[agui.Slug(d.Graph.Name())] = d.Graph
	}
	return out
}

// server is an Agent Server on a fresh in-memory store (newApproval,
// newSlow).
type server struct {
	t     *testing.T
	srv   *httptest.Server
	saver checkpoint.Saver
}

// call sends a JSON request (body "" for none) and returns the status and
// the decoded JSON answer (nil when it is not JSON).
func (s *server) call(method, path, body string) (int, any) {
	s.t.Helper()
	code, raw := s.raw(method, path, body)
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		return code, nil
	}
	return code, v
}

func (s *server) raw(method, path, body string) (int, string) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sseEvent is one server-sent event.
type sseEvent struct {
	Name string
	Data any
}

// stream posts a run and reads its events.
func (s *server) stream(path, body string) (int, []sseEvent, http.Header) {
	s.t.Helper()
	resp, err := http.Post(s.srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil, resp.Header
	}
	return resp.StatusCode, parseSSE(s.t, bytes.NewReader(b)), resp.Header
}

// parseSSE reads server-sent events to their end.
func parseSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	b, _ := io.ReadAll(r)
	var evs []sseEvent
	for _, block := range bytes.Split(b, []byte("\n\n")) {
		var ev sseEvent
		for _, line := range strings.Split(string(block), "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				ev.Name = name
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				if err := json.Unmarshal([]byte(data), &ev.Data); err != nil {
					t.Fatalf("event %s: data %q is not JSON", ev.Name, data)
				}
			}
		}
		if ev.Name != "" {
			evs = append(evs, ev)
		}
	}
	return evs
}

// get walks a decoded JSON value by object keys and array indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }
