package agentserver

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// threadRec is what this process knows of a thread beyond its checkpoints.
type threadRec struct {
	ID       string
	Created  time.Time
	Updated  time.Time
	Metadata map[string]any
	// Cancelled is the thread's newest checkpoint when a run of this
	// process was cancelled there: the thread is idle at it, as
	// LangGraph's server leaves a thread whose run was cancelled, not
	// interrupted (nothing waits for an answer). "" for none.
	Cancelled string `json:"-"`
}

// thread is a thread as the API shows it, assembled from its record and
// its latest checkpoint.
type thread struct {
	rec   threadRec
	graph *engine.Graph    // the graph whose checkpoints the thread holds; nil before a run
	snap  *engine.Snapshot // the latest root state; nil before a run
	busy  bool
}

// findThread loads a thread: its record and, when it has run, its graph
// and latest state. ok is false when neither exists.
func (h *Handler) findThread(ctx context.Context, id string) (*thread, bool, error) {
	h.mu.Lock()
	rec, known := h.threads[id]
	var t thread
	if known {
		t.rec = *rec
		t.rec.Metadata = maps.Clone(rec.Metadata)
	}
	for _, rr := range h.runs {
		if rr.thread == id && !rr.finished() {
			t.busy = true
		}
	}
	h.mu.Unlock()
	if l, ok := h.saver.(checkpoint.Leaser); ok && !t.busy {
		// A run of another process sharing the store.
		if ls, err := l.Leases(ctx, id); err == nil {
			for _, le := range ls {
				t.busy = t.busy || !le.Expired
			}
		}
	}
	tp, err := h.saver.Get(ctx, checkpoint.Ref{ThreadID: id})
	switch {
	case errors.Is(err, checkpoint.ErrNotFound):
		return &t, known, nil
	case err != nil:
		return nil, false, err
	}
	name, _ := tp.Metadata.Extra[engine.MetaGraph].(string)
	for _, gid := range h.ids {
		if g := h.graphs[gid]; g.Name() == name {
			t.graph = g
		}
	}
	if !known {
		t.rec = threadRec{ID: id, Created: tp.Checkpoint.TS, Metadata: threadMetadata(tp.Metadata.Extra)}
	}
	t.rec.Updated = tp.Checkpoint.TS
	if t.graph != nil {
		snap, err := t.graph.GetState(ctx, engine.WithThread(id))
		if err != nil {
			return nil, false, err
		}
		t.snap = snap
	}
	return &t, true, nil
}

// metaThreadKey is the checkpoint metadata key under which a run records
// its thread's metadata, so the thread is found by metadata through the
// store in any process, after a restart too.
const metaThreadKey = "thread_metadata"

// threadMetadata reads the thread metadata a run stored in a checkpoint.
func threadMetadata(extra map[string]any) map[string]any {
	md, _ := extra[metaThreadKey].(map[string]any)
	if md == nil {
		md = map[string]any{}
	}
	return maps.Clone(md)
}

// status is the thread's status in LangGraph's words.
func (t *thread) status() string {
	switch {
	case t.busy:
		return "busy"
	case t.snap == nil, t.rec.Cancelled != "" && t.rec.Cancelled == t.snap.Ref.CheckpointID:
		return "idle"
	}
	switch engine.StatusOf(t.snap, nil) {
	case engine.StatusWaiting, engine.StatusPaused:
		return "interrupted"
	case engine.StatusFailed:
		return "error"
	}
	return "idle"
}

// assistantID is the id of the assistant whose graph ran on the thread.
func (h *Handler) assistantID(g *engine.Graph) string {
	for _, id := range h.ids {
		if h.graphs[id] == g {
			return id
		}
	}
	return ""
}

