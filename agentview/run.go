package agentview

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// Runs is what a server's view graph says of the actions a LangGraph
// server cannot take, though it runs the graph.
const Runs = "this graph runs on a LangGraph server, which runs whole steps: stepping into a step's phases, what-if writes without running nodes, leaving answers for workers and the storage console need a Weft store"

// runs runs one assistant's threads on the server: the view graph's
// engine.ViewRunner and engine.ViewUpdater.
type runs struct {
	c         *agentclient.Client
	assistant string
}

// streamModes are what a run from the studio streams: each task's start
// and end (the graph's highlights), each node's writes (the event list)
// and the models' tokens (the chat view), from subgraphs too.
var streamModes = []string{"updates", "tasks", "messages-tuple"}

// settleWait bounds how long a finished run's thread may still be busy on
// the server while it stores the run's end.
const settleWait = 10 * time.Second

// RunView runs the thread on the server (engine.ViewRunner). Every answer
// names the checkpoint it answers (agentclient.Resume), so a thread that
// moved meanwhile is refused with engine.ErrViewMoved instead of being
// answered on another branch. Cancelling ctx cancels the run on the
// server.
func (r runs) RunView(ctx context.Context, run engine.ViewRun) (*engine.Result, error) {
	req := agentclient.RunRequest{AssistantID: r.assistant, StreamMode: streamModes, StreamSubgraphs: true,
		StreamResumable: true, OnDisconnect: "cancel",
		InterruptBefore: run.Before, InterruptAfter: run.After}
	if run.OneStep {
		req.InterruptAfter = []string{"*"}
	}
	st, err := r.start(ctx, run, req)
	if err != nil {
		if mv := (*agentclient.ThreadMovedError)(nil); errors.As(err, &mv) {
			return nil, fmt.Errorf("%w: %w", engine.ErrViewMoved, err)
		}
		return nil, err
	}
	defer st.Close()
	for st.Next() {
		if run.Observer != nil {
			for _, ev := range eventsOf(st.Event()) {
				run.Observer(ev)
			}
		}
	}
	if err := st.Err(); err != nil {
		if ctx.Err() != nil && st.RunID() != "" {
			return nil, r.cancel(run.Thread, st.RunID(), ctx.Err())
		}
		return nil, err
	}
	return r.result(ctx, run, req)
}

var _ engine.ViewFollower = runs{}

