// Package nodecache is where a graph keeps the writes of its cached nodes
// (LangGraph's node cache): a node with a cache policy that runs again on an
// input it has seen is not run, its stored writes are applied instead.
//
// A Cache maps (namespace, key) to a task's writes, each entry for a while.
// The engine chooses both: the namespace names the graph and the node, the
// key is a hash of the node's input (or of what the policy's key function
// makes of it), so Clear by namespace clears one node. Writes are stored as
// the engine encodes them, opaque bytes like checkpoint values.
//
// Memory is the in-process cache here; the SQLite and PostgreSQL savers give
// one in their store (their NodeCache method). Every implementation passes
// nodecachetest.Run.
package nodecache

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// Cache stores the writes of cached nodes. Implementations are safe for
// concurrent use. An expired entry is never returned.
type Cache interface {
	// Get returns the writes stored under (ns, key); ok is false when there
	// are none or they expired.
	Get(ctx context.Context, ns, key string) (writes []checkpoint.Write, ok bool, err error)
	// Set stores writes under (ns, key), replacing what was there, for ttl;
	// ttl ≤ 0 keeps them until cleared.
	Set(ctx context.Context, ns, key string, writes []checkpoint.Write, ttl time.Duration) error
	// Clear deletes every entry of the given namespaces; with none it
	// deletes every entry of the cache.
	Clear(ctx context.Context, ns ...string) error
}

// Memory is a Cache in this process's memory. The zero Memory is not usable;
// make one with NewMemory.
type Memory struct {
	mu  sync.RWMutex
	m   map[string]map[string]entry
	now func() time.Time
}

type entry struct {
	writes  []checkpoint.Write
	expires time.Time // zero: never
}

// NewMemory returns an empty in-memory cache.
func NewMemory() *Memory { return &Memory{m: map[string]map[string]entry{}, now: time.Now} }

// SetClock makes the cache read the time from now (for tests of expiry);
// nil restores the wall clock.
func (c *Memory) SetClock(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	c.mu.Lock()
	c.now = now
	c.mu.Unlock()
}

// Get implements Cache. The writes returned are the cache's own: callers
// must not modify them (the engine only decodes them).
func (c *Memory) Get(_ context.Context, ns, key string) ([]checkpoint.Write, bool, error) {
	c.mu.RLock()
	e, ok := c.m[ns][key]
	now := c.now
	c.mu.RUnlock()
	if !ok {
		return nil, false, nil
	}
	if !e.expires.IsZero() && !now().Before(e.expires) {
		c.mu.Lock()
		if cur, ok := c.m[ns][key]; ok && cur.expires.Equal(e.expires) {
			delete(c.m[ns], key)
		}
		c.mu.Unlock()
		return nil, false, nil
	}
	return e.writes, true, nil
}

// Set implements Cache; it keeps copies of writes.
func (c *Memory) Set(_ context.Context, ns, key string, writes []checkpoint.Write, ttl time.Duration) error {
	cp := make([]checkpoint.Write, len(writes))
	for i, w := range writes {
		cp[i] = checkpoint.Write{Channel: w.Channel, Value: slices.Clone(w.Value)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := entry{writes: cp}
	if ttl > 0 {
		e.expires = c.now().Add(ttl)
	}
	byKey := c.m[ns]
	if byKey == nil {
		byKey = map[string]entry{}
		c.m[ns] = byKey
	}
	byKey[key] = e
	return nil
}

// Clear implements Cache.
func (c *Memory) Clear(_ context.Context, ns ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(ns) == 0 {
		clear(c.m)
		return nil
	}
	for _, n := range ns {
		delete(c.m, n)
	}
	return nil
}

// Len returns how many entries the cache holds, expired ones not yet
// dropped included.
func (c *Memory) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := 0
	for _, byKey := range c.m {
		n += len(byKey)
	}
	return n
}

// entryWrite is one write as a stored cache entry keeps it.
type entryWrite struct {
	C string `json:"c"`
	V []byte `json:"v,omitempty"`
}

// EncodeEntry returns the bytes a store keeps for a cache entry's writes
// (JSON), for DecodeEntry to read back.
func EncodeEntry(writes []checkpoint.Write) ([]byte, error) {
	ews := make([]entryWrite, len(writes))
	for i, w := range writes {
		ews[i] = entryWrite{C: w.Channel, V: w.Value}
	}
	return json.Marshal(ews)
}

// DecodeEntry reads what EncodeEntry wrote; bytes it cannot read are an
// error saying the entry is damaged.
func DecodeEntry(b []byte) ([]checkpoint.Write, error) {
	var ews []entryWrite
	if err := json.Unmarshal(b, &ews); err != nil {
		return nil, fmt.Errorf("the entry is damaged: %w", err)
	}
	ws := make([]checkpoint.Write, len(ews))
	for i, w := range ews {
		ws[i] = checkpoint.Write{Channel: w.C, Value: w.V}
	}
	return ws, nil
}
