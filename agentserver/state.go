package agentserver

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// emptyState is the state of a thread that has not run.
func emptyState() map[string]any {
	return map[string]any{"values": map[string]any{}, "next": []string{}, "tasks": []any{}, "metadata": nil,
		"created_at": nil, "checkpoint": nil, "parent_checkpoint": nil, "interrupts": []any{}}
}

// stateAt answers the thread's state at checkpoint cid ("" the latest) in
// namespace ns.
func (h *Handler) stateAt(w http.ResponseWriter, r *http.Request, tid, cid, ns string, subgraphs bool) {
	t, ok := h.loadThread(w, r, tid)
	if !ok {
		return
	}
	if t.graph == nil {
		if cid != "" {
			fail(w, http.StatusNotFound, "Checkpoint %s not found in thread %s", cid, tid)
			return
		}
		writeJSON(w, 200, emptyState())
		return
	}
	opts := []engine.RunOption{engine.WithThread(tid), engine.WithCheckpoint(cid), engine.WithNamespace(ns)}
	if subgraphs {
		opts = append(opts, engine.WithSubgraphs())
	}
	snap, err := t.graph.GetState(r.Context(), opts...)
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		fail(w, http.StatusNotFound, "Checkpoint %s not found in thread %s", cid, tid)
	case err != nil:
		fail(w, http.StatusUnprocessableEntity, "reading thread %s: %v", tid, err)
	default:
		writeJSON(w, 200, h.stateDoc(t.graph, snap))
	}
}

func (h *Handler) getState(w http.ResponseWriter, r *http.Request) {
	h.stateAt(w, r, r.PathValue("tid"), r.PathValue("cid"), "", r.URL.Query().Get("subgraphs") == "true")
}

// checkpointSel is a checkpoint as clients name one: {"checkpoint_id",
// "checkpoint_ns"}.
type checkpointSel struct {
	ID string `json:"checkpoint_id"`
	NS string `json:"checkpoint_ns"`
}

func (h *Handler) getStateAt(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Checkpoint checkpointSel `json:"checkpoint"`
		Subgraphs  bool          `json:"subgraphs"`
	}
	if !decode(w, r, &q) {
		return
	}
	h.stateAt(w, r, r.PathValue("tid"), q.Checkpoint.ID, q.Checkpoint.NS, q.Subgraphs)
}

// decodeWrites turns a JSON object of channel values into writes of g,
// reading messages in LangChain's form.
func decodeWrites(g *engine.Graph, raw json.RawMessage) (engine.Update, error) {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, errors.New("values must be a JSON object of state keys")
	}
	types := map[string]string{}
	for _, c := range g.Channels() {
		types[c.Name] = c.Type
	}
	var up engine.Update
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		typ, ok := types[k]
		if !ok {
			return nil, errors.New("key " + k + " is not in the state of graph " + g.Name())
		}
		var v any
		var err error
		if typ == "[]engine.Message" {
			v, err = decodeMessages(obj[k])
		} else {
			v, err = g.DecodeValue(k, obj[k])
		}
		if err != nil {
			return nil, errors.New("key " + k + ": " + err.Error())
		}
		wr, err := g.Write(k, v)
		if err != nil {
			return nil, errors.New("key " + k + ": " + err.Error())
		}
		up = append(up, wr)
	}
	return up, nil
}

// decodeMessages reads one message or a list of them in LangChain's form
// (or a bare string, a human message, as LangGraph's messages reducer does).
func decodeMessages(raw json.RawMessage) ([]engine.Message, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	items, ok := v.([]any)
	if !ok {
		items = []any{v}
	}
	out := make([]engine.Message, 0, len(items))
	for _, it := range items {
		switch x := it.(type) {
		case string:
			out = append(out, engine.Message{Role: engine.RoleUser, Content: x})
		case map[string]any:
			out = append(out, fromLC(x))
		default:
			return nil, errors.New("a message must be an object or a string")
		}
	}
	return out, nil
}

