// The commands on a running Agent Server: -store http://HOST:PORT (or
// https://) names a LangGraph server (langgraph dev, a deployment, or
// weft serve) instead of a store file, and threads, history, state, run,
// resume and answer talk to it through agentclient, printing the JSON shapes
// they print for a file store.

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// isServerStore tells a server address from a store path or DSN.
func isServerStore(spec string) bool {
	return strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://")
}

// serverCommand is a command that runs against an Agent Server.
type serverCommand func(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error

var serverCommands = map[string]serverCommand{
	"threads": srvThreads,
	"history": srvHistory,
	"state":   srvState,
	"run":     srvRun,
	"resume":  srvResume,
	"answer":  srvAnswer,
	"compare": srvCompare,
	"watch":   srvWatch,
	"export":  srvExport,
}

// runOnServer runs command name against the server at base and returns
// the exit code.
func runOnServer(ctx context.Context, name, base string, create bool, args []string, env Env) int {
	run, ok := serverCommands[name]
	if !ok {
		var names []string
		for n := range serverCommands {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(env.Stderr, "weft %s: not available on an Agent Server (-store %s); there: %s\n", name, base, strings.Join(names, ", "))
		return 2
	}
	if create {
		fmt.Fprintf(env.Stderr, "weft %s: -create is for store files; a server's threads are made by run\n", name)
		return 2
	}
	c, err := agentclient.New(base, agentclient.WithAPIKeyFromEnv())
	if err != nil {
		fmt.Fprintf(env.Stderr, "weft %s: %v\n", name, err)
		return 2
	}
	fmt.Fprintf(env.Stderr, "weft: talking to the Agent Server at %s\n", c.BaseURL())
	if name == "run" || name == "resume" {
		var unwatch func()
		ctx, unwatch = stopOnSignals(ctx, name)
		defer unwatch()
	}
	if err := run(ctx, c, args, env.Stdout); err != nil {
		fmt.Fprintf(env.Stderr, "weft %s: %v\n", name, err)
		var ue *usageError
		if errors.As(err, &ue) {
			return 2
		}
		return 1
	}
	return 0
}

// srvThreads lists the server's threads, newest first, as ThreadJSON:
// graph is the thread's graph_id metadata, checkpoints counts its root
// checkpoints (from its history), step and source are its head's, status
// is engine's word for the server's (busy: running; interrupted: waiting,
// or paused at a breakpoint; error: failed; idle: done, or paused when
// nodes are due; new: made on the server but never run, so without
// checkpoints, which a store file never lists). A server holds no
// leases: lease is never set.
func srvThreads(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	graph := fs.String("graph", "", "only threads of this graph")
	limit := fs.Int("limit", 0, "at most this many threads")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	q := agentclient.ThreadSearch{SortBy: "updated_at", SortOrder: "desc", Limit: 100,
		Select: []string{"thread_id", "status", "updated_at", "metadata"}}
	if *graph != "" {
		q.Metadata = map[string]any{"graph_id": *graph}
	}
	out := []ThreadJSON{}
	unreadable := 0
	for {
		page, err := c.SearchThreads(ctx, q)
		if err != nil {
			return err
		}
		for _, th := range page {
			tj := ThreadJSON{ThreadID: th.ThreadID, UpdatedAt: th.UpdatedAt}
			tj.Graph, _ = th.Metadata["graph_id"].(string)
			if err := threadFacts(ctx, c, th, &tj); err != nil {
				tj.Status, tj.Error = "unreadable", err.Error()
				unreadable++
			}
			out = append(out, tj)
			if *limit > 0 && len(out) == *limit {
				break
			}
		}
		if len(page) < q.Limit || (*limit > 0 && len(out) == *limit) {
			break
		}
		q.Offset += len(page)
	}
	if err := printJSON(w, out); err != nil {
		return err
	}
	if unreadable > 0 {
		return fmt.Errorf("%d of %d threads could not be read (their error field says why)", unreadable, len(out))
	}
	return nil
}

// threadFacts fills a listed thread's step, source, checkpoints and
// status from its state and history.
func threadFacts(ctx context.Context, c *agentclient.Client, th agentclient.Thread, tj *ThreadJSON) error {
	st, err := c.GetState(ctx, th.ThreadID, agentclient.StateQuery{})
	if errors.Is(err, agentclient.ErrNotFound) || err == nil && st.Checkpoint.CheckpointID == "" {
		// A thread made but never run: no checkpoint yet (some servers
		// answer 404 for its state, others an empty one).
		tj.Status = "new"
		return nil
	}
	if err != nil {
		return err
	}
	tj.Step, tj.Source = st.Step(), st.Source()
	n, err := countCheckpoints(ctx, c, th.ThreadID)
	if err != nil {
		return err
	}
	tj.Checkpoints = n
	tj.Status = serverStatus(th.Status, st)
	return nil
}

func countCheckpoints(ctx context.Context, c *agentclient.Client, thread string) (int, error) {
	n, before := 0, ""
	for {
		page, err := c.History(ctx, thread, agentclient.HistoryQuery{Limit: 100, Before: before})
		if err != nil {
			return 0, err
		}
		n += len(page)
		if len(page) < 100 {
			return n, nil
		}
		before = page[len(page)-1].Checkpoint.CheckpointID
	}
}

// serverStatus is engine.StatusOf's word for a server thread.
func serverStatus(status string, st *agentclient.StateSnapshot) string {
	switch {
	case status == "busy":
		return string(engine.StatusRunning)
	case len(st.Interrupts()) > 0:
		return string(engine.StatusWaiting)
	case status == "error" || len(taskErrors(st)) > 0:
		return string(engine.StatusFailed)
	case len(st.Next) == 0:
		return string(engine.StatusDone)
	}
	return string(engine.StatusPaused)
}

// srvHistory prints a thread's root checkpoints, newest first, as
// SnapshotJSON.
func srvHistory(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	limit := fs.Int("limit", 0, "at most this many checkpoints")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: history THREAD [-limit N]")
	}
	var all []agentclient.StateSnapshot
	before := ""
	for *limit <= 0 || len(all) < *limit {
		n := 100
		if *limit > 0 {
			n = min(n, *limit-len(all))
		}
		page, err := c.History(ctx, pos[0], agentclient.HistoryQuery{Limit: n, Before: before})
		if err != nil {
			return threadErr(pos[0], err)
		}
		all = append(all, page...)
		if len(page) < n {
			break
		}
		before = page[len(page)-1].Checkpoint.CheckpointID
	}
	byID := map[string]*agentclient.StateSnapshot{}
	for i := range all {
		byID[all[i].Checkpoint.CheckpointID] = &all[i]
	}
	out := []SnapshotJSON{}
	for i := range all {
		parent := byID[all[i].ParentID()]
		if parent == nil && all[i].ParentID() != "" {
			if parent, err = c.GetState(ctx, pos[0], agentclient.StateQuery{CheckpointID: all[i].ParentID()}); err != nil {
				return err
			}
		}
		sj, err := serverSnapshotJSON(&all[i], parent)
		if err != nil {
			return err
		}
		out = append(out, sj)
	}
	return printJSON(w, out)
}

// srvState prints a thread's state at its head or at a checkpoint, as
// SnapshotJSON, with the interrupts of its subgraphs.
func srvState(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("usage: state THREAD [CHECKPOINT]")
	}
	q := agentclient.StateQuery{Subgraphs: true}
	if len(pos) == 2 {
		q.CheckpointID = pos[1]
	}
	st, err := c.GetState(ctx, pos[0], q)
	if err != nil {
		return threadErr(pos[0], err)
	}
	var parent *agentclient.StateSnapshot
	if st.ParentID() != "" {
		if parent, err = c.GetState(ctx, pos[0], agentclient.StateQuery{CheckpointID: st.ParentID()}); err != nil {
			return err
		}
	}
	sj, err := serverSnapshotJSON(st, parent)
	if err != nil {
		return err
	}
	return printJSON(w, sj)
}