// FollowView follows the run in progress on thread, one another client
// or a background run started (engine.ViewFollower): its stream joined
// from now on, its events converted as RunView's are. Only what the run
// was started to stream can come (a run streaming values alone shows no
// node's update); the studio reads the thread's state as it changes all
// the same.
func (r runs) FollowView(ctx context.Context, thread string, obs func(engine.Event)) error {
	run, err := r.running(ctx, thread)
	if err != nil {
		return err
	}
	st, err := r.c.JoinStream(ctx, thread, run.RunID, "")
	if err != nil {
		return err
	}
	defer st.Close()
	for st.Next() {
		for _, ev := range eventsOf(st.Event()) {
			obs(ev)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return st.Err()
}

// CancelView cancels the run in progress on thread on the server and
// waits for it to stop (engine.ViewFollower); the thread keeps what the
// run wrote, as LangGraph's "interrupt" cancel does.
func (r runs) CancelView(ctx context.Context, thread string) error {
	run, err := r.running(ctx, thread)
	if err != nil {
		return err
	}
	if err := r.c.CancelRun(ctx, thread, run.RunID, agentclient.CancelOptions{Wait: true, Action: "interrupt"}); err != nil {
		return fmt.Errorf("cancelling run %s: %w", run.RunID, err)
	}
	return nil
}

// running is the thread's run in progress (running, or pending behind
// another), newest first; engine.ErrNoRun for none.
func (r runs) running(ctx context.Context, thread string) (agentclient.Run, error) {
	list, err := r.c.ListRuns(ctx, thread, 10)
	if err != nil {
		return agentclient.Run{}, notFound(checkpoint.Ref{ThreadID: thread}, err)
	}
	for _, status := range []string{"running", "pending"} {
		for _, run := range list {
			if run.Status == status {
				return run, nil
			}
		}
	}
	return agentclient.Run{}, engine.ErrNoRun
}

// start sends the run the request says: a branch or new thread for
// Values, an answer acting on the head the caller saw for a Command, a
// continuation at the head or a replay from an older checkpoint for nil.
func (r runs) start(ctx context.Context, run engine.ViewRun, req agentclient.RunRequest) (*agentclient.Stream, error) {
	switch in := run.Input.(type) {
	case engine.Values:
		req.Input, req.CheckpointID, req.IfNotExists = map[string]any(in), run.Checkpoint, "create"
		return r.c.Stream(ctx, run.Thread, req)
	case engine.Command:
		cmd, err := commandOf(in)
		if err != nil {
			return nil, err
		}
		at := run.Checkpoint
		if at == "" {
			if at, err = r.head(ctx, run.Thread); err != nil {
				return nil, err
			}
		}
		return r.c.Resume(ctx, run.Thread, at, cmd, req)
	case nil:
		head, err := r.head(ctx, run.Thread)
		if err != nil {
			return nil, err
		}
		if run.Checkpoint == "" || run.Checkpoint == head {
			return r.c.Resume(ctx, run.Thread, head, agentclient.Command{}, req)
		}
		// An older checkpoint: LangGraph replays from it, a new branch.
		req.CheckpointID = run.Checkpoint
		return r.c.Stream(ctx, run.Thread, req)
	default:
		return nil, fmt.Errorf("a LangGraph server's run takes state values, an answer or nothing, not %T", run.Input)
	}
}

// head is the thread's newest checkpoint on the server.
func (r runs) head(ctx context.Context, thread string) (string, error) {
	st, err := r.c.GetState(ctx, thread, agentclient.StateQuery{})
	if err != nil {
		return "", notFound(checkpoint.Ref{ThreadID: thread}, err)
	}
	if st.Checkpoint.CheckpointID == "" {
		return "", fmt.Errorf("thread %q has not run yet: start it with input", thread)
	}
	return st.Checkpoint.CheckpointID, nil
}

// commandOf is an engine answer as the server takes it.
func commandOf(in engine.Command) (agentclient.Command, error) {
	var cmd agentclient.Command
	switch {
	case in.ResumeByID != nil:
		cmd.Resume = in.ResumeByID
	case in.Resume != nil:
		cmd.Resume = in.Resume
	}
	if len(in.Update) > 0 {
		u := map[string]any{}
		for _, w := range in.Update {
			u[w.Channel] = w.Value
		}
		cmd.Update = u
	}
	if len(in.Goto) > 0 {
		cmd.Goto = in.Goto
	}
	if len(in.Sends) > 0 {
		return cmd, errors.New("a LangGraph server's command cannot carry Sends from Go")
	}
	if cmd.Resume == nil && cmd.Update == nil && cmd.Goto == nil {
		return cmd, errors.New("the answer is empty: give a value to resume with")
	}
	return cmd, nil
}

// cancel stops the thread's run on the server after the caller gave up
// on it, and says so.
func (r runs) cancel(thread, run string, why error) error {
	ctx, done := context.WithTimeout(context.Background(), settleWait)
	defer done()
	if err := r.c.CancelRun(ctx, thread, run, agentclient.CancelOptions{Wait: true, Action: "interrupt"}); err != nil {
		return fmt.Errorf("%w; cancelling run %s on the server failed too: %w", why, run, err)
	}
	return fmt.Errorf("%w: run %s was cancelled on the server", why, run)
}

// result is the thread's state once the run's stream has ended, as the
// engine reports a run's end. The server may still mark the thread busy
// for a moment while it stores the run's end: result waits that out.
func (r runs) result(ctx context.Context, run engine.ViewRun, req agentclient.RunRequest) (*engine.Result, error) {
	if _, err := r.c.Settle(ctx, run.Thread, settleWait); err != nil {
		return nil, notFound(checkpoint.Ref{ThreadID: run.Thread}, err)
	}
	head, err := r.c.GetState(ctx, run.Thread, agentclient.StateQuery{Subgraphs: true})
	if err != nil {
		return nil, err
	}
	snap, err := Snapshot(head)
	if err != nil {
		return nil, err
	}
	res := &engine.Result{Values: snap.Values, Next: snap.Next, Done: len(snap.Next) == 0, Ref: snap.Ref}
	res.Interrupts = snap.OpenInterrupts()
	if len(res.Interrupts) == 0 && len(snap.Next) > 0 {
		res.Breakpoint = engine.StopAfter
		for _, n := range snap.Next {
			if slices.Contains(req.InterruptBefore, n) || slices.Contains(req.InterruptBefore, "*") {
				res.Breakpoint = engine.StopBefore
			}
		}
	}
	return res, nil
}

// eventsOf converts a run's stream event into the engine's, for the
// studio's live view: tasks' starts and ends, nodes' writes (one event
// per node), message tokens. Other events (metadata, values) and ones
// that cannot be read give none: the run's result is read from the
// server's state, not from its stream.
func eventsOf(e agentclient.Event) []engine.Event {
	ev := engine.Event{NS: strings.Join(e.Namespace, "|"), Time: time.Now()}
	switch e.Mode {
	case "tasks":
		var t struct {
			ID         string          `json:"id"`
			Name       string          `json:"name"`
			Triggers   []string        `json:"triggers"`
			Result     json.RawMessage `json:"result"`
			Error      json.RawMessage `json:"error"`
			Interrupts []struct {
				ID    string `json:"id"`
				Value any    `json:"value"`
			} `json:"interrupts"`
		}
		if e.Decode(&t) != nil || t.Name == "" {
			return nil
		}
		te := &engine.TaskEvent{ID: t.ID, Name: t.Name, Triggers: t.Triggers}
		// A task's end carries its result (an object, perhaps empty)
		// and its error (null when none); its start carries neither.
		te.Done = len(t.Result) > 0 || len(t.Error) > 0
		if len(t.Error) > 0 && string(t.Error) != "null" {
			var x any
			_ = json.Unmarshal(t.Error, &x)
			te.Error = langgraph.ErrorText(x) // as the state reports the task's error (Snapshot)
		}
		for _, it := range t.Interrupts {
			te.Interrupts = append(te.Interrupts, engine.PendingInterrupt{ID: it.ID, Value: it.Value, Node: t.Name, TaskID: t.ID, NS: ev.NS})
		}
		ev.Mode, ev.Task = engine.ModeTasks, te
		return []engine.Event{ev}
	case "updates":
		var u map[string]json.RawMessage
		if e.Decode(&u) != nil {
			return nil
		}
		// One event per node, as the engine reports them; a server's
		// object may hold several nodes.
		var out []engine.Event
		for _, node := range sortedKeys(u) {
			nu := &engine.NodeUpdate{Node: node}
			if node == "__interrupt__" {
				var its []struct {
					ID    string `json:"id"`
					Value any    `json:"value"`
				}
				_ = json.Unmarshal(u[node], &its)
				for _, it := range its {
					nu.Interrupts = append(nu.Interrupts, engine.PendingInterrupt{ID: it.ID, Value: it.Value, NS: ev.NS})
				}
			} else {
				var w map[string]any
				_ = json.Unmarshal(u[node], &w)
				for _, k := range sortedKeys(w) {
					nu.Writes = append(nu.Writes, engine.Write{Channel: k, Value: w[k]})
				}
			}
			e := ev
			e.Mode, e.Update = engine.ModeUpdates, nu
			out = append(out, e)
		}
		return out
	case "messages":
		var tuple []json.RawMessage
		if e.Decode(&tuple) != nil || len(tuple) == 0 {
			return nil
		}
		var chunk map[string]any
		var md struct {
			Node string `json:"langgraph_node"`
			Step int    `json:"langgraph_step"`
		}
		if json.Unmarshal(tuple[0], &chunk) != nil {
			return nil
		}
		if len(tuple) > 1 {
			_ = json.Unmarshal(tuple[1], &md)
		}
		msg, ok := engine.MessageOf(chunk)
		if !ok {
			return nil
		}
		ev.Mode, ev.Step = engine.ModeMessages, md.Step
		ev.Message = &engine.MessageChunk{Message: msg, Node: md.Node}
		return []engine.Event{ev}
	}
	return nil
}

// UpdateView writes values into the thread as upd.AsNode (engine.ViewUpdater),
// at the checkpoint the caller saw: the server's update_state, through
// the channels' reducers.
func (r runs) UpdateView(ctx context.Context, upd engine.ViewUpdate) (checkpoint.Ref, error) {
	at := upd.Checkpoint
	if at == "" {
		var err error
		if at, err = r.head(ctx, upd.Thread); err != nil {
			return checkpoint.Ref{}, err
		}
	}
	ref, err := r.c.UpdateState(ctx, upd.Thread, agentclient.StateUpdate{Values: map[string]any(upd.Values), AsNode: upd.AsNode, CheckpointID: at})
	if err != nil {
		return checkpoint.Ref{}, notFound(checkpoint.Ref{ThreadID: upd.Thread, CheckpointID: at}, err)
	}
	return checkpoint.Ref{ThreadID: upd.Thread, NS: ref.CheckpointNS, CheckpointID: ref.CheckpointID}, nil
}