// updateState writes values as a node (LangGraph's update_state); at a
// past checkpoint_id that is a fork.
func (h *Handler) updateState(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Values       json.RawMessage `json:"values"`
		AsNode       string          `json:"as_node"`
		CheckpointID string          `json:"checkpoint_id"`
		Checkpoint   *checkpointSel  `json:"checkpoint"`
	}
	if !decode(w, r, &q) {
		return
	}
	tid := r.PathValue("tid")
	t, ok := h.loadThread(w, r, tid)
	if !ok {
		return
	}
	g := t.graph
	if g == nil && len(h.ids) == 1 {
		g = h.graphs[h.ids[0]]
	}
	if g == nil {
		fail(w, http.StatusConflict, "Thread %s has not run yet, so it has no graph to update: start a run first", tid)
		return
	}
	if t.busy {
		fail(w, http.StatusConflict, "Thread %s has a run in progress", tid)
		return
	}
	cid := q.CheckpointID
	if q.Checkpoint != nil && q.Checkpoint.ID != "" {
		cid = q.Checkpoint.ID
	}
	if cid != "" {
		if _, err := h.saver.Get(r.Context(), checkpoint.Ref{ThreadID: tid, CheckpointID: cid}); err != nil {
			fail(w, http.StatusNotFound, "Checkpoint %s not found in thread %s", cid, tid)
			return
		}
	}
	if q.AsNode != "" && q.AsNode != engine.START && !slices.Contains(g.Nodes(), q.AsNode) {
		fail(w, http.StatusBadRequest, "as_node %q is not a node of graph %s", q.AsNode, h.assistantID(g))
		return
	}
	var up engine.Update
	var err error
	if h.isEntrypoint(g) {
		up, err = entrypointUpdate(g, q.Values)
	} else {
		up, err = decodeWrites(g, q.Values)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	ref, err := g.UpdateState(r.Context(), up, q.AsNode, engine.WithThread(tid), engine.WithCheckpoint(cid),
		engine.WithMetadata(h.runMetadata(tid, g)))
	if err != nil {
		fail(w, http.StatusBadRequest, "updating thread %s: %v", tid, err)
		return
	}
	h.touch(tid)
	cp := wireRef(&ref)
	if g.Reference() == engine.LangGraphJS {
		delete(cp, "checkpoint_map") // LangGraph.js's server answers the address alone
	}
	writeJSON(w, 200, map[string]any{"checkpoint": cp})
}

// history lists checkpoints newest first: limit (default 10), before (a
// checkpoint id, or a config naming one), metadata filter and namespace.
func (h *Handler) history(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Limit      int             `json:"limit"`
		Before     json.RawMessage `json:"before"`
		Metadata   map[string]any  `json:"metadata"`
		Checkpoint *checkpointSel  `json:"checkpoint"`
	}
	if r.Method == http.MethodPost && !decode(w, r, &q) {
		return
	}
	if l := r.URL.Query().Get("limit"); l != "" {
		if err := json.Unmarshal([]byte(l), &q.Limit); err != nil {
			fail(w, http.StatusUnprocessableEntity, "limit must be a number, not %q", l)
			return
		}
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	before, err := beforeID(q.Before)
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, "%v", err)
		return
	}
	tid := r.PathValue("tid")
	t, ok := h.loadThread(w, r, tid)
	if !ok {
		return
	}
	out := []map[string]any{}
	if t.graph == nil {
		writeJSON(w, 200, out)
		return
	}
	ns := ""
	if q.Checkpoint != nil {
		ns = q.Checkpoint.NS
	}
	// Filter keys "source", "step" and "run_id" name those fields, other
	// keys the user's metadata, as the store's filter reads them.
	filter := q.Metadata
	snaps, err := t.graph.History(r.Context(), checkpoint.ListOptions{NS: &ns, Filter: filter, Before: before, Limit: q.Limit},
		engine.WithThread(tid), engine.WithNamespace(ns))
	if err != nil {
		fail(w, http.StatusUnprocessableEntity, "reading the history of thread %s: %v", tid, err)
		return
	}
	for _, s := range snaps {
		out = append(out, h.stateDoc(t.graph, s))
	}
	writeJSON(w, 200, out)
}

// beforeID reads history's before: a checkpoint id, or a config
// ({"configurable": {"checkpoint_id": …}}) as the Python server takes.
func beforeID(raw json.RawMessage) (string, error) {
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return "", nil
	}
	var id string
	if json.Unmarshal(raw, &id) == nil {
		return id, nil
	}
	var cfg struct {
		Configurable checkpointSel `json:"configurable"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil || cfg.Configurable.ID == "" {
		return "", errors.New("before must be a checkpoint id or {\"configurable\": {\"checkpoint_id\": …}}")
	}
	return cfg.Configurable.ID, nil
}
