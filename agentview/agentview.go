// Package agentview shows the graphs and threads of a LangGraph server
// (langgraph dev, a LangGraph Platform deployment, or weft serve) in
// Weft's studio and commands, through the Agent Server API (agentclient).
// Each assistant becomes a view graph (engine.NewView) drawn from the
// server's own drawing of it (/assistants/{id}/graph?xray=true, subgraphs
// nested), whose states are the server's (get_state with subgraphs) as
// engine snapshots; Saver lists the server's threads and their history
// as a read-only checkpoint saver, so the studio's thread list, timeline,
// state, diff and watches work unchanged; its runs and state edits go to
// the server (run.go), each naming the checkpoint it acts on.
//
// It is headless (no Fyne).
package agentview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/lgtopo"
)

// Graph is one of the server's graphs: an assistant and its view.
type Graph struct {
	// Name is the graph's name in the studio's graph list and in the
	// metadata tag of its threads (engine.MetaGraph, see Server.Saver):
	// the assistant's graph id, as the server tags the threads it runs.
	Name string
	// Assistant is the server's record of the graph.
	Assistant agentclient.Assistant
	// Graph is the view: drawn from the server's drawing, states read
	// from the server, runs and state edits sent to it.
	Graph *engine.Graph
	// Input lists the fields of the graph's input as its input schema
	// names them, for a new thread's form; nil until LoadInputs, and when
	// the server gave no schema in time (schemaWait) or one without
	// properties.
	Input []InputField
}

// InputField is one property of a graph's input schema.
type InputField struct {
	Name string
	// Type is the property's JSON Schema type ("string", "array", …);
	// "" when the schema does not say one.
	Type string
	// Required is set for the schema's required properties.
	Required bool
}

// schemaWait bounds the wait for one graph's schemas: a server that is
// slow to give them costs the form, not the graph.
const schemaWait = 5 * time.Second

// Server is a LangGraph server opened for viewing. It is safe for
// concurrent use.
type Server struct {
	c *agentclient.Client

	mu     sync.Mutex
	info   *agentclient.Info // nil until Load
	graphs []Graph
}

// New returns the server c talks to, not yet asked anything: its Saver
// works at once, its Graphs once Load has read them.
func New(c *agentclient.Client) *Server { return &Server{c: c} }

