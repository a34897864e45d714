// Reading one thread: the history and state commands, and how they print
// a checkpoint's values.

package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// SnapshotJSON is a checkpoint's state as the history and state commands
// print it.
type SnapshotJSON struct {
	CheckpointID string                    `json:"checkpoint_id"`
	ParentID     string                    `json:"parent_id,omitempty"`
	Step         int                       `json:"step"`
	Source       string                    `json:"source"`
	Ran          []string                  `json:"ran,omitempty"`
	CreatedAt    time.Time                 `json:"created_at"`
	Next         []string                  `json:"next"`
	Values       engine.Values             `json:"values"`
	Interrupts   []engine.PendingInterrupt `json:"interrupts,omitempty"`
	Errors       map[string]string         `json:"errors,omitempty"`
	// GuessedReducers names the channels of a LangGraph thread's head
	// whose value applied a pending write by a guessed reducer (the store
	// keeps none): LangGraph, knowing the graph, may show them otherwise.
	GuessedReducers []string `json:"guessed_reducers,omitempty"`
}

// valuesMark stands for a snapshot's values in writeSnapshot's first pass.
var valuesMark = engine.Values{"\x00": nil}

// writeSnapshot writes sj as json.MarshalIndent(sj, prefix, "  ") would,
// encoding one channel value at a time: a snapshot of large values costs
// the memory of its largest value's JSON, not of all of them.
func writeSnapshot(w io.Writer, sj SnapshotJSON, prefix string) error {
	vals := sj.Values
	sj.Values = valuesMark
	b, err := json.MarshalIndent(sj, prefix, "  ")
	if err != nil {
		return err
	}
	mark := "{\n" + prefix + "    \"\\u0000\": null\n" + prefix + "  }"
	head, tail, ok := bytes.Cut(b, []byte(mark))
	if !ok {
		return errors.New("unexpected snapshot layout")
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	inner := prefix + "    "
	switch {
	case vals == nil:
		_, err = io.WriteString(w, "null")
	case len(vals) == 0:
		_, err = io.WriteString(w, "{}")
	default:
		_, err = io.WriteString(w, "{")
		for i, k := range slices.Sorted(maps.Keys(vals)) {
			if err != nil {
				return err
			}
			kb, _ := json.Marshal(k)
			sep := ",\n"
			if i == 0 {
				sep = "\n"
			}
			if _, err = fmt.Fprintf(w, "%s%s%s: ", sep, inner, kb); err != nil {
				return err
			}
			if err = writeValue(w, vals[k], inner); err != nil {
				return fmt.Errorf("channel %q: %w", k, err)
			}
		}
		if err == nil {
			_, err = fmt.Fprintf(w, "\n%s  }", prefix)
		}
	}
	if err != nil {
		return err
	}
	_, err = w.Write(tail)
	return err
}

// writeValue writes v as json.MarshalIndent(v, prefix, "  ") would, a
// list one element at a time (lists are what grow large: messages, notes).
func writeValue(w io.Writer, v any, prefix string) error {
	rv := reflect.ValueOf(v)
	if v == nil || rv.Kind() != reflect.Slice || rv.Len() == 0 || rv.Type().Elem().Kind() == reflect.Uint8 {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	}
	if _, ok := v.(json.Marshaler); ok {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = w.Write(b)
		}
		return err
	}
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	for i := range rv.Len() {
		b, err := json.MarshalIndent(rv.Index(i).Interface(), prefix+"  ", "  ")
		if err != nil {
			return err
		}
		sep := ",\n"
		if i == 0 {
			sep = "\n"
		}
		if _, err := fmt.Fprintf(w, "%s%s  %s", sep, prefix, b); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s]", prefix)
	return err
}

func toJSON(s *engine.Snapshot) SnapshotJSON {
	out := SnapshotJSON{CheckpointID: s.Ref.CheckpointID, Step: s.Metadata.Step, Source: string(s.Metadata.Source),
		Ran: s.Metadata.Tasks, CreatedAt: s.CreatedAt, Next: s.Next, Values: s.Values, Interrupts: s.Interrupts}
	if out.Next == nil {
		out.Next = []string{}
	}
	if s.Parent != nil {
		out.ParentID = s.Parent.CheckpointID
	}
	for _, t := range s.Tasks {
		if t.Error != "" {
			if out.Errors == nil {
				out.Errors = map[string]string{}
			}
			out.Errors[t.Name] = t.Error
		}
	}
	return out
}

// graphOf finds the graph that wrote the thread, by the name its checkpoints
// record.
func graphOf(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, thread string) (*engine.Graph, error) {
	if _, ok := s.(*langgraph.Reader); ok {
		return nil, errLangGraphNoGraph
	}
	md, err := latestMetadata(ctx, s, thread)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return nil, fmt.Errorf("thread %q not found in this store", thread)
	}
	if err != nil {
		return nil, err
	}
	name, _ := md.Extra[engine.MetaGraph].(string)
	for _, g := range graphs {
		if g.Name() == name {
			return g, nil
		}
	}
	return nil, fmt.Errorf("thread %q was written by graph %q, which this binary does not have (it has %s)", thread, name, strings.Join(graphNames(graphs), ", "))
}

