package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"unicode"
)

// Write is one value a node writes to one channel. Build writes with the
// typed keys (Count.Set(1), Notes.Add("x")) so the value's type is checked
// by the compiler; the zero Write is invalid.
type Write struct {
	Channel string
	Value   any
}

// Values maps channel names to values: a graph's input, its output state and
// a Send argument that a node reads through its keys. nil means no values.
type Values map[string]any

// Decl is a channel declaration: every typed key implements it, and a graph's
// state schema is the list of Decls given to NewGraph.
type Decl interface {
	// Name is the channel's name, unique within a graph.
	Name() string
	spec() *chanSpec
}

// chanSpec is everything the engine needs to build a channel for a run.
type chanSpec struct {
	name    string
	kind    string // see ChannelInfo.Kind
	codec   codec
	reducer string
	newCh   func() channel
	// mk builds a typed key's channel from the spec; newCh calls it (see
	// bind), so a copy of the spec with a default builds with that default.
	mk func(s *chanSpec) channel
	// dflt, when non-nil, gives the value a new channel starts with.
	dflt func() any
	// err is a declaration error NewGraph reports.
	err error
	// trigger marks a node's plain trigger channel (an ephemeral named
	// branch:to:NODE): a runtime builds all of them in one allocation
	// rather than calling newCh for each.
	trigger bool
}

// bind makes newCh build channels with mk from s itself.
func (s *chanSpec) bind() *chanSpec {
	s.newCh = func() channel { return s.mk(s) }
	return s
}

// withDefault returns a copy of s whose channels start holding d().
func (s *chanSpec) withDefault(d func() any) *chanSpec {
	c := *s
	c.dflt, c.err = d, nil
	return c.bind()
}

// starter is a channel that can start out holding a value.
type starter interface{ start(v any) }

func (s *chanSpec) info() ChannelInfo {
	t := s.codec.goType()
	return ChannelInfo{Name: s.name, Kind: s.kind, Type: t.String(), Reducer: s.reducer, GoType: t}
}

// Key is a typed handle to a channel holding one value of type T. Its zero
// value is unusable; make keys with LastValue, AnyValue, Ephemeral or
// Untracked.
type Key[T any] struct{ s *chanSpec }

func newKey[T any](name, kind string, mk func(*chanSpec) channel) Key[T] {
	s := &chanSpec{name: name, kind: kind, codec: typedCodec[T]{}}
	s.mk = func(s *chanSpec) channel {
		ch := mk(s)
		if s.dflt != nil {
			ch.(starter).start(s.dflt())
		}
		return ch
	}
	return Key[T]{s.bind()}
}

// LastValue declares a channel that keeps the one value written in the last
// step that wrote it. Two writes in one step are an InvalidUpdateError.
func LastValue[T any](name string) Key[T] {
	return newKey[T](name, "last_value", func(s *chanSpec) channel { return &lastValue{name: s.name, codec: s.codec} })
}

// AnyValue declares a channel that keeps the last of several writes in one
// step and is cleared by a step that does not write it.
func AnyValue[T any](name string) Key[T] {
	return newKey[T](name, "any_value", func(s *chanSpec) channel { return &anyValue{lastValue{name: s.name, codec: s.codec}} })
}

// Ephemeral declares a channel whose value lasts one step; two writes in one
// step are an error (LangGraph's EphemeralValue with guard).
func Ephemeral[T any](name string) Key[T] {
	return newKey[T](name, "ephemeral", func(s *chanSpec) channel {
		return &ephemeral{lastValue: lastValue{name: s.name, codec: s.codec}, guard: true}
	})
}

// Untracked declares a LastValue channel that is never saved in checkpoints:
// for handles and caches that must not outlive the process. Writes to it are
// not stored as pending writes either.
func Untracked[T any](name string) Key[T] {
	return newKey[T](name, "untracked", func(s *chanSpec) channel {
		return &untracked{lastValue: lastValue{name: s.name, codec: s.codec}, guard: true}
	})
}

// Name returns the channel's name.
func (k Key[T]) Name() string    { return k.s.name }
func (k Key[T]) spec() *chanSpec { return k.s }

