// Answering and continuing a thread: the resume and answer commands.

package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// ResultJSON is what resume prints.
type ResultJSON struct {
	ThreadID     string                    `json:"thread_id"`
	CheckpointID string                    `json:"checkpoint_id"`
	Done         bool                      `json:"done"`
	Next         []string                  `json:"next"`
	Values       engine.Values             `json:"values"`
	Interrupts   []engine.PendingInterrupt `json:"interrupts,omitempty"`
}

// answerFlags are the flags of resume and answer.
type answerFlags struct {
	fs     *flag.FlagSet
	answer *string
	id     *string
	ttl    *time.Duration
}

func newAnswerFlags(name string) answerFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	return answerFlags{fs: fs,
		answer: fs.String("answer", "", "the answer, as JSON"),
		id:     fs.String("id", "", "the interrupt to answer (needed when several are pending)"),
		ttl:    fs.Duration("lease-ttl", checkpoint.DefaultLeaseTTL, "how long the thread stays claimed if this process dies")}
}

// answerCommand checks -answer against st's pending interrupts and returns
// the Command that answers them.
func answerCommand(thread, answer, id string, st *engine.Snapshot) (engine.Command, error) {
	var v any
	if err := json.Unmarshal([]byte(answer), &v); err != nil {
		return engine.Command{}, usagef("-answer is not valid JSON (%v): quote strings, e.g. -answer '\"approve\"'", err)
	}
	if v == nil {
		return engine.Command{}, usagef("-answer null is not an answer (the graph would receive no input): give the value the question asks for, e.g. -answer '\"approve\"' or -answer '{\"approved\": false}'")
	}
	if len(st.OpenInterrupts()) == 0 {
		return engine.Command{}, fmt.Errorf("thread %q has no pending interrupt to answer (it is %s)", thread, engine.StatusOf(st, nil))
	}
	ids := make([]string, len(st.OpenInterrupts()))
	for i, it := range st.OpenInterrupts() {
		ids[i] = it.ID
	}
	if id == "" {
		if len(ids) == 1 {
			// By id, so that if another run answered it first, this answer
			// is refused instead of reaching whatever asks next.
			return engine.Command{ResumeByID: map[string]any{ids[0]: v}}, nil
		}
		return engine.Command{Resume: v}, nil // the engine explains that each needs an id
	}
	if !slices.Contains(ids, id) {
		return engine.Command{}, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", thread, id, strings.Join(ids, ", "))
	}
	return engine.Command{ResumeByID: map[string]any{id: v}}, nil
}

func cmdResume(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	f := newAnswerFlags("resume")
	pos, err := parse(f.fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*f.answer == "" && *f.id != "") {
		return usagef("usage: resume THREAD [-answer JSON [-id INTERRUPT]]")
	}
	thread := pos[0]
	g, claim, st, err := claimedState(ctx, s, graphs, thread, *f.ttl)
	if err != nil {
		return err
	}
	defer claim.Release()
	var input engine.Input
	switch {
	case *f.answer != "":
		cmd, err := answerCommand(thread, *f.answer, *f.id, st)
		if err != nil {
			return err
		}
		input = cmd
	case len(st.OpenInterrupts()) > 0:
		ids := make([]string, len(st.OpenInterrupts()))
		for i, it := range st.OpenInterrupts() {
			ids[i] = it.ID
		}
		return fmt.Errorf("thread %q waits for an answer to interrupt %s: give it with -answer JSON", thread, strings.Join(ids, ", "))
	case st.Done():
		return fmt.Errorf("thread %q is done: there is nothing to continue", thread)
	}
	res, err := g.Invoke(ctx, input, engine.WithThread(thread), engine.WithClaim(claim), stopAtBoundary(ctx))
	if err != nil {
		return err
	}
	return printJSON(w, resultJSON(thread, res))
}

func resultJSON(thread string, res *engine.Result) ResultJSON {
	out := ResultJSON{ThreadID: thread, CheckpointID: res.Ref.CheckpointID, Done: res.Done, Next: res.Next, Values: res.Values, Interrupts: res.Interrupts}
	if out.Next == nil {
		out.Next = []string{}
	}
	return out
}

func cmdAnswer(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	f := newAnswerFlags("answer")
	pos, err := parse(f.fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *f.answer == "" {
		return usagef("usage: answer THREAD -answer JSON [-id INTERRUPT]")
	}
	thread := pos[0]
	g, claim, st, err := claimedState(ctx, s, graphs, thread, *f.ttl)
	if err != nil {
		return err
	}
	defer claim.Release()
	cmd, err := answerCommand(thread, *f.answer, *f.id, st)
	if err != nil {
		return err
	}
	ref, err := g.SubmitAnswer(ctx, cmd, engine.WithThread(thread))
	if err != nil {
		return err
	}
	return printJSON(w, map[string]any{"thread_id": thread, "checkpoint_id": ref.CheckpointID, "stored": true})
}
