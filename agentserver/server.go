// Package agentserver serves Weft graphs over LangGraph's Agent Server API
// (the HTTP API of `langgraph dev` and LangGraph Platform), so LangGraph's
// own SDKs and front ends (@langchain/langgraph-sdk, langgraph_sdk,
// agent-chat-ui) drive Go graphs unchanged. Each graph is one assistant
// whose assistant id and graph id are the same string (weft serve uses the
// AG-UI slug, "writing-assistant"); threads are the checkpoint store's
// threads. The package is headless: it never imports a window toolkit.
package agentserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// Option configures a Handler.
type Option func(*Handler)

// WithClock sets the clock that stamps threads and runs (default time.Now).
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.now = now } }

// WithLeaseTTL sets how long a run's claim on its thread outlives this
// process if it dies (engine.WithLeaseTTL); 0 keeps the engine's default.
func WithLeaseTTL(d time.Duration) Option { return func(h *Handler) { h.leaseTTL = d } }

// Handler is an http.Handler answering the Agent Server API at the root of
// its mux. The zero Handler is not usable: make one with New.
//
// Thread records (metadata, creation time) of threads that have not run
// yet live in this process; once a thread has run, its checkpoints carry
// its metadata, so it is found by metadata through the store from any
// process sharing it.
type Handler struct {
	graphs   map[string]*engine.Graph
	ids      []string
	saver    checkpoint.Saver
	now      func() time.Time
	leaseTTL time.Duration
	lt       longterm.Store // WithLongTerm; nil: the /store endpoints answer 501
	mux      *http.ServeMux
	started  time.Time

	// entrypoints marks the graphs of functional entrypoints
	// (functional.IsEntrypoint): their input and values are one value.
	entrypoints map[*engine.Graph]bool

	stopping atomic.Bool // StopRuns was called

	mu      sync.Mutex
	threads map[string]*threadRec
	runs    map[string]*runRec
}

// New returns a Handler serving graphs, keyed by assistant id (which is
// also the graph id), on saver. The graph of a functional entrypoint
// (functional.IsEntrypoint) is served as LangGraph's server serves one: a
// run's input is given to it as is (any JSON value, decoded to the
// entrypoint's input type), its return value is the run's outcome and the
// thread's values, and a state update (POST /threads/{id}/state) sets
// its return value and what its next run gets as prev.
func New(graphs map[string]*engine.Graph, saver checkpoint.Saver, opts ...Option) (*Handler, error) {
	if saver == nil {
		return nil, errors.New("agentserver: New needs a checkpoint store")
	}
	h := &Handler{graphs: map[string]*engine.Graph{}, entrypoints: map[*engine.Graph]bool{}, saver: saver, now: time.Now,
		threads: map[string]*threadRec{}, runs: map[string]*runRec{}}
	for _, o := range opts {
		o(h)
	}
	for id, g := range graphs {
		if g == nil {
			return nil, fmt.Errorf("agentserver: graph %q is nil", id)
		}
		h.graphs[id] = g.WithSaver(saver)
		if h.lt != nil && g.Store() == nil {
			h.graphs[id] = h.graphs[id].WithStore(h.lt)
		}
		if functional.IsEntrypoint(g) {
			h.entrypoints[h.graphs[id]] = true
		}
		h.ids = append(h.ids, id)
	}
	slices.Sort(h.ids)
	h.started = h.now().UTC()
	h.routes()
	return h, nil
}