// serverGraph is thread's graph on the server, as the studio shows it
// (agentview): the assistant of the thread's graph_id, bound to the
// server's threads, so compare and watch read the server's history as
// they read a store's.
func serverGraph(ctx context.Context, c *agentclient.Client, thread string) (*engine.Graph, error) {
	th, err := c.GetThread(ctx, thread)
	if err != nil {
		return nil, threadErr(thread, err)
	}
	srv := agentview.New(c)
	if err := srv.Load(ctx); err != nil {
		return nil, err
	}
	gid, _ := th.Metadata["graph_id"].(string)
	var names []string
	for _, g := range srv.Graphs() {
		if g.Name == gid {
			return g.Graph.WithSaver(srv.Saver()), nil
		}
		names = append(names, g.Name)
	}
	return nil, fmt.Errorf("thread %q ran graph %q, which the server does not serve (it serves %s)", thread, gid, strings.Join(names, ", "))
}

// srvWatch is watch on the server's history of the thread.
func srvWatch(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	pos, err := parse(flag.NewFlagSet("watch", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("usage: watch THREAD EXPR… (each EXPR over the thread's state keys, at every checkpoint, newest first)")
	}
	g, err := serverGraph(ctx, c, pos[0])
	if err != nil {
		return err
	}
	return watchOn(ctx, g, pos[0], pos[1:], w)
}

// srvCompare is compare on the server's history of the thread.
func srvCompare(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	pos, err := parse(flag.NewFlagSet("compare", flag.ContinueOnError), args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("usage: compare THREAD CHECKPOINT_A CHECKPOINT_B")
	}
	g, err := serverGraph(ctx, c, pos[0])
	if err != nil {
		return err
	}
	return compareOn(ctx, g, pos[0], pos[1], pos[2], w)
}

// srvExport writes the thread's root checkpoints as the server's history
// gives them, with their pending writes, as a bundle that weft import
// reads into a Weft store.
func srvExport(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	thread, out, err := exportArgs(args)
	if err != nil {
		return err
	}
	if _, err := c.GetThread(ctx, thread); err != nil {
		return threadErr(thread, err)
	}
	return exportTo(ctx, agentview.New(c).Saver(), thread, out, w)
}

// threadErr names the thread in a not-found error.
func threadErr(thread string, err error) error {
	if errors.Is(err, agentclient.ErrNotFound) {
		return fmt.Errorf("thread %q not found on this server: %w", thread, err)
	}
	return err
}

// serverSnapshotJSON is a server snapshot in Weft's shape. ran is the
// nodes whose step made it: its parent's next for a loop checkpoint, the
// node an update was written as, none for input and fork checkpoints.
func serverSnapshotJSON(st, parent *agentclient.StateSnapshot) (SnapshotJSON, error) {
	out := SnapshotJSON{CheckpointID: st.Checkpoint.CheckpointID, ParentID: st.ParentID(), Step: st.Step(), Source: st.Source(),
		CreatedAt: st.CreatedAt, Next: st.Next, Values: engine.Values{}}
	if out.Next == nil {
		out.Next = []string{}
	}
	if len(st.Values) > 0 && string(st.Values) != "null" {
		if err := json.Unmarshal(st.Values, &out.Values); err != nil {
			return out, fmt.Errorf("checkpoint %s: its values are not an object: %v", out.CheckpointID, err)
		}
	}
	switch out.Source {
	case "loop":
		if parent != nil {
			out.Ran = parent.Next
		}
	case "update":
		if wr, ok := st.Metadata["writes"].(map[string]any); ok {
			for n := range wr {
				out.Ran = append(out.Ran, n)
			}
			sort.Strings(out.Ran)
		}
	}
	// Each interrupt once, with the innermost node that asked (a
	// subgraph's shows on its parent's task too).
	seen := map[string]int{}
	var walk func(s *agentclient.StateSnapshot)
	walk = func(s *agentclient.StateSnapshot) {
		for _, t := range s.Tasks {
			for _, it := range t.Interrupts {
				var v any
				if len(it.Value) > 0 {
					_ = json.Unmarshal(it.Value, &v)
				}
				pi := engine.PendingInterrupt{ID: it.ID, Value: v, Node: t.Name, TaskID: t.ID, NS: s.Checkpoint.CheckpointNS}
				if i, dup := seen[it.ID]; dup && it.ID != "" {
					out.Interrupts[i] = pi
					continue
				}
				seen[it.ID] = len(out.Interrupts)
				out.Interrupts = append(out.Interrupts, pi)
			}
			if t.State != nil {
				walk(t.State)
			}
		}
	}
	walk(st)
	if errs := taskErrors(st); len(errs) > 0 {
		out.Errors = errs
	}
	return out, nil
}

// taskErrors are a snapshot's failed tasks, by name.
func taskErrors(st *agentclient.StateSnapshot) map[string]string {
	var out map[string]string
	for _, t := range st.Tasks {
		if len(t.Error) == 0 || string(t.Error) == "null" {
			continue
		}
		var v any
		if json.Unmarshal(t.Error, &v) != nil {
			v = string(t.Error)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[t.Name] = langgraph.ErrorText(v)
	}
	return out
}

// srvRun starts a graph on a new thread (or -thread ID) and waits for the
// run to stop: done, at an interrupt or at a breakpoint. It prints
// ResultJSON.
func srvRun(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	input := fs.String("input", "", "the graph's input, a JSON object")
	thread := fs.String("thread", "", "run on this thread (default: a new one)")
	var before, after listFlag
	fs.Var(&before, "break-before", "stop before this node (repeat for more; * for all)")
	fs.Var(&after, "break-after", "stop after this node (repeat for more; * for all)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *input == "" {
		return usagef("usage: run GRAPH -input JSON [-thread ID] [-break-before NODE]… [-break-after NODE]…")
	}
	var in map[string]any
	if err := json.Unmarshal([]byte(*input), &in); err != nil || in == nil {
		return usagef("-input must be a JSON object of the graph's channels, e.g. -input '{\"topic\": \"kelp\"}' (%v)", err)
	}
	tid := *thread
	if tid == "" {
		th, err := c.CreateThread(ctx, agentclient.ThreadCreate{Metadata: map[string]any{"created_by": "weft run"}})
		if err != nil {
			return err
		}
		tid = th.ThreadID
	}
	st, err := c.Stream(ctx, tid, agentclient.RunRequest{AssistantID: pos[0], Input: in, StreamMode: []string{"values"},
		InterruptBefore: before, InterruptAfter: after, StreamResumable: true, OnDisconnect: "continue"})
	if err != nil {
		return err
	}
	return finishRun(ctx, c, tid, st, w)
}

// srvResume answers a thread's interrupt, or continues it past a
// breakpoint, through agentclient.Resume: the run acts on the head the
// command read (or -checkpoint), and is refused if the thread moved. It
// waits for the run to stop and prints ResultJSON.
func srvResume(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	p, err := prepareAnswer(ctx, c, "resume", args, false)
	if err != nil {
		return err
	}
	st, err := c.Resume(ctx, p.thread, p.at, p.cmd, p.req)
	if err != nil {
		return err
	}
	return finishRun(ctx, c, p.thread, st, w)
}

// srvAnswer hands an answer to the server without waiting: a background
// run, checked like resume's, which the server runs as a worker would.
// It prints {thread_id, checkpoint_id (the one answered), run_id,
// stored: true}.
func srvAnswer(ctx context.Context, c *agentclient.Client, args []string, w io.Writer) error {
	p, err := prepareAnswer(ctx, c, "answer", args, true)
	if err != nil {
		return err
	}
	run, err := c.ResumeInBackground(ctx, p.thread, p.at, p.cmd, p.req)
	if err != nil {
		return err
	}
	return printJSON(w, map[string]any{"thread_id": p.thread, "checkpoint_id": p.at, "run_id": run.RunID, "stored": true})
}

// answerPlan is a checked resume: the thread, the checkpoint it acts on,
// the command and the run's request.
type answerPlan struct {
	thread, at string
	cmd        agentclient.Command
	req        agentclient.RunRequest
}

// prepareAnswer parses resume's and answer's flags and checks -answer
// against the thread's pending interrupts, as the file-store commands do.
func prepareAnswer(ctx context.Context, c *agentclient.Client, name string, args []string, needAnswer bool) (answerPlan, error) {
	var p answerPlan
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	answer := fs.String("answer", "", "the answer, as JSON")
	id := fs.String("id", "", "the interrupt to answer (needed when several are pending)")
	expect := fs.String("checkpoint", "", "act only if the thread's head is this checkpoint (default: the head read now)")
	pos, err := parse(fs, args)
	if err != nil {
		return p, err
	}
	if len(pos) != 1 || (*answer == "" && (*id != "" || needAnswer)) {
		if needAnswer {
			return p, usagef("usage: answer THREAD -answer JSON [-id INTERRUPT] [-checkpoint ID]")
		}
		return p, usagef("usage: resume THREAD [-answer JSON [-id INTERRUPT]] [-checkpoint ID]")
	}
	p.thread = pos[0]
	th, err := c.GetThread(ctx, p.thread)
	if err != nil {
		return p, threadErr(p.thread, err)
	}
	assistant, _ := th.Metadata["assistant_id"].(string)
	if g, _ := th.Metadata["graph_id"].(string); assistant == "" {
		assistant = g
	}
	if assistant == "" {
		return p, fmt.Errorf("thread %q names no graph (its metadata has no assistant_id or graph_id): it has not run", p.thread)
	}
	head, err := c.GetState(ctx, p.thread, agentclient.StateQuery{Subgraphs: true})
	if err != nil {
		return p, err
	}
	p.at = *expect
	if p.at == "" {
		p.at = head.Checkpoint.CheckpointID
	}
	pending := head.Interrupts()
	ids := make([]string, len(pending))
	for i, it := range pending {
		ids[i] = it.ID
	}
	switch {
	case *answer != "":
		var v any
		if err := json.Unmarshal([]byte(*answer), &v); err != nil {
			return p, usagef("-answer is not valid JSON (%v): quote strings, e.g. -answer '\"approve\"'", err)
		}
		if v == nil {
			return p, usagef("-answer null is not an answer: give the value the question asks for, e.g. -answer '\"approve\"'")
		}
		switch {
		case len(pending) == 0:
			return p, fmt.Errorf("thread %q has no pending interrupt to answer (next: %v)", p.thread, head.Next)
		case *id != "" && !slices.Contains(ids, *id):
			return p, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", p.thread, *id, strings.Join(ids, ", "))
		case *id != "":
			p.cmd = agentclient.ResumeByID(map[string]any{*id: v})
		case len(pending) > 1:
			return p, fmt.Errorf("thread %q waits for %d answers (%s): name one with -id", p.thread, len(pending), strings.Join(ids, ", "))
		default:
			// By id, so that an interrupt answered meanwhile is not
			// answered twice.
			p.cmd = agentclient.ResumeByID(map[string]any{ids[0]: v})
		}
	case len(pending) > 0:
		return p, fmt.Errorf("thread %q waits for an answer to interrupt %s: give it with -answer JSON", p.thread, strings.Join(ids, ", "))
	case len(head.Next) == 0:
		return p, fmt.Errorf("thread %q is done: there is nothing to continue", p.thread)
	}
	p.req = agentclient.RunRequest{AssistantID: assistant, StreamMode: []string{"values"}, StreamResumable: true, OnDisconnect: "continue"}
	return p, nil
}

// finishRun reads a run's stream to its end and prints the thread's state
// then as ResultJSON.
func finishRun(ctx context.Context, c *agentclient.Client, thread string, st *agentclient.Stream, w io.Writer) error {
	if _, err := st.Collect(); err != nil {
		return err
	}
	if _, err := c.Settle(ctx, thread, 10*time.Second); err != nil {
		return err
	}
	head, err := c.GetState(ctx, thread, agentclient.StateQuery{Subgraphs: true})
	if err != nil {
		return err
	}
	sj, err := serverSnapshotJSON(head, nil)
	if err != nil {
		return err
	}
	return printJSON(w, ResultJSON{ThreadID: thread, CheckpointID: sj.CheckpointID, Done: len(sj.Next) == 0 && len(sj.Interrupts) == 0,
		Next: sj.Next, Values: sj.Values, Interrupts: sj.Interrupts})
}
