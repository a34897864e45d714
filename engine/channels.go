package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
)

// channel is the run-time form of one state key or internal trigger. The
// methods follow LangGraph's BaseChannel (semantics reference §1): a true
// result from update, consume or finish means "changed", and only then is the
// channel's version bumped.
type channel interface {
	// update applies one super-step's writes in task order. An empty vals is
	// the "step passed without writes" signal that clears ephemeral values.
	update(vals []any) (bool, error)
	// get returns the value and whether the channel is available.
	get() (any, bool)
	available() bool
	consume() bool
	finish() bool
	// save encodes the checkpoint form; ok is false when the channel is empty
	// or untracked and must not be stored.
	save() (data []byte, ok bool, err error)
	// load restores the checkpoint form written by save.
	load(data []byte) error
	// copy returns an independent channel with the same contents.
	copy() channel
	// reset empties the channel as its spec's newCh builds it when the
	// spec has no default, so History can reuse it for the next snapshot.
	reset()
}

// invalidUpdate builds the error LangGraph raises as InvalidUpdateError.
func invalidUpdate(key, format string, args ...any) error {
	return &InvalidUpdateError{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// lastValue keeps the single value written in the last step that wrote it.
type lastValue struct {
	name  string
	codec codec
	v     any
	set   bool
}

func (c *lastValue) update(vals []any) (bool, error) {
	switch len(vals) {
	case 0:
		return false, nil
	case 1:
		c.v, c.set = vals[0], true
		return true, nil
	default:
		return false, invalidUpdate(c.name, "At key '%s': Can receive only one value per step. Use a reducer channel (engine.Reducer, engine.List, engine.Messages) to accept several values in one step", c.name)
	}
}
func (c *lastValue) start(v any)      { c.v, c.set = v, true }
func (c *lastValue) get() (any, bool) { return c.v, c.set }
func (c *lastValue) available() bool  { return c.set }
func (c *lastValue) consume() bool    { return false }
func (c *lastValue) finish() bool     { return false }
func (c *lastValue) save() ([]byte, bool, error) {
	if !c.set {
		return nil, false, nil
	}
	b, err := c.codec.encode(c.v)
	return b, err == nil, err
}
func (c *lastValue) load(data []byte) error {
	v, err := c.codec.decode(data)
	c.v, c.set = v, err == nil
	return err
}
func (c *lastValue) copy() channel { d := *c; return &d }
func (c *lastValue) reset()        { c.v, c.set = nil, false }

// anyValue keeps the last value written in a step and clears when a step
// passes without a write (LangGraph's AnyValue).
type anyValue struct{ lastValue }

func (c *anyValue) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		was := c.set
		c.v, c.set = nil, false
		return was, nil
	}
	c.v, c.set = vals[len(vals)-1], true
	return true, nil
}
func (c *anyValue) copy() channel { d := *c; return &d }

// ephemeral holds a value for exactly one step. With guard, two writes in one
// step are an error.
type ephemeral struct {
	lastValue
	guard bool
}

// newTrigger returns the channel a node's edges write to trigger it.
func newTrigger(name string) *ephemeral {
	return &ephemeral{lastValue: lastValue{name: name, codec: typedCodec[any]{}}}
}

// newChannels fills ch with a new channel for each of specs; the nodes'
// trigger channels, most of a graph's, come from one allocation.
func newChannels(ch []channel, specs []*chanSpec, triggers int) {
	slab := make([]ephemeral, triggers)
	for i, s := range specs {
		if s.trigger && len(slab) > 0 {
			slab[0] = ephemeral{lastValue: lastValue{name: s.name, codec: typedCodec[any]{}}}
			ch[i], slab = &slab[0], slab[1:]
			continue
		}
		ch[i] = s.newCh()
	}
}