func (h *Handler) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, map[string]any{"ok": true}) })
	m.HandleFunc("GET /info", h.info)
	m.HandleFunc("POST /assistants/search", h.searchAssistants)
	m.HandleFunc("POST /assistants/count", h.countAssistants)
	m.HandleFunc("GET /assistants/{aid}", h.getAssistant)
	m.HandleFunc("GET /assistants/{aid}/graph", h.getGraph)
	m.HandleFunc("GET /assistants/{aid}/schemas", h.getSchemas)
	m.HandleFunc("POST /threads", h.createThread)
	m.HandleFunc("POST /threads/search", h.searchThreads)
	m.HandleFunc("POST /threads/count", h.countThreads)
	m.HandleFunc("GET /threads/{tid}", h.getThread)
	m.HandleFunc("PATCH /threads/{tid}", h.patchThread)
	m.HandleFunc("DELETE /threads/{tid}", h.deleteThread)
	m.HandleFunc("POST /threads/{tid}/copy", h.copyThread)
	m.HandleFunc("GET /threads/{tid}/state", h.getState)
	m.HandleFunc("GET /threads/{tid}/state/{cid}", h.getState)
	m.HandleFunc("POST /threads/{tid}/state/checkpoint", h.getStateAt)
	m.HandleFunc("POST /threads/{tid}/state", h.updateState)
	m.HandleFunc("GET /threads/{tid}/history", h.history)
	m.HandleFunc("POST /threads/{tid}/history", h.history)
	m.HandleFunc("POST /threads/{tid}/runs/stream", h.streamRun)
	m.HandleFunc("POST /threads/{tid}/runs/wait", h.waitRun)
	m.HandleFunc("POST /threads/{tid}/runs", h.createRun)
	m.HandleFunc("GET /threads/{tid}/runs", h.listRuns)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}", h.getRun)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}/join", h.joinRun)
	m.HandleFunc("GET /threads/{tid}/runs/{rid}/stream", h.joinStream)
	m.HandleFunc("POST /threads/{tid}/runs/{rid}/cancel", h.cancelRun)
	m.HandleFunc("POST /runs/stream", h.streamRun)
	m.HandleFunc("POST /runs/wait", h.waitRun)
	h.storeRoutes(m)
	// Parts of the API that Weft does not build, each with why.
	for pattern, why := range map[string]string{
		"POST /assistants":                     "assistants are the served graphs, one each; they cannot be created",
		"PATCH /assistants/{aid}":              "assistants are the served graphs and cannot be edited",
		"DELETE /assistants/{aid}":             "assistants are the served graphs and cannot be deleted",
		"POST /assistants/{aid}/latest":        "assistants have one version",
		"POST /assistants/{aid}/versions":      "assistants have one version",
		"GET /assistants/{aid}/subgraphs":      "subgraph schemas are not built; the graph's drawing with ?xray=true shows subgraphs",
		"GET /assistants/{aid}/subgraphs/{ns}": "subgraph schemas are not built; the graph's drawing with ?xray=true shows subgraphs",
		"DELETE /threads/{tid}/runs/{rid}":     "runs are not deleted; the newest ended runs are kept in memory",
		"POST /runs":                           "a stateless background run is not built; use /runs/wait or /runs/stream, or a thread's runs",
		"POST /runs/batch":                     "batches of runs are not built",
		"GET /runs/{rid}/stream":               "joining a stateless run's stream is not built",
		"/runs/crons":                          "crons are not built (GET /info reports crons: false)",
		"POST /runs/crons/search":              "crons are not built (GET /info reports crons: false)",
		"DELETE /runs/crons/{cid}":             "crons are not built (GET /info reports crons: false)",
		"POST /threads/{tid}/runs/crons":       "crons are not built (GET /info reports crons: false)",
		"POST /threads/{tid}/commands":         "the thread-scoped protocol is not built; use the run endpoints",
		"POST /threads/{tid}/stream/events":    "the thread-scoped protocol is not built; use the run endpoints",
	} {
		m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			fail(w, http.StatusNotImplemented, "%s %s is not built on this Weft server: %s", r.Method, r.URL.Path, why)
		})
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "%s %s is not part of the Agent Server API this Weft server answers (GET /ok, /info, /assistants…, /threads…, /runs/wait, /runs/stream, /store…)", r.Method, r.URL.Path)
	})
	h.mux = m
}

// StopRuns makes every run in progress stop at its next step boundary
// (checkpointed, to be continued later), so a server shutting down does
// not wait for long runs; agui.Serve calls it when its context ends.
func (h *Handler) StopRuns() { h.stopping.Store(true) }

// ServeHTTP answers one request. A body must be application/json: browsers
// send other types from any page without a preflight.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody && r.Method != http.MethodGet {
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			fail(w, http.StatusUnsupportedMediaType, "the body must be sent as Content-Type: application/json, not %q", r.Header.Get("Content-Type"))
			return
		}
	}
	h.mux.ServeHTTP(w, r)
}

// fail answers an error as LangGraph's Python server does: {"detail": …}.
func fail(w http.ResponseWriter, code int, format string, args ...any) {
	writeJSON(w, code, map[string]any{"detail": fmt.Sprintf(format, args...)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a JSON body into v; an empty body leaves v as it is.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		fail(w, http.StatusUnprocessableEntity, "malformed request body: %v", err)
		return false
	}
	return true
}

func (h *Handler) info(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, 200, map[string]any{
		"version": "weft", "context": "weft",
		"flags": map[string]any{"assistants": true, "crons": false, "langsmith": false, "langsmith_tracing_replicas": false},
	})
}

// graph returns the graph of an assistant id, or answers 404.
func (h *Handler) graph(w http.ResponseWriter, id string) (*engine.Graph, bool) {
	g := h.graphs[id]
	if g == nil {
		fail(w, http.StatusNotFound, "Assistant %q not found: this server serves %v", id, h.ids)
		return nil, false
	}
	return g, true
}