// Get returns the channel's value in s, or T's zero value when it is empty.
func (k Key[T]) Get(s State) T { v, _ := k.Lookup(s); return v }

// Lookup returns the channel's value in s and whether it has one.
func (k Key[T]) Lookup(s State) (T, bool) { return lookup[T](s, k.s.name) }

// Set writes v to the channel.
func (k Key[T]) Set(v T) Write { return Write{k.s.name, v} }

// WithDefault returns the key with a channel that starts out holding d()
// instead of empty (LangGraph's default factories): nodes read it, state
// and snapshots show it, and once a write replaces it the new value is
// checkpointed like any other. A checkpoint stores only written values, so a
// run or snapshot loading a checkpoint in which the channel was never
// written sees the default again, as LangGraph's from_checkpoint keeps a
// channel's initial value when the checkpoint has none. d is called for each
// run and each snapshot, so none shares a mutable default with another; a
// nil d removes the default.
//
// Only LastValue and Untracked keys take a default: an Ephemeral or AnyValue
// channel is cleared by the first step that does not write it, and a
// checkpoint could not tell that apart from never written, so NewGraph
// reports a default on them as an error.
func (k Key[T]) WithDefault(d func() T) Key[T] {
	if d == nil {
		return Key[T]{k.s.withDefault(nil)}
	}
	s := k.s.withDefault(func() any { return d() })
	if s.kind != "last_value" && s.kind != "untracked" {
		s.err = fmt.Errorf("channel %q: a default is only for LastValue and Untracked keys, not %s", s.name, s.kind)
	}
	return Key[T]{s}
}

func lookup[T any](s State, name string) (T, bool) {
	v, ok := s.Get(name)
	if !ok {
		var z T
		return z, false
	}
	t, ok := v.(T)
	return t, ok
}

// ReducerKey is a typed handle to a channel that folds every write into its
// value with a reducer (LangGraph's BinaryOperatorAggregate).
type ReducerKey[T any] struct{ s *chanSpec }

// Reducer declares a channel whose writes are folded into the value with op,
// in task order. The channel starts at T's zero value when T is a slice, map,
// number or string (as LangGraph starts at typ()); otherwise the first write
// becomes the value. op must not modify its arguments: earlier values may
// still be referenced by streams and snapshots.
func Reducer[T any](name, opName string, op func(acc, v T) T) ReducerKey[T] {
	s := &chanSpec{name: name, kind: "reducer", codec: typedCodec[T]{}, reducer: opName}
	// Built once, not per channel: every run and snapshot builds one.
	zero := zeroFor[T]()
	fold := func(acc, v any) (any, error) {
		a, ok1 := acc.(T)
		b, ok2 := v.(T)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("reducer %s got %T and %T, want %v", opName, acc, v, reflect.TypeFor[T]())
		}
		return op(a, b), nil
	}
	s.mk = func(s *chanSpec) channel {
		return newReducer(name, s.codec, s.start(zero), fold)
	}
	return ReducerKey[T]{s.bind()}
}

// start returns what a channel of s starts out holding: d() when s has a
// default d, else what zero returns.
func (s *chanSpec) start(zero func() (any, bool)) func() (any, bool) {
	if d := s.dflt; d != nil {
		return func() (any, bool) { return d(), true }
	}
	return zero
}

func zeroFor[T any]() func() (any, bool) {
	t := reflect.TypeFor[T]()
	switch t.Kind() {
	case reflect.Slice:
		// An empty list, not a nil one: it reads (and saves) as []. One
		// serves every channel: with no room, it cannot be written through.
		empty := reflect.MakeSlice(t, 0, 0).Interface()
		return func() (any, bool) { return empty, true }
	case reflect.Map:
		return func() (any, bool) { return reflect.MakeMap(t).Interface(), true }
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return func() (any, bool) { var z T; return z, true }
	}
	return func() (any, bool) { return nil, false }
}

// Name returns the channel's name.
func (k ReducerKey[T]) Name() string    { return k.s.name }
func (k ReducerKey[T]) spec() *chanSpec { return k.s }

// Get returns the accumulated value, or T's zero value when there is none.
func (k ReducerKey[T]) Get(s State) T { v, _ := lookup[T](s, k.s.name); return v }

