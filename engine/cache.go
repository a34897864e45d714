package engine

// This file is the node cache (LangGraph's CachePolicy): a node with a
// policy, in a graph compiled WithCache, is not run on an input it has seen;
// the writes it made then are applied instead.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// CachePolicy makes a node's writes reusable: when the node's task has the
// key of an earlier successful run of the node (in any thread) whose entry
// has not expired, the node is not run and the writes of that run — state
// writes, edges, routes and Sends alike, as LangGraph caches them — are
// applied as its writes. The zero CachePolicy keys on the whole input and
// never expires.
type CachePolicy struct {
	// Key makes the cache key of the node's input: the state as the step
	// found it, or a push task's Send argument (ArgAs). Two inputs with the
	// same key share an entry. nil keys on the whole input: every state
	// channel that has a value (or the Send argument), encoded as stored.
	// An error fails the run before the step runs.
	Key func(State) (string, error)
	// TTL is how long an entry serves hits after it is written; 0 keeps it
	// until the cache is cleared.
	TTL time.Duration
}

// WithCachePolicy caches the node's writes by its input (see CachePolicy).
// It takes effect in a graph compiled with WithCache: as in both
// LangGraphs, a subgraph's nodes use the subgraph's own cache, never that
// of the graph running it, so a subgraph compiled without one runs its
// nodes every time.
func WithCachePolicy(p CachePolicy) NodeOption {
	if p.TTL < 0 {
		p.TTL = 0
	}
	return func(n *nodeDef) { n.cache = &p }
}

// WithCache gives the graph a node cache: the nodes added WithCachePolicy
// keep their writes in c (nodecache.NewMemory, or a store's NodeCache).
// Entries are named by the graph's name and the node's, so graphs of
// different names can share one cache.
func WithCache(c nodecache.Cache) CompileOption { return func(cc *compileConfig) { cc.cache = c } }

// WithCache returns a copy of the graph whose nodes keep their writes in c
// instead (nil: none), as WithSaver binds a store: a program opening a
// store gives the graph the store's cache (its NodeCache).
func (gr *Graph) WithCache(c nodecache.Cache) *Graph {
	cp := *gr
	cp.cache = c
	return &cp
}

// Cache returns the node cache given at Compile, or nil.
func (gr *Graph) Cache() nodecache.Cache { return gr.cache }

// ErrNoCache is returned by ClearCache for a graph compiled without a cache.
var ErrNoCache = errors.New("graph has no node cache (compile it with engine.WithCache)")

// ClearCache deletes the cached writes of the named nodes, so their next
// tasks run. With no names it clears every node of the graph and the
// results of its call tasks (CallOptions.Cache: functional tasks), kept
// in one namespace of the graph's own, following Python LangGraph (its
// clear_cache, which leaves task entries: see Task cache among the
// package's deliberate differences), and the whole cache — other graphs'
// entries too — following LangGraphJS (its clearCache). An unknown node
// is an error; a graph without a cache returns ErrNoCache.
func (gr *Graph) ClearCache(ctx context.Context, nodes ...string) error {
	if gr.cache == nil {
		return fmt.Errorf("graph %q: %w", gr.name, ErrNoCache)
	}
	var ns []string
	if len(nodes) == 0 {
		if gr.reference == LangGraphJS {
			return gr.cache.Clear(ctx)
		}
		for _, n := range gr.nodes {
			if !n.start {
				nodes = append(nodes, n.name)
			}
		}
		ns = append(ns, callCacheNS(gr))
	}
	for _, name := range nodes {
		if _, ok := gr.nodeIdx[name]; !ok || name == START {
			return fmt.Errorf("graph %q: clear cache: no node %q", gr.name, name)
		}
		ns = append(ns, cacheNS(gr, name))
	}
	return gr.cache.Clear(ctx, ns...)
}

// cacheNS is the cache namespace of graph g's node: its names joined by
// "|" (node names contain no "|", so the last one splits them).
func cacheNS(g *Graph, node string) string { return g.name + "|" + node }

// nodeCache is the cache of the run's nodes: its own graph's, not a
// parent's (both LangGraphs keep a subgraph to its own).
func (rt *runtime) nodeCache() nodecache.Cache { return rt.g.cache }

