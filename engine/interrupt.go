package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// PendingInterrupt is a question a node asked with Interrupt and that waits
// for an answer. Answer it by resuming with Command{Resume: …} (when it is the
// only one) or Command{ResumeByID: {ID: …}}.
type PendingInterrupt struct {
	ID     string `json:"id"`    // stable for the task: every Interrupt call of one task shares it
	Value  any    `json:"value"` // the payload the node passed
	Node   string `json:"node"`
	TaskID string `json:"task_id"`
	NS     string `json:"ns,omitempty"` // subgraph namespace of the node, "" at the root
}

// InterruptError is the error Interrupt returns when no answer is available
// yet. The node must return it (wrapped or not); the run then stops with the
// interrupt pending. Detect it with errors.As.
type InterruptError struct {
	Interrupts []PendingInterrupt
}

// Error describes the InterruptError.
func (e *InterruptError) Error() string {
	if len(e.Interrupts) == 1 {
		return fmt.Sprintf("interrupted at node %q (interrupt %s)", e.Interrupts[0].Node, e.Interrupts[0].ID)
	}
	return fmt.Sprintf("interrupted with %d pending interrupts", len(e.Interrupts))
}

// ErrNoSaver is returned by Interrupt in a graph compiled without a saver:
// an interrupt can only be answered if the run's state is kept.
var ErrNoSaver = errors.New("engine.Interrupt needs a graph compiled with engine.WithSaver")

// Interrupt pauses the node to ask a human. The first time it returns a nil
// answer and an *InterruptError that the node must return; the run stops with
// payload pending. When the run is resumed with an answer, the node runs
// again from its start and this call returns the answer. A node may call
// Interrupt several times; answers are matched by call order.
//
// Answers arrive as given in-process, or, after a restart, decoded from the
// checkpoint: values of registered types (RegisterType) keep their type,
// others come back as JSON data (map[string]any, []any, float64, string,
// bool). InterruptAs converts for you.
func Interrupt(ctx context.Context, payload any) (any, error) {
	tc := taskFrom(ctx)
	if tc == nil {
		return nil, errors.New("engine.Interrupt called outside a running node")
	}
	if tc.rt.saver == nil {
		return nil, ErrNoSaver
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	idx := tc.counter
	tc.counter++
	if idx < len(tc.t.resume) {
		return tc.t.resume[idx], nil
	}
	if v, ok := tc.rt.takeNullResume(); ok {
		tc.t.resume = append(tc.t.resume, v)
		tc.t.resumeNew = true
		return v, nil
	}
	return nil, &InterruptError{Interrupts: []PendingInterrupt{{
		ID: tc.t.interruptID(), Value: payload, Node: tc.t.name, TaskID: tc.t.id, NS: tc.rt.ns,
	}}}
}

// InterruptAs is Interrupt with the answer converted to T: directly when it
// already is a T, otherwise through JSON (so an answer given as JSON data
// fills a struct).
func InterruptAs[T any](ctx context.Context, payload any) (T, error) {
	var zero T
	v, err := Interrupt(ctx, payload)
	if err != nil {
		return zero, err
	}
	return convert[T](v)
}

func convert[T any](v any) (T, error) {
	if t, ok := v.(T); ok {
		return t, nil
	}
	var t T
	b, err := json.Marshal(v)
	if err != nil {
		return t, fmt.Errorf("answer of type %T: %w", v, err)
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, fmt.Errorf("answer %s does not fit %T: %w", b, t, err)
	}
	return t, nil
}

// taskCtx is a running node's context: the run's context plus the task,
// in one allocation.
type taskCtx struct {
	context.Context
	rt      *runtime
	t       *task
	step    int
	mu      sync.Mutex
	counter int
	// The call tasks the node started (Call): how many, the context they
	// run in (cancelled when the node fails) and their goroutines.
	calls      int
	callCtx    context.Context
	callCancel context.CancelFunc
	callWG     sync.WaitGroup
}

type taskKey struct{}

// Value answers the task lookup and the long-term store's writer itself
// (so a store records which task put an item, at no cost to nodes that
// never ask) and defers the rest to the parent.
func (tc *taskCtx) Value(key any) any {
	switch key.(type) {
	case taskKey:
		return tc
	case longterm.WriterKey:
		rt := tc.rt
		return longterm.Writer{ThreadID: rt.cfg.thread, NS: rt.ns, CheckpointID: rt.cpID, Step: tc.step,
			TaskID: tc.t.id, Node: tc.t.name}
	}
	return tc.Context.Value(key)
}

func taskFrom(ctx context.Context) *taskCtx {
	tc, _ := ctx.Value(taskKey{}).(*taskCtx)
	return tc
}

func hashID(parts ...string) string {
	var buf [256]byte // most ids hash less; longer input just allocates
	b := buf[:0]
	for _, p := range parts {
		b = append(b, p...)
		b = append(b, 0)
	}
	sum := sha256.Sum256(b)
	var out [32]byte
	hex.Encode(out[:], sum[:16])
	return string(out[:])
}

// interruptForm is the stored form of a PendingInterrupt: the payload keeps
// its registered type.
type interruptForm struct {
	ID     string          `json:"id"`
	Value  json.RawMessage `json:"value"`
	Node   string          `json:"node"`
	TaskID string          `json:"task_id"`
	NS     string          `json:"ns,omitempty"`
}

func encodeInterrupts(in []PendingInterrupt) ([]byte, error) {
	forms := make([]interruptForm, len(in))
	for i, it := range in {
		v, err := encodeLoose(it.Value)
		if err != nil {
			return nil, fmt.Errorf("interrupt payload of node %q: %w", it.Node, err)
		}
		forms[i] = interruptForm{ID: it.ID, Value: v, Node: it.Node, TaskID: it.TaskID, NS: it.NS}
	}
	return json.Marshal(forms)
}

func decodeInterrupts(b []byte) ([]PendingInterrupt, error) {
	var forms []interruptForm
	if err := json.Unmarshal(b, &forms); err != nil {
		return nil, err
	}
	out := make([]PendingInterrupt, len(forms))
	for i, f := range forms {
		v, err := decodeLoose(f.Value)
		if err != nil {
			return nil, err
		}
		out[i] = PendingInterrupt{ID: f.ID, Value: v, Node: f.Node, TaskID: f.TaskID, NS: f.NS}
	}
	return out, nil
}

// encodeLoose stores a value with its registered type when it has one and as
// plain JSON data otherwise (interrupt payloads and answers, which are JSON
// shaped by nature).
func encodeLoose(v any) ([]byte, error) {
	b, err := encodeDynamic(v)
	if err == nil || !errors.Is(err, ErrUnregisteredType) {
		return b, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(dynamicForm{Type: "", Value: raw})
}

func decodeLoose(b []byte) (any, error) {
	if string(b) == "null" || len(b) == 0 {
		return nil, nil
	}
	var f dynamicForm
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Type == "" {
		var v any
		if err := json.Unmarshal(f.Value, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
	return decodeDynamic(b)
}

func contextWith(ctx context.Context, tc *taskCtx) context.Context {
	tc.Context = ctx
	return tc
}