func (c *ephemeral) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		was := c.set
		c.v, c.set = nil, false
		return was, nil
	}
	if len(vals) > 1 && c.guard {
		return false, invalidUpdate(c.name, "At key '%s': Can receive only one value per step", c.name)
	}
	c.v, c.set = vals[len(vals)-1], true
	return true, nil
}
func (c *ephemeral) copy() channel { d := *c; return &d }

// untracked is a LastValue (optionally guarded) that is never checkpointed.
type untracked struct {
	lastValue
	guard bool
}

func (c *untracked) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	if len(vals) > 1 && c.guard {
		return false, invalidUpdate(c.name, "At key '%s': Can receive only one value per step", c.name)
	}
	c.v, c.set = vals[len(vals)-1], true
	return true, nil
}
func (c *untracked) save() ([]byte, bool, error) { return nil, false, nil }
func (c *untracked) copy() channel               { d := *c; return &d }

// topic collects values; without accumulate it starts afresh each step. A
// written slice of the element type is spread into its elements.
type topic struct {
	name       string
	codec      codec // codec of the []E value
	accumulate bool
	spread     func(v any) ([]any, bool) // splits a written []E into elements
	build      func(vals []any) any      // builds the []E value from elements
	vals       []any
}

func (c *topic) update(vals []any) (bool, error) {
	changed := false
	if !c.accumulate && len(c.vals) > 0 {
		c.vals = nil
		changed = true
	}
	for _, v := range vals {
		if parts, ok := c.spread(v); ok {
			c.vals = append(c.vals, parts...)
			changed = changed || len(parts) > 0
			continue
		}
		c.vals = append(c.vals, v)
		changed = true
	}
	return changed, nil
}
func (c *topic) get() (any, bool) {
	if len(c.vals) == 0 {
		return nil, false
	}
	return c.build(c.vals), true
}
func (c *topic) available() bool { return len(c.vals) > 0 }
func (c *topic) consume() bool   { return false }
func (c *topic) finish() bool    { return false }
func (c *topic) save() ([]byte, bool, error) {
	if len(c.vals) == 0 {
		return nil, false, nil
	}
	b, err := c.codec.encode(c.build(c.vals))
	return b, err == nil, err
}
func (c *topic) load(data []byte) error {
	v, err := c.codec.decode(data)
	if err != nil {
		return err
	}
	parts, _ := c.spread(v)
	c.vals = parts
	return nil
}
func (c *topic) copy() channel { d := *c; d.vals = slices.Clone(c.vals); return &d }
func (c *topic) reset()        { c.vals = nil }

// Overwrite, written to a reducer channel, replaces the accumulated value
// instead of being folded into it (LangGraph's Overwrite, since 1.0.2).
type Overwrite struct{ Value any }

// reducer folds writes into an accumulated value with a binary operator
// (LangGraph's BinaryOperatorAggregate). Like LangGraph's, it starts out
// holding its type's zero value when the type has a natural one ([] for a
// list, 0, ""), so an unwritten list reads as empty rather than missing.
type reducer struct {
	name  string
	codec codec
	op    func(acc, v any) (any, error)
	zero  func() (any, bool)
	v     any
	set   bool
}

func newReducer(name string, c codec, zero func() (any, bool), op func(acc, v any) (any, error)) *reducer {
	r := &reducer{name: name, codec: c, op: op, zero: zero}
	r.v, r.set = zero()
	return r
}