// serveCached looks the step's cacheable tasks up in the node cache before
// they run. A hit gets the cached writes, is reported as LangGraph reports
// it (an updates event marked cached, no task result) and, following
// LangGraphJS, stored as the task's pending writes; it returns the tasks
// still to run. A miss keeps its key, for storeCached.
func (rt *runtime) serveCached(todo []*task) ([]*task, error) {
	c := rt.nodeCache()
	if c == nil {
		return todo, nil
	}
	kept := todo[:0]
	for _, t := range todo {
		if t.node.cache == nil || t.node.start {
			kept = append(kept, t)
			continue
		}
		key, err := rt.cacheKey(t)
		if err != nil {
			return nil, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cache key: %w", err)}
		}
		ws, ok, err := c.Get(rt.ctx, cacheNS(rt.g, t.name), key)
		if err != nil {
			return nil, &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("reading the node cache: %w", err)}
		}
		t.cacheKey = key
		if !ok {
			kept = append(kept, t)
			continue
		}
		if err := rt.serveHit(t, ws); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// hitMemo keeps the decoded writes of cache entries, by namespace and key,
// with the writes they were decoded from: a cache that returns the very
// same writes for a hit again (nodecache.Memory does, until the entry is
// replaced) is not decoded again. Decoded values are shared between runs,
// as values read from State are: read-only.
type hitMemo struct {
	mu sync.Mutex
	m  map[memoKey]memoEntry
}

// memoKey is a cache entry's node and key: a pair, not one string, so a
// hit does not build a key to look its entry up.
type memoKey struct{ node, key string }

type memoEntry struct {
	raw []checkpoint.Write
	dec []cwrite
}

// hitMemoMax bounds a graph's memo; past it the memo starts again.
const hitMemoMax = 4096

func (m *hitMemo) get(id memoKey, ws []checkpoint.Write) ([]cwrite, bool) {
	if len(ws) == 0 {
		return nil, false
	}
	m.mu.Lock()
	e, ok := m.m[id]
	m.mu.Unlock()
	if !ok || len(e.raw) != len(ws) || &e.raw[0] != &ws[0] {
		return nil, false
	}
	return e.dec, true
}

func (m *hitMemo) put(id memoKey, ws []checkpoint.Write, dec []cwrite) {
	if len(ws) == 0 {
		return
	}
	m.mu.Lock()
	if m.m == nil || len(m.m) >= hitMemoMax {
		m.m = map[memoKey]memoEntry{}
	}
	m.m[id] = memoEntry{ws, dec}
	m.mu.Unlock()
}

// serveHit gives t the cached writes ws and reports it.
func (rt *runtime) serveHit(t *task, ws []checkpoint.Write) error {
	id := memoKey{t.name, t.cacheKey}
	if dec, ok := rt.g.memo.get(id, ws); ok {
		t.writes = append(t.writes, dec...)
	} else if err := rt.decodeHit(t, ws); err != nil {
		return err
	} else {
		rt.g.memo.put(id, ws, slices.Clone(t.writes))
	}
	t.restored, t.cached = true, true
	t.cacheKey = ""
	rt.emitUpdate(t, true)
	if rt.em.on(ModeLifecycle) {
		rt.em.emit(Event{Mode: ModeLifecycle, Step: rt.step, Lifecycle: &Lifecycle{Kind: TaskEnd, TaskID: t.id, Node: t.name, Path: t.path, Cached: true}})
	}
	if rt.saver != nil && rt.js() {
		// LangGraph.js puts a hit's writes like a run's; Python keeps them
		// out of the checkpoint, so a resume looks the task up again.
		stored := ws
		if len(stored) == 0 {
			stored = []checkpoint.Write{{Channel: checkpoint.NoWrites, Value: []byte("null")}}
		}
		rt.storeTaskWrites(t, stored)
		if t.err != nil {
			return t.err
		}
	}
	return nil
}

// decodeHit decodes the cached writes ws into t's writes.
func (rt *runtime) decodeHit(t *task, ws []checkpoint.Write) error {
	for _, w := range ws {
		i, ok := rt.g.chanIdx[w.Channel]
		if !ok {
			return &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("the node cache holds a write to channel %q, which graph %q does not declare (clear the node's cache)", w.Channel, rt.g.name)}
		}
		v, err := decodeWrite(rt.g.specs[i], w.Value)
		if err != nil {
			return &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("the node cache's write to %q: %w (clear the node's cache)", w.Channel, err)}
		}
		t.writes = append(t.writes, cwrite{i, v})
	}
	return nil
}

// storeCached keeps a task's writes in the node cache after it succeeded,
// under the key serveCached found missing.
func (rt *runtime) storeCached(t *task) {
	if t.cacheKey == "" || t.err != nil {
		return
	}
	ws, err := rt.encodeWrites(t.writes)
	if err == nil {
		err = rt.nodeCache().Set(rt.ctx, cacheNS(rt.g, t.name), t.cacheKey, ws, t.node.cache.TTL)
	}
	if err != nil {
		t.err = &NodeError{Node: t.name, TaskID: t.id, NS: rt.ns, Err: fmt.Errorf("cannot keep its writes in the node cache: %w", err)}
	}
}

// cacheKey is the node cache's key of t's input: a hash of what the
// policy's Key makes of it, or of the input as stored.
func (rt *runtime) cacheKey(t *task) (string, error) {
	h := sha256.New()
	if k := t.node.cache.Key; k != nil {
		s := State{r: committedReader{rt}}
		if t.push {
			s = State{arg: t.arg}
			if vals, ok := t.arg.(Values); ok {
				s.r = valuesReader(vals)
			}
		}
		key, err := k(s)
		if err != nil {
			return "", err
		}
		h.Write([]byte{'k'})
		h.Write([]byte(key))
	} else if t.push {
		b, err := encodeLoose(t.arg)
		if err != nil {
			return "", fmt.Errorf("the Send argument: %w (give the policy a Key)", err)
		}
		h.Write([]byte{'a'})
		h.Write(b)
	} else {
		// Each channel as "<len>:<name>=<len>:<value>", so no two states
		// hash the same bytes.
		buf := make([]byte, 0, 64)
		buf = append(buf, 's')
		for i := 0; i < rt.g.nState; i++ {
			v, ok := rt.ch[i].get()
			if !ok {
				continue
			}
			s := rt.g.specs[i]
			b, err := s.codec.encode(v)
			if err != nil {
				return "", fmt.Errorf("channel %q: %w (give the policy a Key)", s.name, err)
			}
			buf = strconv.AppendInt(buf, int64(len(s.name)), 10)
			buf = append(buf, ':')
			buf = append(buf, s.name...)
			buf = append(buf, '=')
			buf = strconv.AppendInt(buf, int64(len(b)), 10)
			buf = append(buf, ':')
			buf = append(buf, b...)
		}
		h.Write(buf)
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])), nil
}