// wire is the thread as LangGraph's Thread object.
func (h *Handler) wireThread(t *thread) map[string]any {
	md := maps.Clone(t.rec.Metadata)
	if md == nil {
		md = map[string]any{}
	}
	var values any = map[string]any{}
	interrupts := map[string]any{}
	if t.graph != nil {
		md["graph_id"] = h.assistantID(t.graph)
		md["assistant_id"] = h.assistantID(t.graph)
	}
	if t.snap != nil {
		values = h.stateValues(t.graph, t.snap.Values)
		for _, task := range t.snap.Tasks {
			if !task.Finished && len(task.Interrupts) > 0 {
				interrupts[task.ID] = wireInterrupts(task.Interrupts)
			}
		}
	}
	return map[string]any{
		"thread_id": t.rec.ID, "created_at": t.rec.Created.UTC().Format(timeFormat), "updated_at": t.rec.Updated.UTC().Format(timeFormat),
		"metadata": md, "status": t.status(), "config": map[string]any{}, "values": values, "interrupts": interrupts,
	}
}

func (h *Handler) createThread(w http.ResponseWriter, r *http.Request) {
	var q struct {
		ThreadID string         `json:"thread_id"`
		Metadata map[string]any `json:"metadata"`
		IfExists string         `json:"if_exists"`
	}
	if !decode(w, r, &q) {
		return
	}
	if q.ThreadID == "" {
		q.ThreadID = uuid.NewString()
	}
	t, exists, err := h.findThread(r.Context(), q.ThreadID)
	if err != nil {
		fail(w, http.StatusInternalServerError, "reading thread %s: %v", q.ThreadID, err)
		return
	}
	if exists {
		if q.IfExists == "do_nothing" {
			writeJSON(w, 200, h.wireThread(t))
			return
		}
		fail(w, http.StatusConflict, "Thread %s already exists", q.ThreadID)
		return
	}
	now := h.now().UTC()
	rec := &threadRec{ID: q.ThreadID, Created: now, Updated: now, Metadata: maps.Clone(q.Metadata)}
	if rec.Metadata == nil {
		rec.Metadata = map[string]any{}
	}
	h.mu.Lock()
	h.threads[rec.ID] = rec
	h.mu.Unlock()
	writeJSON(w, 200, h.wireThread(&thread{rec: *rec}))
}

// loadThread is findThread answering 404 for an unknown thread.
func (h *Handler) loadThread(w http.ResponseWriter, r *http.Request, id string) (*thread, bool) {
	t, ok, err := h.findThread(r.Context(), id)
	switch {
	case err != nil:
		fail(w, http.StatusInternalServerError, "reading thread %s: %v", id, err)
		return nil, false
	case !ok:
		fail(w, http.StatusNotFound, "Thread with ID %s not found", id)
		return nil, false
	}
	return t, true
}

func (h *Handler) getThread(w http.ResponseWriter, r *http.Request) {
	if t, ok := h.loadThread(w, r, r.PathValue("tid")); ok {
		writeJSON(w, 200, h.wireThread(t))
	}
}

// patchThread merges metadata into the thread's record.
func (h *Handler) patchThread(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Metadata map[string]any `json:"metadata"`
	}
	if !decode(w, r, &q) {
		return
	}
	t, ok := h.loadThread(w, r, r.PathValue("tid"))
	if !ok {
		return
	}
	h.mu.Lock()
	rec := h.threads[t.rec.ID]
	if rec == nil {
		rec = &t.rec
		h.threads[rec.ID] = rec
	}
	if rec.Metadata == nil {
		rec.Metadata = map[string]any{}
	}
	maps.Copy(rec.Metadata, q.Metadata)
	rec.Updated = h.now().UTC()
	t.rec.Metadata = maps.Clone(rec.Metadata)
	h.mu.Unlock()
	writeJSON(w, 200, h.wireThread(t))
}