// latestMetadata returns the metadata of the thread's latest root
// checkpoint, from its header when the store lists headers: Get would
// decode every value it holds (163 MB for a thread started on a 12 MB
// topic) to read a graph's name.
func latestMetadata(ctx context.Context, s checkpoint.Saver, thread string) (checkpoint.Metadata, error) {
	if hl, ok := s.(checkpoint.HeaderLister); ok {
		root := ""
		hs, err := hl.ListHeaders(ctx, checkpoint.ListOptions{ThreadID: thread, NS: &root, Limit: 1})
		if err != nil {
			return checkpoint.Metadata{}, err
		}
		if len(hs) == 0 {
			return checkpoint.Metadata{}, checkpoint.ErrNotFound
		}
		return hs[0].Metadata, nil
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread})
	if err != nil {
		return checkpoint.Metadata{}, err
	}
	return tp.Metadata, nil
}

func graphNames(graphs []*engine.Graph) []string {
	known := make([]string, len(graphs))
	for i, g := range graphs {
		known[i] = g.Name()
	}
	return known
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// historyPage is how many snapshots history rebuilds at a time: it prints
// them before reading more, so a thread with large values costs memory
// for a few of its checkpoints, not all of them.
const historyPage = 1

// historyMaxValue is the default of history's -max-value: values stored
// larger than this are printed as an omission marker and never decoded
// (engine.WithValueLimit), so history costs (and prints) a bounded amount
// per checkpoint whatever the thread holds.
const historyMaxValue = 1 << 20

// markOmitted puts the omission marker {"$weft": "omitted", "bytes": N},
// as AG-UI marks a value too large to send, in sj for each value or
// interrupt payload the engine left out (engine.Omitted, N its stored
// size).
func markOmitted(sj *SnapshotJSON) {
	cloned := false
	for i, in := range sj.Interrupts {
		if o, ok := in.Value.(engine.Omitted); ok {
			if !cloned {
				sj.Interrupts, cloned = slices.Clone(sj.Interrupts), true
			}
			sj.Interrupts[i].Value = omittedMarker(o.Bytes)
		}
	}
	cloned = false
	for k, v := range sj.Values {
		if o, ok := v.(engine.Omitted); ok {
			if !cloned {
				sj.Values, cloned = maps.Clone(sj.Values), true
			}
			sj.Values[k] = omittedMarker(o.Bytes)
		}
	}
}

// omittedMarker stands for a value of n bytes left out.
func omittedMarker(n int) json.RawMessage {
	return fmt.Appendf(nil, `{%q: "omitted", "bytes": %d}`, agui.OmittedKey, n)
}

func cmdHistory(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	limit := fs.Int("limit", 0, "at most this many checkpoints")
	maxValue := fs.Int("max-value", historyMaxValue, `print a value stored larger than this many bytes as {"$weft": "omitted", "bytes": N} (weft state THREAD CHECKPOINT prints it); 0 prints every value in full`)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: history THREAD [-limit N] [-max-value BYTES]")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgHistory(ctx, lg, pos[0], *limit, w)
	}
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	// A JSON array written element by element, laid out as printJSON
	// would lay out the whole array.
	bw := bufio.NewWriterSize(w, 64<<10)
	n, before := 0, ""
	for *limit <= 0 || n < *limit {
		page := historyPage
		if *limit > 0 {
			page = min(page, *limit-n)
		}
		snaps, err := g.History(ctx, checkpoint.ListOptions{Limit: page, Before: before}, engine.WithThread(pos[0]), engine.WithValueLimit(*maxValue))
		if err != nil {
			if n > 0 {
				bw.WriteString("\n") // the array is cut short; the error says why
				bw.Flush()
			}
			return err
		}
		for _, sn := range snaps {
			sep := ",\n  "
			if n == 0 {
				sep = "[\n  "
			}
			bw.WriteString(sep)
			sj := toJSON(sn)
			markOmitted(&sj)
			if err := writeSnapshot(bw, sj, "  "); err != nil {
				return fmt.Errorf("checkpoint %s: %w", sn.Ref.CheckpointID, err)
			}
			n++
			before = sn.Ref.CheckpointID
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if len(snaps) < page {
			break
		}
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}

func cmdState(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("state", flag.ContinueOnError)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return usagef("usage: state THREAD [CHECKPOINT]")
	}
	if lg, ok := s.(*langgraph.Reader); ok {
		return lgState(ctx, lg, pos[0], append(pos[1:], "")[0], w)
	}
	g, err := graphOf(ctx, s, graphs, pos[0])
	if err != nil {
		return err
	}
	opts := []engine.RunOption{engine.WithThread(pos[0])}
	if len(pos) == 2 {
		opts = append(opts, engine.WithCheckpoint(pos[1]))
	}
	sn, err := g.GetState(ctx, opts...)
	if err != nil {
		return err
	}
	return printJSON(w, toJSON(sn))
}