// Lookup returns the accumulated value and whether there is one.
func (k ReducerKey[T]) Lookup(s State) (T, bool) { return lookup[T](s, k.s.name) }

// Add folds v into the channel's value.
func (k ReducerKey[T]) Add(v T) Write { return Write{k.s.name, v} }

// WithDefault returns the key with a channel that starts out holding d()
// instead of T's zero value (or nothing): the first write is folded into
// it with the reducer. As for Key.WithDefault, the default shows in state
// and snapshots, a written value is checkpointed, and a checkpoint in which
// the channel was never written loads with the default again. d is called
// for each run and each snapshot; a nil d restores the zero value.
func (k ReducerKey[T]) WithDefault(d func() T) ReducerKey[T] {
	if d == nil {
		return ReducerKey[T]{k.s.withDefault(nil)}
	}
	return ReducerKey[T]{k.s.withDefault(func() any { return d() })}
}

// Overwrite replaces the channel's value with v, skipping the reducer; later
// writes of the same step are ignored, and two Overwrites in one step are an
// InvalidUpdateError.
func (k ReducerKey[T]) Overwrite(v T) Write { return Write{k.s.name, Overwrite{v}} }

// Append is the list-concatenation reducer (LangGraph's operator.add on
// lists). It never modifies acc.
func Append[E any](acc, v []E) []E {
	out := make([]E, 0, len(acc)+len(v))
	return append(append(out, acc...), v...)
}

// Sum is the addition reducer for numbers and strings.
func Sum[T ~int | ~int64 | ~float64 | ~string](acc, v T) T { return acc + v }

// ListKey is a reducer channel holding a []E that appends every write.
type ListKey[E any] struct{ ReducerKey[[]E] }

// List declares a []E channel whose writes are appended in task order.
// It is Reducer(name, "append", Append[E]), with the list kept so that a
// write copies only what it adds (see listChannel).
func List[E any](name string) ListKey[E] {
	k := Reducer(name, "append", Append[E])
	zero := zeroFor[[]E]()
	k.s.mk = func(s *chanSpec) channel {
		return &listChannel[E]{reducer: *newReducer(name, s.codec, s.start(zero), nil)}
	}
	return ListKey[E]{k}
}

// Add appends items to the list.
func (k ListKey[E]) Add(items ...E) Write { return Write{k.s.name, items} }

// WithDefault returns the key with a list that starts out holding d()
// instead of empty; writes append to it. See ReducerKey.WithDefault.
func (k ListKey[E]) WithDefault(d func() []E) ListKey[E] {
	return ListKey[E]{k.ReducerKey.WithDefault(d)}
}

// TopicKey is a channel collecting the values written to it as a []E
// (LangGraph's Topic). Without accumulate it holds only the values of the
// last step that wrote it.
type TopicKey[E any] struct{ s *chanSpec }

// Topic declares a Topic channel of E values.
func Topic[E any](name string, accumulate bool) TopicKey[E] {
	return TopicKey[E]{topicSpec[E](name, accumulate, topicCodec[E]{}, typedCodec[[]E]{})}
}

// topicSpec is the spec of a topic of E values. writes codes a write (one
// E or several), list the []E the channel stores. The engine's own Send
// packets are a topic too (tasksSpec), with the graph's Send codec for both.
func topicSpec[E any](name string, accumulate bool, writes, list codec) *chanSpec {
	s := &chanSpec{name: name, kind: "topic", codec: writes}
	spread := func(v any) ([]any, bool) {
		l, ok := v.([]E)
		if !ok {
			return nil, false
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[i] = e
		}
		return out, true
	}
	build := func(vals []any) any {
		out := make([]E, 0, len(vals))
		for _, v := range vals {
			if e, ok := v.(E); ok {
				out = append(out, e)
			}
		}
		return out
	}
	s.newCh = func() channel {
		return &topic{name: name, codec: list, accumulate: accumulate, spread: spread, build: build}
	}
	return s
}

// Name returns the channel's name.
func (k TopicKey[E]) Name() string    { return k.s.name }
func (k TopicKey[E]) spec() *chanSpec { return k.s }

// Get returns the collected values (nil when empty).
func (k TopicKey[E]) Get(s State) []E { v, _ := lookup[[]E](s, k.s.name); return v }