func (c *reducer) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	seenOverwrite := false
	for _, v := range vals {
		if ow, ok := v.(Overwrite); ok {
			if seenOverwrite {
				return false, invalidUpdate(c.name, "At key '%s': Can receive only one Overwrite value per super-step", c.name)
			}
			seenOverwrite = true
			c.v, c.set = ow.Value, true
			continue
		}
		if seenOverwrite {
			continue
		}
		if !c.set {
			c.v, c.set = v, true
			continue
		}
		nv, err := c.op(c.v, v)
		if err != nil {
			//lint:ignore ST1005 LangGraph's own wording, as in the other channels' errors
			return false, fmt.Errorf("At key '%s': reducer: %w", c.name, err)
		}
		c.v = nv
	}
	return true, nil
}
func (c *reducer) get() (any, bool) { return c.v, c.set }
func (c *reducer) available() bool  { return c.set }
func (c *reducer) consume() bool    { return false }
func (c *reducer) finish() bool     { return false }
func (c *reducer) save() ([]byte, bool, error) {
	if !c.set {
		return nil, false, nil
	}
	b, err := c.codec.encode(c.v)
	return b, err == nil, err
}
func (c *reducer) load(data []byte) error {
	v, err := c.codec.decode(data)
	c.v, c.set = v, err == nil
	return err
}
func (c *reducer) copy() channel { d := *c; return &d }
func (c *reducer) reset()        { c.v, c.set = c.zero() }

// listChannel is a ListKey's channel: a reducer channel whose op is
// Append, keeping the list in a buffer it owns with room to grow, so that a
// write copies what it adds, not the whole list (a list that grows a little
// every step cost a copy of itself every step). The value it hands out (v)
// is buf capped at its length: an append writes only past the end of every
// value handed out before, which therefore never changes, and a reader's
// own append to a value copies it. A copy of the channel shares the buffer
// but does not own it: its first append copies. It is the plain reducer
// (get, save and the rest) but for update; its reducer's op is unused.
type listChannel[E any] struct {
	reducer
	buf   []E  // v's elements, with room after them; nil when v is not buf's
	owned bool // buf is this channel's to append to
}

func (c *listChannel[E]) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	seenOverwrite, grown := false, false
	for _, v := range vals {
		if ow, ok := v.(Overwrite); ok {
			if seenOverwrite {
				return false, invalidUpdate(c.name, "At key '%s': Can receive only one Overwrite value per super-step", c.name)
			}
			seenOverwrite, grown = true, false
			c.v, c.set, c.owned = ow.Value, true, false
			continue
		}
		if seenOverwrite {
			continue
		}
		if !c.set {
			c.v, c.set, c.owned = v, true, false
			continue
		}
		add, ok := v.([]E)
		if !c.owned {
			acc, ok1 := c.v.([]E)
			if !ok || !ok1 {
				return false, c.badWrite(v)
			}
			c.buf = append(make([]E, 0, max(2*(len(acc)+len(add)), 4)), acc...)
			c.owned = true
		} else if !ok {
			return false, c.badWrite(v)
		}
		c.buf, grown = append(c.buf, add...), true
	}
	if grown { // boxed once per step, not once per write
		c.v = c.buf[:len(c.buf):len(c.buf)]
	}
	return true, nil
}

// badWrite is the error for a write of v that is not a []E. The buffer may
// hold this step's earlier writes past v's end by then: it is given up, so
// the next append starts again from the value.
func (c *listChannel[E]) badWrite(v any) error {
	c.buf, c.owned = nil, false
	//lint:ignore ST1005 LangGraph's own wording, as in the other channels' errors
	return fmt.Errorf("At key '%s': reducer: reducer append got %T and %T, want %v", c.name, c.v, v, reflect.TypeFor[[]E]())
}

func (c *listChannel[E]) load(data []byte) error {
	c.buf, c.owned = nil, false
	return c.reducer.load(data)
}
func (c *listChannel[E]) copy() channel { d := *c; d.owned = false; return &d }
func (c *listChannel[E]) reset() {
	c.buf, c.owned = nil, false
	c.reducer.reset()
}

// lastValueAfterFinish is the trigger of a deferred node: the value becomes
// available only once the graph would otherwise stop (finish).
type lastValueAfterFinish struct {
	name     string
	v        any
	set      bool
	finished bool
}

