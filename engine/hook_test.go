package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// hookLog records what a RunHook sees.
type hookLog struct {
	mu     sync.Mutex
	infos  []engine.RunInfo
	events []engine.Event
	ends   int
	seenAt int // events seen when OnEnd ran
	res    *engine.Result
	err    error
}

func (l *hookLog) hook(modes engine.StreamMode, md map[string]any) engine.RunHook {
	return func(ctx context.Context, run engine.RunInfo) engine.RunHooks {
		l.mu.Lock()
		l.infos = append(l.infos, run)
		l.mu.Unlock()
		return engine.RunHooks{
			Metadata: md,
			Modes:    modes,
			OnEvent: func(ev engine.Event) {
				l.mu.Lock()
				l.events = append(l.events, ev)
				l.mu.Unlock()
			},
			OnEnd: func(res *engine.Result, err error) {
				l.mu.Lock()
				l.ends++
				l.seenAt = len(l.events)
				l.res, l.err = res, err
				l.mu.Unlock()
			},
		}
	}
}

// lifecycleLine writes a lifecycle event as "step kind node" for
// comparisons, tasks of one step sorted by the caller.
func lifecycleLine(ev engine.Event) string {
	l := ev.Lifecycle
	kind := map[engine.LifecycleKind]string{engine.StepStart: "step-start", engine.StepEnd: "step-end", engine.TaskStart: "task-start", engine.TaskEnd: "task-end"}[l.Kind]
	s := fmt.Sprintf("%d %s", ev.Step, kind)
	if l.Node != "" {
		s += " " + l.Node
	}
	if l.Kind == engine.StepStart {
		s += fmt.Sprintf(" tasks=%d", l.Tasks)
	}
	if len(l.Interrupts) > 0 {
		s += " interrupted"
	}
	if l.Error != "" {
		s += " error"
	}
	return s
}