// Add publishes items to the topic. One item is written as itself (as
// LangGraph records a single value written to a Topic), several as a list;
// for an E that is itself a slice or array, always as a list, so a stored
// write is never ambiguous.
func (k TopicKey[E]) Add(items ...E) Write {
	if len(items) == 1 && !listKind(reflect.TypeFor[E]()) {
		return Write{k.s.name, items[0]}
	}
	return Write{k.s.name, items}
}

func listKind(t reflect.Type) bool { return t.Kind() == reflect.Slice || t.Kind() == reflect.Array }

// topicCodec stores a Topic's writes and value. A write is one E or a []E;
// the value is a []E.
type topicCodec[E any] struct{}

func (topicCodec[E]) goType() reflect.Type { return reflect.TypeFor[[]E]() }

func (topicCodec[E]) check(v any) error {
	if _, ok := v.([]E); ok {
		return nil
	}
	if (typedCodec[E]{}).check(v) == nil {
		return nil
	}
	return fmt.Errorf("value of type %T, want %v or a list of them", v, reflect.TypeFor[E]())
}

func (topicCodec[E]) encode(v any) ([]byte, error) {
	if l, ok := v.([]E); ok {
		return typedCodec[[]E]{}.encode(l)
	}
	return typedCodec[E]{}.encode(v)
}

// decode reads a list when the JSON is one that decodes as []E, else one E:
// an E that is itself a list is always stored inside a list (see Add).
func (topicCodec[E]) decode(b []byte) (any, error) {
	if i := bytes.IndexFunc(b, func(r rune) bool { return !unicode.IsSpace(r) }); i >= 0 && b[i] == '[' {
		if v, err := decodeAs[[]E](b); err == nil || listKind(reflect.TypeFor[E]()) {
			return v, err
		}
	}
	return typedCodec[E]{}.decode(b)
}

// BarrierKey is a channel that becomes available once each of a fixed set of
// names has been written to it (LangGraph's NamedBarrierValue); a node
// triggered by it runs once all have arrived.
type BarrierKey struct{ s *chanSpec }

// Barrier declares a NamedBarrierValue channel waiting for names. With
// afterFinish it opens only when the graph would otherwise stop.
func Barrier(name string, afterFinish bool, names ...string) BarrierKey {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	kind := "named_barrier"
	s := &chanSpec{name: name, kind: kind, codec: typedCodec[string]{}}
	s.newCh = func() channel { return &namedBarrier{name: name, names: sorted, afterFinish: afterFinish} }
	return BarrierKey{s}
}

// Name returns the channel's name.
func (k BarrierKey) Name() string    { return k.s.name }
func (k BarrierKey) spec() *chanSpec { return k.s }

// Arrive records that name has arrived.
func (k BarrierKey) Arrive(name string) Write { return Write{k.s.name, name} }

// State is a node's read-only view of the graph state: the committed values
// of the step (plus, for a conditional edge, the node's own writes). A push
// task started by a Send sees its Send argument instead: Arg returns it, and
// when it is a Values map the keys read from it.
//
// Values are shared, not copied: treat what you read as read-only and build
// new slices and maps for writes.
type State struct {
	r   reader
	arg any
}

type reader interface {
	read(name string) (any, bool)
}

// Get returns the raw value of the named channel and whether it has one.
func (s State) Get(name string) (any, bool) {
	if s.r == nil {
		return nil, false
	}
	return s.r.read(name)
}

// Arg returns the Send argument of a push task, or nil for other tasks.
func (s State) Arg() any { return s.arg }

// ArgAs returns a push task's Send argument as a T.
func ArgAs[T any](s State) (T, bool) {
	v, ok := s.arg.(T)
	return v, ok
}

// valuesReader reads from a Values map (a Send argument).
type valuesReader Values

func (v valuesReader) read(name string) (any, bool) { x, ok := v[name]; return x, ok }

// StateOf returns a State reading from vals, for tests of node functions.
func StateOf(vals Values) State { return State{r: valuesReader(vals)} }

func decodeAs[T any](b []byte) (any, error) { return typedCodec[T]{}.decode(b) }
