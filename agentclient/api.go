package agentclient

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Ok checks that the server answers GET /ok.
func (c *Client) Ok(ctx context.Context) error {
	return c.json(ctx, call{method: http.MethodGet, path: "/ok", bounded: true}, nil)
}

// Info reads GET /info.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var out Info
	if err := c.json(ctx, call{method: http.MethodGet, path: "/info", bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SearchAssistants lists the assistants matching q.
func (c *Client) SearchAssistants(ctx context.Context, q AssistantSearch) ([]Assistant, error) {
	var out []Assistant
	err := c.json(ctx, call{method: http.MethodPost, path: "/assistants/search", body: q, bounded: true}, &out)
	return out, err
}

// GetAssistant reads one assistant by assistant id or graph id.
func (c *Client) GetAssistant(ctx context.Context, id string) (*Assistant, error) {
	p := "/assistants/" + esc(id)
	if err := needID(http.MethodGet, p, "the assistant id", id); err != nil {
		return nil, err
	}
	var out Assistant
	if err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetGraph reads an assistant's drawing. xray 0 keeps subgraphs as one
// node, a negative xray inlines all of them (xray=true), n inlines n
// levels.
func (c *Client) GetGraph(ctx context.Context, id string, xray int) (*Graph, error) {
	p := "/assistants/" + esc(id) + "/graph"
	if err := needID(http.MethodGet, p, "the assistant id", id); err != nil {
		return nil, err
	}
	switch {
	case xray < 0:
		p += "?xray=true"
	case xray > 0:
		p += "?xray=" + strconv.Itoa(xray)
	}
	var out Graph
	if err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetSchemas reads an assistant's JSON Schemas. It is bounded by ctx
// alone, not WithTimeout: LangGraph.js extracts schemas from TypeScript
// on the first call, which can take minutes.
func (c *Client) GetSchemas(ctx context.Context, id string) (*Schemas, error) {
	p := "/assistants/" + esc(id) + "/schemas"
	if err := needID(http.MethodGet, p, "the assistant id", id); err != nil {
		return nil, err
	}
	var out Schemas
	if err := c.json(ctx, call{method: http.MethodGet, path: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateThread makes a thread.
func (c *Client) CreateThread(ctx context.Context, req ThreadCreate) (*Thread, error) {
	var out Thread
	if err := c.json(ctx, call{method: http.MethodPost, path: "/threads", body: req, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Settle waits for the thread to stop being busy, checking every 100 ms
// for at most within, and returns its record as last read: a run's stream
// ends as the run does, but the server may mark the thread busy a moment
// longer while it stores the run's end. A thread still busy after within
// is returned as it is (the caller reads its state all the same).
func (c *Client) Settle(ctx context.Context, thread string, within time.Duration) (*Thread, error) {
	deadline := time.Now().Add(within)
	for {
		th, err := c.GetThread(ctx, thread)
		if err != nil || th.Status != "busy" || time.Now().After(deadline) {
			return th, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// GetThread reads a thread's record.
func (c *Client) GetThread(ctx context.Context, thread string) (*Thread, error) {
	p := "/threads/" + esc(thread)
	if err := needID(http.MethodGet, p, "the thread id", thread); err != nil {
		return nil, err
	}
	var out Thread
	if err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SearchThreads lists the threads matching q.
func (c *Client) SearchThreads(ctx context.Context, q ThreadSearch) ([]Thread, error) {
	var out []Thread
	err := c.json(ctx, call{method: http.MethodPost, path: "/threads/search", body: q, bounded: true}, &out)
	return out, err
}

// DeleteThread deletes a thread with its checkpoints.
func (c *Client) DeleteThread(ctx context.Context, thread string) error {
	p := "/threads/" + esc(thread)
	if err := needID(http.MethodDelete, p, "the thread id", thread); err != nil {
		return err
	}
	return c.json(ctx, call{method: http.MethodDelete, path: p, bounded: true}, nil)
}

// GetState reads a thread's state at its head or at q.CheckpointID.
func (c *Client) GetState(ctx context.Context, thread string, q StateQuery) (*StateSnapshot, error) {
	p := "/threads/" + esc(thread) + "/state"
	if err := needID(http.MethodGet, p, "the thread id", thread); err != nil {
		return nil, err
	}
	var out StateSnapshot
	if q.CheckpointNS != "" {
		cp := map[string]any{"checkpoint_ns": q.CheckpointNS}
		if q.CheckpointID != "" {
			cp["checkpoint_id"] = q.CheckpointID
		}
		body := map[string]any{"checkpoint": cp}
		if q.Subgraphs {
			// A string: LangGraph.js's server refuses a JSON boolean here
			// (400 "Expected string"), and Python's parses "true" as one.
			body["subgraphs"] = "true"
		}
		if err := c.json(ctx, call{method: http.MethodPost, path: p + "/checkpoint", body: body, bounded: true}, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	if q.CheckpointID != "" {
		p += "/" + esc(q.CheckpointID)
	}
	if q.Subgraphs {
		p += "?subgraphs=true"
	}
	if err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateState writes u into a thread, making a new checkpoint (source
// update) whose parent is u.CheckpointID or the head, and returns it.
func (c *Client) UpdateState(ctx context.Context, thread string, u StateUpdate) (*CheckpointRef, error) {
	p := "/threads/" + esc(thread) + "/state"
	if err := needID(http.MethodPost, p, "the thread id", thread); err != nil {
		return nil, err
	}
	var out struct {
		Checkpoint *CheckpointRef `json:"checkpoint"`
	}
	if err := c.json(ctx, call{method: http.MethodPost, path: p, body: u, bounded: true}, &out); err != nil {
		return nil, err
	}
	if out.Checkpoint == nil || out.Checkpoint.CheckpointID == "" {
		return nil, &Error{Method: http.MethodPost, Path: p, Status: 200, Message: "the answer names no checkpoint (want {\"checkpoint\": {\"checkpoint_id\": …}})"}
	}
	return out.Checkpoint, nil
}

// History lists a thread's checkpoints, newest first.
func (c *Client) History(ctx context.Context, thread string, q HistoryQuery) ([]StateSnapshot, error) {
	p := "/threads/" + esc(thread) + "/history"
	if err := needID(http.MethodPost, p, "the thread id", thread); err != nil {
		return nil, err
	}
	body := map[string]any{}
	if q.Limit > 0 {
		body["limit"] = q.Limit
	}
	// before is a checkpoint id string: LangGraph.js rejects the config
	// object older Python servers took.
	if q.Before != "" {
		body["before"] = q.Before
	}
	if q.Metadata != nil {
		body["metadata"] = q.Metadata
	}
	if q.CheckpointNS != "" {
		body["checkpoint"] = map[string]any{"checkpoint_ns": q.CheckpointNS}
	}
	var out []StateSnapshot
	err := c.json(ctx, call{method: http.MethodPost, path: p, body: body, bounded: true}, &out)
	return out, err
}

// runsPath is the runs collection of a thread, or of stateless runs when
// thread is "".
func runsPath(thread string) string {
	if thread == "" {
		return "/runs"
	}
	return "/threads/" + esc(thread) + "/runs"
}

// CreateRun starts a background run on thread ("" for a stateless run
// on a temporary thread) and returns it at once (status pending).
func (c *Client) CreateRun(ctx context.Context, thread string, req RunRequest) (*Run, error) {
	p := runsPath(thread)
	if err := needID(http.MethodPost, p, "the assistant id", req.AssistantID); err != nil {
		return nil, err
	}
	var out Run
	if err := c.json(ctx, call{method: http.MethodPost, path: p, body: req, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Wait runs on thread ("" for stateless) and returns the run's last
// values chunk. During an interrupt LangGraph answers only
// {"__interrupt__": […]}: read GetState for the state. Bounded by ctx
// alone.
func (c *Client) Wait(ctx context.Context, thread string, req RunRequest) (json.RawMessage, error) {
	p := runsPath(thread) + "/wait"
	if err := needID(http.MethodPost, p, "the assistant id", req.AssistantID); err != nil {
		return nil, err
	}
	var out json.RawMessage
	if err := c.json(ctx, call{method: http.MethodPost, path: p, body: req}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetRun reads a run's record.
func (c *Client) GetRun(ctx context.Context, thread, run string) (*Run, error) {
	p := "/threads/" + esc(thread) + "/runs/" + esc(run)
	if err := twoIDs(http.MethodGet, p, thread, run); err != nil {
		return nil, err
	}
	var out Run
	if err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRuns lists a thread's runs, newest first; limit 0 is the server's
// default.
func (c *Client) ListRuns(ctx context.Context, thread string, limit int) ([]Run, error) {
	p := "/threads/" + esc(thread) + "/runs"
	if err := needID(http.MethodGet, p, "the thread id", thread); err != nil {
		return nil, err
	}
	if limit > 0 {
		p += "?limit=" + strconv.Itoa(limit)
	}
	var out []Run
	err := c.json(ctx, call{method: http.MethodGet, path: p, bounded: true}, &out)
	return out, err
}

// JoinRun waits for a run to end and returns its last values chunk
// (LangGraph answers the parent's values when a subgraph interrupted:
// read GetState to learn whether the run interrupted). Bounded by ctx
// alone.
func (c *Client) JoinRun(ctx context.Context, thread, run string) (json.RawMessage, error) {
	p := "/threads/" + esc(thread) + "/runs/" + esc(run) + "/join"
	if err := twoIDs(http.MethodGet, p, thread, run); err != nil {
		return nil, err
	}
	var out json.RawMessage
	if err := c.json(ctx, call{method: http.MethodGet, path: p}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CancelRun cancels a run. With o.Wait it is bounded by ctx alone.
func (c *Client) CancelRun(ctx context.Context, thread, run string, o CancelOptions) error {
	p := "/threads/" + esc(thread) + "/runs/" + esc(run) + "/cancel"
	if err := twoIDs(http.MethodPost, p, thread, run); err != nil {
		return err
	}
	q := url.Values{}
	if o.Wait {
		q.Set("wait", "true")
	}
	if o.Action != "" {
		q.Set("action", o.Action)
	}
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return c.json(ctx, call{method: http.MethodPost, path: p, bounded: !o.Wait}, nil)
}

func twoIDs(method, path, thread, run string) error {
	if err := needID(method, path, "the thread id", thread); err != nil {
		return err
	}
	return needID(method, path, "the run id", run)
}