func (c *lastValueAfterFinish) update(vals []any) (bool, error) {
	if len(vals) == 0 {
		return false, nil
	}
	c.v, c.set, c.finished = vals[len(vals)-1], true, false
	return true, nil
}
func (c *lastValueAfterFinish) get() (any, bool) { return c.v, c.set && c.finished }
func (c *lastValueAfterFinish) available() bool  { return c.set && c.finished }
func (c *lastValueAfterFinish) consume() bool {
	if c.finished {
		c.v, c.set, c.finished = nil, false, false
		return true
	}
	return false
}
func (c *lastValueAfterFinish) finish() bool {
	if c.set && !c.finished {
		c.finished = true
		return true
	}
	return false
}

type afterFinishForm struct {
	Value    any  `json:"value"`
	Finished bool `json:"finished"`
}

func (c *lastValueAfterFinish) save() ([]byte, bool, error) {
	if !c.set {
		return nil, false, nil
	}
	b, err := json.Marshal(afterFinishForm{c.v, c.finished})
	return b, err == nil, err
}
func (c *lastValueAfterFinish) load(data []byte) error {
	var f afterFinishForm
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	c.v, c.set, c.finished = f.Value, true, f.Finished
	return nil
}
func (c *lastValueAfterFinish) copy() channel { d := *c; return &d }
func (c *lastValueAfterFinish) reset()        { c.v, c.set, c.finished = nil, false, false }

// namedBarrier becomes available once every name in names has written to it
// (the channel behind a join edge [a, b] → c).
type namedBarrier struct {
	name        string
	names       []string // sorted
	seen        map[string]bool
	afterFinish bool
	finished    bool
}

func (c *namedBarrier) update(vals []any) (bool, error) {
	changed := false
	for _, v := range vals {
		s, ok := v.(string)
		if !ok || !slices.Contains(c.names, s) {
			return false, invalidUpdate(c.name, "At key '%s': value %v is not one of the waited-for nodes %v", c.name, v, c.names)
		}
		if !c.seen[s] {
			if c.seen == nil {
				c.seen = map[string]bool{}
			}
			c.seen[s] = true
			changed = true
		}
	}
	return changed, nil
}
func (c *namedBarrier) complete() bool   { return len(c.seen) == len(c.names) }
func (c *namedBarrier) get() (any, bool) { return nil, c.available() }
func (c *namedBarrier) available() bool {
	if c.afterFinish {
		return c.complete() && c.finished
	}
	return c.complete()
}
func (c *namedBarrier) consume() bool {
	if c.afterFinish {
		if c.finished && c.complete() {
			c.seen, c.finished = nil, false
			return true
		}
		return false
	}
	if c.complete() {
		c.seen = nil
		return true
	}
	return false
}
func (c *namedBarrier) finish() bool {
	if c.afterFinish && !c.finished && c.complete() {
		c.finished = true
		return true
	}
	return false
}

type barrierForm struct {
	Seen     []string `json:"seen"`
	Finished bool     `json:"finished,omitempty"`
}

func (c *namedBarrier) save() ([]byte, bool, error) {
	if len(c.seen) == 0 {
		return nil, false, nil
	}
	f := barrierForm{Finished: c.finished}
	for _, n := range c.names {
		if c.seen[n] {
			f.Seen = append(f.Seen, n)
		}
	}
	b, err := json.Marshal(f)
	return b, err == nil, err
}
func (c *namedBarrier) load(data []byte) error {
	var f barrierForm
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	c.seen = map[string]bool{}
	for _, s := range f.Seen {
		if !slices.Contains(c.names, s) {
			return fmt.Errorf("join channel %s: stored name %q is not one of %v", c.name, s, c.names)
		}
		c.seen[s] = true
	}
	c.finished = f.Finished
	return nil
}
func (c *namedBarrier) reset() { c.seen, c.finished = nil, false }
func (c *namedBarrier) copy() channel {
	d := *c
	if c.seen != nil {
		d.seen = make(map[string]bool, len(c.seen))
		for k, v := range c.seen {
			d.seen[k] = v
		}
	}
	return &d
}