// Open is New and Load.
func Open(ctx context.Context, c *agentclient.Client) (*Server, error) {
	s := New(c)
	if err := s.Load(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Load asks the server for its version, its assistants and their
// drawings, replacing the graphs read before. A server that is down,
// refuses the key or answers something that is not the Agent Server API
// is an error saying so (agentclient's errors); a drawing that cannot be
// read leaves that graph drawn without nodes, with the reason in its
// topology's name.
func (s *Server) Load(ctx context.Context) error {
	c := s.c
	info, err := c.Info(ctx)
	if err != nil {
		return fmt.Errorf("LangGraph server %s: %w", c.BaseURL(), err)
	}
	var all []agentclient.Assistant
	for offset := 0; ; {
		page, err := c.SearchAssistants(ctx, agentclient.AssistantSearch{Limit: 100, Offset: offset})
		if err != nil {
			return fmt.Errorf("LangGraph server %s: listing its graphs: %w", c.BaseURL(), err)
		}
		all = append(all, page...)
		if len(page) < 100 {
			break
		}
		offset += len(page)
	}
	// One view per graph: a server may keep several assistants (configs)
	// of one graph; the one it made itself (named after the graph, or
	// else the oldest) stands for it.
	byGraph := map[string]agentclient.Assistant{}
	for _, a := range all {
		cur, ok := byGraph[a.GraphID]
		if !ok || better(a, cur) {
			byGraph[a.GraphID] = a
		}
	}
	ids := make([]string, 0, len(byGraph))
	for id := range byGraph {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var graphs []Graph
	for _, id := range ids {
		a := byGraph[id]
		topo := s.drawing(ctx, a)
		topo.Name = id
		graphs = append(graphs, Graph{Name: id, Assistant: a,
			Graph: engine.NewView(topo, s.read, Runs).WithSaver(s.Saver()).WithViewRunner(runs{c: c, assistant: a.AssistantID})})
	}
	s.mu.Lock()
	s.info, s.graphs = info, graphs
	s.mu.Unlock()
	return nil
}

// better reports whether assistant a stands for its graph rather than
// cur: the server's own (named after the graph) first, then the oldest.
func better(a, cur agentclient.Assistant) bool {
	aOwn, curOwn := a.Name == a.GraphID, cur.Name == cur.GraphID
	if aOwn != curOwn {
		return aOwn
	}
	return a.CreatedAt.Before(cur.CreatedAt)
}

// drawing is an assistant's topology from the server's x-ray drawing.
func (s *Server) drawing(ctx context.Context, a agentclient.Assistant) *engine.Topology {
	g, err := s.c.GetGraph(ctx, a.AssistantID, -1)
	if err == nil {
		var b []byte
		if b, err = json.Marshal(g); err == nil {
			var lg *langgraph.Graph
			if lg, err = langgraph.ParseGraphJSON(b); err == nil {
				lg.Source = a.GraphID
				return lgtopo.Topology(lg)
			}
		}
	}
	return &engine.Topology{Name: fmt.Sprintf("%s (the server's drawing could not be read: %v)", a.GraphID, err)}
}

// LoadInputs reads each graph's input schema (Graph.Input), the graphs
// at once, each bounded by schemaWait. It is apart from Load because a
// LangGraph.js server extracts schemas slowly the first time (tens of
// seconds): the graphs are shown without waiting for their forms.
func (s *Server) LoadInputs(ctx context.Context) {
	s.mu.Lock()
	graphs := append([]Graph(nil), s.graphs...)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for i := range graphs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			graphs[i].Input = s.inputFields(ctx, graphs[i].Assistant)
		}()
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.graphs {
		for _, g := range graphs {
			if g.Graph == s.graphs[i].Graph { // not replaced by a Load meanwhile
				s.graphs[i].Input = g.Input
			}
		}
	}
}

// inputFields reads an assistant's input schema's properties, sorted by
// name; nil when there are none or the server did not say in time.
func (s *Server) inputFields(ctx context.Context, a agentclient.Assistant) []InputField {
	ctx, cancel := context.WithTimeout(ctx, schemaWait)
	defer cancel()
	sc, err := s.c.GetSchemas(ctx, a.AssistantID)
	if err != nil || len(sc.InputSchema) == 0 {
		return nil
	}
	return InputFields(sc.InputSchema)
}

// InputFields lists a JSON Schema object's properties, sorted by name;
// nil for a schema that is not an object with properties. A property
// whose type is a list of types takes the first that is not "null".
func InputFields(schema json.RawMessage) []InputField {
	var sch struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if json.Unmarshal(schema, &sch) != nil || len(sch.Properties) == 0 {
		return nil
	}
	var out []InputField
	for _, name := range sortedKeys(sch.Properties) {
		f := InputField{Name: name, Required: slices.Contains(sch.Required, name)}
		switch t := sch.Properties[name].Type.(type) {
		case string:
			f.Type = t
		case []any:
			for _, x := range t {
				if s, ok := x.(string); ok && s != "null" {
					f.Type = s
					break
				}
			}
		}
		out = append(out, f)
	}
	return out
}

// Graphs returns the server's graphs, by name; none before Load.
func (s *Server) Graphs() []Graph {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Graph(nil), s.graphs...)
}

// Client returns the server's client.
func (s *Server) Client() *agentclient.Client { return s.c }

// Describe names the server for the user: "LangGraph server 1.5.1
// (LangGraph.js 1.7.3) at URL".
// Before Load it is "LangGraph server at URL".
func (s *Server) Describe() string {
	s.mu.Lock()
	info := s.info
	s.mu.Unlock()
	if info == nil {
		return "LangGraph server at " + s.c.BaseURL()
	}
	var lg string
	switch {
	case info.LangGraphJSVersion != "":
		lg = " (LangGraph.js " + info.LangGraphJSVersion + ")"
	case info.LangGraphPyVersion != "":
		lg = " (LangGraph " + info.LangGraphPyVersion + ")"
	}
	return "LangGraph server " + info.Version + lg + " at " + s.c.BaseURL()
}

// State returns the server's state of a checkpoint of a thread as an
// engine snapshot: ref.NS "" is the root graph, ref.CheckpointID "" the
// namespace's newest checkpoint; with subgraphs, a task running a
// subgraph that has started carries the subgraph's state. A thread the
// server does not know is checkpoint.ErrNotFound, named.
func (s *Server) State(ctx context.Context, ref checkpoint.Ref, subgraphs bool) (*engine.Snapshot, error) {
	st, err := s.c.GetState(ctx, ref.ThreadID, agentclient.StateQuery{CheckpointID: ref.CheckpointID, CheckpointNS: ref.NS, Subgraphs: subgraphs})
	if err != nil {
		return nil, notFound(ref, err)
	}
	if st.Checkpoint.CheckpointID == "" {
		// A thread made on the server but never run.
		return nil, fmt.Errorf("thread %q has no checkpoint yet (it was made on the server but has not run): %w", ref.ThreadID, checkpoint.ErrNotFound)
	}
	return Snapshot(st)
}

// read is the view graphs' engine.ViewFunc.
func (s *Server) read(ctx context.Context, _ checkpoint.Saver, ref checkpoint.Ref, subgraphs bool) (*engine.Snapshot, error) {
	return s.State(ctx, ref, subgraphs)
}

// notFound makes the server's 404 the checkpoint package's ErrNotFound,
// which the studio and the commands test for, keeping the server's words.
func notFound(ref checkpoint.Ref, err error) error {
	if errors.Is(err, agentclient.ErrNotFound) {
		what := fmt.Sprintf("thread %q", ref.ThreadID)
		if ref.CheckpointID != "" {
			what += fmt.Sprintf(" or its checkpoint %q", ref.CheckpointID)
		}
		return fmt.Errorf("%s not found on the server: %w (%w)", what, checkpoint.ErrNotFound, err)
	}
	return err
}

// Snapshot converts a server snapshot to the engine's. Values that are not
// a JSON object, or a task whose result is not one, are an error naming
// the checkpoint.
func Snapshot(st *agentclient.StateSnapshot) (*engine.Snapshot, error) {
	thread := st.Checkpoint.ThreadID
	out := &engine.Snapshot{
		Values:    engine.Values{},
		Next:      append([]string{}, st.Next...),
		Ref:       checkpoint.Ref{ThreadID: thread, NS: st.Checkpoint.CheckpointNS, CheckpointID: st.Checkpoint.CheckpointID},
		Metadata:  metadataOf(st.Metadata),
		CreatedAt: st.CreatedAt,
	}
	if p := st.ParentCheckpoint; p != nil && p.CheckpointID != "" {
		out.Parent = &checkpoint.Ref{ThreadID: thread, NS: out.Ref.NS, CheckpointID: p.CheckpointID}
	}
	if err := decodeObject(st.Values, (*map[string]any)(&out.Values)); err != nil {
		return nil, fmt.Errorf("checkpoint %s: its values: %w", out.Ref.CheckpointID, err)
	}
	for _, t := range st.Tasks {
		ts := engine.TaskState{ID: t.ID, Name: t.Name, Path: taskPath(t.Path)}
		if len(t.Error) > 0 && string(t.Error) != "null" {
			var e any
			if json.Unmarshal(t.Error, &e) != nil {
				e = string(t.Error)
			}
			ts.Error = langgraph.ErrorText(e)
		}
		if len(t.Result) > 0 && string(t.Result) != "null" {
			var res map[string]any
			if err := decodeObject(t.Result, &res); err != nil {
				return nil, fmt.Errorf("checkpoint %s: task %s's result: %w", out.Ref.CheckpointID, t.Name, err)
			}
			for _, k := range sortedKeys(res) {
				ts.Result = append(ts.Result, engine.Write{Channel: k, Value: res[k]})
			}
			ts.Finished = true
		}
		if t.Checkpoint != nil {
			ts.NS = t.Checkpoint.CheckpointNS
		}
		if t.State != nil {
			if ts.NS == "" {
				ts.NS = t.State.Checkpoint.CheckpointNS
			}
			sub, err := Snapshot(t.State)
			if err != nil {
				return nil, err
			}
			ts.State = sub
		}
		for _, it := range t.Interrupts {
			pi := engine.PendingInterrupt{ID: it.ID, Node: t.Name, TaskID: t.ID, NS: out.Ref.NS}
			if len(it.Value) > 0 {
				_ = json.Unmarshal(it.Value, &pi.Value) // json.RawMessage is valid JSON
			}
			ts.Interrupts = append(ts.Interrupts, pi)
			out.Interrupts = append(out.Interrupts, pi)
		}
		out.Tasks = append(out.Tasks, ts)
	}
	return out, nil
}

// taskPath is a served task's path as Weft writes paths ("pull:research");
// "" when the server gave none or not a list.
func taskPath(raw json.RawMessage) string {
	var path []any
	if len(raw) == 0 || json.Unmarshal(raw, &path) != nil {
		return ""
	}
	return langgraph.TaskPath(path)
}

// decodeObject decodes a JSON object; null or nothing leaves *m empty.
func decodeObject(raw json.RawMessage, m *map[string]any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	return nil
}

// metadataOf is a server checkpoint's metadata in Weft's shape: source,
// step, parents and run_id as fields, the rest (graph_id, assistant_id,
// the run's own keys) in Extra, with the graph tag the studio lists
// threads by (engine.MetaGraph) set to graph_id.
func metadataOf(m map[string]any) checkpoint.Metadata {
	var md checkpoint.Metadata
	for k, v := range m {
		switch k {
		case "source":
			s, _ := v.(string)
			md.Source = checkpoint.Source(s)
		case "step":
			f, _ := v.(float64)
			md.Step = int(f)
		case "run_id":
			md.RunID, _ = v.(string)
		case "parents":
			if ps, ok := v.(map[string]any); ok && len(ps) > 0 {
				md.Parents = map[string]string{}
				for ns, id := range ps {
					md.Parents[ns], _ = id.(string)
				}
			}
		default:
			if md.Extra == nil {
				md.Extra = map[string]any{}
			}
			md.Extra[k] = v
		}
	}
	if g, ok := m["graph_id"].(string); ok && g != "" {
		if md.Extra == nil {
			md.Extra = map[string]any{}
		}
		md.Extra[engine.MetaGraph] = g
	}
	if w, ok := m["writes"].(map[string]any); ok {
		for n := range w {
			md.Tasks = append(md.Tasks, n)
		}
		sort.Strings(md.Tasks)
	}
	return md
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