// The lifecycle of a run with a parallel step and an interrupt, as a
// RunHook sees it: each step's start and end around its tasks', the step's
// checkpoint at its end, the hook's metadata in the checkpoints (the
// caller's keys winning), OnEnd after the last event.
func TestRunHookLifecycle(t *testing.T) {
	notes := engine.List[string]("notes")
	s := memory.New()
	g := compile(t, engine.NewGraph("hooked", notes).
		AddNode("a", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(notes.Add("a")), nil }).
		AddNode("b", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(notes.Add("b")), nil }).
		AddNode("ask", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			v, err := engine.InterruptAs[string](ctx, "ok?")
			if err != nil {
				return nil, err
			}
			return engine.Updates(notes.Add(v)), nil
		}).
		AddEdge(engine.START, "a").AddEdge(engine.START, "b").
		AddJoin([]string{"a", "b"}, "ask").AddEdge("ask", engine.END), engine.WithSaver(s))
	var log hookLog
	hooked := g.WithRunHook(log.hook(engine.ModeLifecycle, map[string]any{"trace": "hook", "who": "hook"}))
	if len(g.Nodes()) != len(hooked.Nodes()) {
		t.Fatal("WithRunHook changed the graph")
	}
	res, err := hooked.Invoke(ctx, engine.Values{}, engine.WithThread("h1"), engine.WithMetadata(map[string]any{"who": "caller"}))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if len(log.infos) != 1 || log.infos[0].Thread != "h1" || log.infos[0].Graph != hooked || log.infos[0].Input == nil {
		t.Errorf("RunInfo %+v", log.infos)
	}
	if log.ends != 1 || log.seenAt != len(log.events) || log.res != res || log.err != nil {
		t.Errorf("OnEnd ran %d times, after %d of %d events, with %v, %v", log.ends, log.seenAt, len(log.events), log.res, log.err)
	}
	var lines []string
	var stepEnds []engine.Event
	for _, ev := range log.events {
		if ev.Mode != engine.ModeLifecycle || ev.Lifecycle == nil || ev.Time.IsZero() {
			t.Fatalf("event %+v: want lifecycle events only, with a time", ev)
		}
		lines = append(lines, lifecycleLine(ev))
		if ev.Lifecycle.Kind == engine.StepEnd {
			stepEnds = append(stepEnds, ev)
		}
	}
	// Parallel tasks finish in any order: sort each step's task events.
	sortTasks := func(ls []string) {
		for i := 0; i < len(ls); {
			j := i
			for j < len(ls) && strings.Contains(ls[j], " task-") {
				j++
			}
			if j > i {
				slices.Sort(ls[i:j])
				i = j
			} else {
				i++
			}
		}
	}
	sortTasks(lines)
	want := []string{
		"0 step-start tasks=0", "0 step-end",
		"1 step-start tasks=2", "1 task-end a", "1 task-end b", "1 task-start a", "1 task-start b", "1 step-end",
		"2 step-start tasks=1", "2 task-start ask", "2 task-end ask interrupted", "2 step-end interrupted",
	}
	sortTasks(want)
	if !slices.Equal(lines, want) {
		t.Errorf("lifecycle:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	// Each step's end names the checkpoint it stored; the interrupted
	// step's is the one it started from, the run's last.
	for _, ev := range stepEnds {
		tup, err := s.Get(ctx, checkpoint.Ref{ThreadID: "h1", CheckpointID: ev.Lifecycle.Checkpoint})
		if err != nil {
			t.Fatalf("step %d end: checkpoint %q: %v", ev.Step, ev.Lifecycle.Checkpoint, err)
		}
		wantStep := ev.Step
		if len(ev.Lifecycle.Interrupts) > 0 {
			wantStep = ev.Step - 1
			if ev.Lifecycle.Checkpoint != res.Ref.CheckpointID {
				t.Errorf("interrupted step's checkpoint %q, want the run's last %q", ev.Lifecycle.Checkpoint, res.Ref.CheckpointID)
			}
		}
		if tup.Metadata.Step != wantStep {
			t.Errorf("step %d end names the checkpoint of step %d, want %d", ev.Step, tup.Metadata.Step, wantStep)
		}
		if tup.Metadata.Extra["trace"] != "hook" || tup.Metadata.Extra["who"] != "caller" {
			t.Errorf("checkpoint metadata %v: want the hook's key, and the caller's value where both set one", tup.Metadata.Extra)
		}
	}

	// The resume is a run of its own: the hook sees it start and end;
	// state reads and updates are not runs.
	if _, err := hooked.GetState(ctx, engine.WithThread("h1")); err != nil {
		t.Fatal(err)
	}
	res, err = hooked.Invoke(ctx, engine.Command{Resume: "yes"}, engine.WithThread("h1"))
	if err != nil || !res.Done {
		t.Fatalf("resume: %v, %+v", err, res)
	}
	if len(log.infos) != 2 || log.ends != 2 {
		t.Errorf("hook started %d and ended %d runs, want 2 each", len(log.infos), log.ends)
	}
	if _, ok := log.infos[1].Input.(engine.Command); !ok {
		t.Errorf("resume's RunInfo.Input %T, want the Command", log.infos[1].Input)
	}
	// The graph without the hook is untouched.
	if _, err := g.Invoke(ctx, engine.Values{}, engine.WithThread("h2")); err != nil {
		t.Fatal(err)
	}
	if len(log.infos) != 2 {
		t.Error("the graph WithRunHook was called on runs its hook")
	}
}

// A hook's events reach it whatever else the run streams, and it does not
// change what Stream and an observer get; a failed run's error reaches
// OnEnd with the failing step's end.
func TestRunHookBesideStreamAndObserver(t *testing.T) {
	n := engine.LastValue[int]("n")
	boom := errors.New("boom")
	g := compile(t, engine.NewGraph("fails", n).
		AddNode("one", func(context.Context, engine.State) (engine.Output, error) { return engine.Updates(n.Set(1)), nil }).
		AddNode("two", func(context.Context, engine.State) (engine.Output, error) { return nil, boom }).
		AddEdge(engine.START, "one").AddEdge("one", "two").AddEdge("two", engine.END))
	var log hookLog
	hooked := g.WithRunHook(log.hook(engine.ModeLifecycle|engine.ModeValues, nil))
	var observed []engine.StreamMode
	var streamed []engine.StreamMode
	var streamErr error
	for ev, err := range hooked.Stream(ctx, engine.Values{}, engine.ModeUpdates,
		engine.WithObserver(engine.ModeTasks, func(ev engine.Event) { observed = append(observed, ev.Mode) })) {
		if err != nil {
			streamErr = err
			continue
		}
		streamed = append(streamed, ev.Mode)
	}
	if !errors.Is(streamErr, boom) || !errors.Is(log.err, boom) || log.res != nil {
		t.Errorf("stream error %v, OnEnd got %v, %v; want boom", streamErr, log.res, log.err)
	}
	for _, m := range streamed {
		if m != engine.ModeUpdates {
			t.Errorf("Stream yielded a %v event; it asked for updates only", m)
		}
	}
	for _, m := range observed {
		if m != engine.ModeTasks {
			t.Errorf("observer got a %v event; it asked for tasks only", m)
		}
	}
	if len(streamed) != 1 || len(observed) != 4 {
		t.Errorf("stream got %d events, observer %d; want 1 update and 4 task events", len(streamed), len(observed))
	}
	var modes engine.StreamMode
	last := log.events[len(log.events)-1]
	for _, ev := range log.events {
		modes |= ev.Mode
	}
	if modes != engine.ModeLifecycle|engine.ModeValues {
		t.Errorf("hook got modes %v, want lifecycle|values", modes)
	}
	if last.Lifecycle == nil || last.Lifecycle.Kind != engine.StepEnd || !strings.Contains(last.Lifecycle.Error, "boom") || last.Lifecycle.Checkpoint != "" {
		t.Errorf("last hook event %+v, want the failed step's end", last.Lifecycle)
	}
}

// ModeLifecycle has its name and stays out of ModeAll, whose consumers
// expect LangGraph's modes.
func TestModeLifecycleName(t *testing.T) {
	if got := engine.ModeLifecycle.String(); got != "lifecycle" {
		t.Errorf("ModeLifecycle.String() = %q", got)
	}
	if engine.ModeAll&engine.ModeLifecycle != 0 {
		t.Error("ModeAll includes ModeLifecycle")
	}
}