func (h *Handler) deleteThread(w http.ResponseWriter, r *http.Request) {
	t, ok := h.loadThread(w, r, r.PathValue("tid"))
	if !ok {
		return
	}
	if t.busy {
		fail(w, http.StatusConflict, "Thread %s has a run in progress; cancel it first", t.rec.ID)
		return
	}
	if err := h.saver.DeleteThread(r.Context(), t.rec.ID); err != nil {
		fail(w, http.StatusInternalServerError, "deleting thread %s: %v", t.rec.ID, err)
		return
	}
	h.mu.Lock()
	delete(h.threads, t.rec.ID)
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// copyThread copies a thread with every checkpoint to a new thread id.
func (h *Handler) copyThread(w http.ResponseWriter, r *http.Request) {
	t, ok := h.loadThread(w, r, r.PathValue("tid"))
	if !ok {
		return
	}
	id := uuid.NewString()
	if t.snap != nil {
		cp, ok := h.saver.(checkpoint.Copier)
		if !ok {
			fail(w, http.StatusNotImplemented, "this checkpoint store cannot copy threads")
			return
		}
		if err := cp.CopyThread(r.Context(), t.rec.ID, id); err != nil {
			fail(w, http.StatusInternalServerError, "copying thread %s: %v", t.rec.ID, err)
			return
		}
	}
	now := h.now().UTC()
	rec := &threadRec{ID: id, Created: now, Updated: now, Metadata: maps.Clone(t.rec.Metadata)}
	h.mu.Lock()
	h.threads[id] = rec
	h.mu.Unlock()
	nt, _, err := h.findThread(r.Context(), id)
	if err != nil {
		fail(w, http.StatusInternalServerError, "reading the copy: %v", err)
		return
	}
	writeJSON(w, 200, h.wireThread(nt))
}

type threadQuery struct {
	IDs       []string       `json:"ids"`
	Metadata  map[string]any `json:"metadata"`
	Values    map[string]any `json:"values"`
	Status    string         `json:"status"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
	SortBy    string         `json:"sort_by"`
	SortOrder string         `json:"sort_order"`
	Select    []string       `json:"select"`
}

// matchThreads lists the threads a search keeps, sorted as asked (newest
// update first by default): those this process created and those in the
// store.
func (h *Handler) matchThreads(ctx context.Context, q threadQuery) ([]map[string]any, error) {
	ids := map[string]bool{}
	h.mu.Lock()
	for id := range h.threads {
		ids[id] = true
	}
	h.mu.Unlock()
	if tl, ok := h.saver.(checkpoint.ThreadLister); ok {
		infos, err := tl.ListThreads(ctx, 0)
		if err != nil {
			return nil, err
		}
		for _, ti := range infos {
			ids[ti.ThreadID] = true
		}
	}
	var out []map[string]any
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		if len(q.IDs) > 0 && !slices.Contains(q.IDs, id) {
			continue
		}
		t, ok, err := h.findThread(ctx, id)
		if err != nil || !ok {
			continue // a thread another program wrote, or deleted meanwhile
		}
		doc := h.wireThread(t)
		md, _ := doc["metadata"].(map[string]any)
		vals, _ := doc["values"].(map[string]any)
		if !subset(q.Metadata, md) || !subset(q.Values, vals) || (q.Status != "" && q.Status != doc["status"]) {
			continue
		}
		out = append(out, doc)
	}
	key := q.SortBy
	if key == "" {
		key = "updated_at"
	}
	slices.SortStableFunc(out, func(a, b map[string]any) int {
		x, _ := a[key].(string)
		y, _ := b[key].(string)
		if q.SortOrder == "asc" {
			x, y = y, x
		}
		switch {
		case x > y:
			return -1
		case x < y:
			return 1
		}
		return 0
	})
	return out, nil
}

func (h *Handler) searchThreads(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if !decode(w, r, &q) {
		return
	}
	docs, err := h.matchThreads(r.Context(), q)
	if err != nil {
		fail(w, http.StatusInternalServerError, "listing threads: %v", err)
		return
	}
	docs = page(docs, q.Offset, q.Limit)
	if len(q.Select) > 0 {
		for i, d := range docs {
			sel := map[string]any{}
			for _, k := range q.Select {
				if v, ok := d[k]; ok {
					sel[k] = v
				}
			}
			docs[i] = sel
		}
	}
	writeJSON(w, 200, docs)
}

func (h *Handler) countThreads(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if !decode(w, r, &q) {
		return
	}
	docs, err := h.matchThreads(r.Context(), q)
	if err != nil {
		fail(w, http.StatusInternalServerError, "listing threads: %v", err)
		return
	}
	writeJSON(w, 200, len(docs))
}
