package sqlite

import (
	"context"
	"database/sql"
	"maps"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
)

// The snapshot cache keeps the checkpoints Get read most recently, so that
// reading the same state again (the studio's inspector, a worker polling a
// thread, GetState after GetState) runs no query but one PRAGMA.
//
// Whether an entry still holds is asked of SQLite itself: PRAGMA
// data_version, read on a connection of the cache's own that never writes,
// changes whenever any other connection — this process's writer or another
// process — commits to the file. The number is read before the query that
// fills an entry, so an entry is never newer than its tag says; any commit
// since then drops every entry. Nothing depends on clocks or on this
// process's own bookkeeping of its writes.
const (
	// snapCacheEntries bounds the entries kept.
	snapCacheEntries = 64
	// snapCacheBytes bounds the value bytes kept; a tuple larger than a
	// quarter of it is not kept.
	snapCacheBytes = 32 << 20
)

type snapKey struct{ thread, ns, id string } // id "" is the latest

type snapCache struct {
	mu sync.Mutex
	db *sql.DB // nil until the first Get; one read-only connection
	st *sql.Stmt
	// version is the data_version the entries were read at; entries is
	// nil after a failure to ask, which turns the cache off.
	version int64
	entries map[snapKey]*checkpoint.Tuple
	order   []snapKey // oldest first, for eviction
	bytes   int
	off     bool
}

// snapVersion returns SQLite's data_version as the cache's connection sees
// it now, opening that connection on first use; ok is false when the cache
// is off. A failure to open or ask turns the cache off for good rather than
// failing Get: the read itself then runs, and reports what is wrong with the
// store. The caller holds s.snap.mu.
func (s *Saver) snapVersion(ctx context.Context) (v int64, ok bool) {
	c := &s.snap
	if c.off {
		return 0, false
	}
	if c.db == nil {
		db, err := sql.Open("sqlite", dsn(s.path, s.readParams))
		if err != nil {
			c.off = true
			return 0, false
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		st, err := db.PrepareContext(ctx, "PRAGMA data_version")
		if err != nil {
			db.Close()
			c.off = true
			return 0, false
		}
		c.db, c.st = db, st
	}
	if err := c.st.QueryRowContext(context.WithoutCancel(ctx)).Scan(&v); err != nil {
		c.off = true
		return 0, false
	}
	return v, true
}

// cachedGet answers Get from the cache when no commit happened since the
// entry was read. It returns the data_version to tag a fresh read with
// (ok false: do not keep it).
func (s *Saver) cachedGet(ctx context.Context, k snapKey) (t *checkpoint.Tuple, version int64, ok bool) {
	c := &s.snap
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := s.snapVersion(ctx)
	if !ok {
		return nil, 0, false
	}
	if v != c.version {
		c.entries, c.order, c.bytes, c.version = nil, nil, 0, v
	}
	if hit := c.entries[k]; hit != nil {
		return cloneTuple(hit), v, true
	}
	return nil, v, true
}

// keep stores a tuple read at data_version v under k and, for the latest,
// under its own id too. A copy is kept: the caller owns what Get returns.
func (s *Saver) keep(k snapKey, v int64, t *checkpoint.Tuple) {
	n := tupleBytes(t)
	if n > snapCacheBytes/4 {
		return
	}
	c := &s.snap
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off || v != c.version { // a commit came since: the tuple may be stale already
		return
	}
	if c.entries == nil {
		c.entries = map[snapKey]*checkpoint.Tuple{}
	}
	kept := cloneTuple(t)
	keys := []snapKey{k}
	if k.id == "" {
		keys = append(keys, snapKey{k.thread, k.ns, t.Ref.CheckpointID})
	}
	for _, key := range keys {
		if _, dup := c.entries[key]; dup {
			continue
		}
		for len(c.order) > 0 && (len(c.entries) >= snapCacheEntries || c.bytes+n > snapCacheBytes) {
			old := c.order[0]
			c.order = c.order[1:]
			if e := c.entries[old]; e != nil {
				c.bytes -= tupleBytes(e)
				delete(c.entries, old)
			}
		}
		c.entries[key] = kept
		c.order = append(c.order, key)
		c.bytes += n
	}
}

// closeSnap closes the cache's connection.
func (s *Saver) closeSnap() error {
	c := &s.snap
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries, c.order, c.off = nil, nil, true
	if c.db == nil {
		return nil
	}
	c.st.Close()
	return c.db.Close()
}

func tupleBytes(t *checkpoint.Tuple) int {
	n := 0
	for _, v := range t.Checkpoint.ChannelValues {
		n += len(v)
	}
	for _, w := range t.PendingWrites {
		n += len(w.Value)
	}
	return n
}

// cloneTuple copies t down to its bytes, so neither the cache nor a caller
// sees what the other changes.
func cloneTuple(t *checkpoint.Tuple) *checkpoint.Tuple {
	c := *t
	cp := &c.Checkpoint
	if cp.ChannelValues != nil {
		cp.ChannelValues = make(map[string][]byte, len(t.Checkpoint.ChannelValues))
		for k, v := range t.Checkpoint.ChannelValues {
			cp.ChannelValues[k] = cloneBytes(v)
		}
	}
	cp.ChannelVersions = maps.Clone(cp.ChannelVersions)
	if cp.VersionsSeen != nil {
		cp.VersionsSeen = make(map[string]map[string]int64, len(t.Checkpoint.VersionsSeen))
		for k, v := range t.Checkpoint.VersionsSeen {
			cp.VersionsSeen[k] = maps.Clone(v)
		}
	}
	cp.UpdatedChannels = cloneSlice(cp.UpdatedChannels)
	c.Metadata.Parents = maps.Clone(c.Metadata.Parents)
	c.Metadata.Tasks = cloneSlice(c.Metadata.Tasks)
	if c.Metadata.Extra != nil {
		c.Metadata.Extra = cloneJSON(c.Metadata.Extra).(map[string]any)
	}
	if t.Parent != nil {
		p := *t.Parent
		c.Parent = &p
	}
	if t.PendingWrites != nil {
		c.PendingWrites = make([]checkpoint.PendingWrite, len(t.PendingWrites))
		for i, w := range t.PendingWrites {
			w.Value = cloneBytes(w.Value)
			c.PendingWrites[i] = w
		}
	}
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// cloneJSON copies a decoded JSON value (metadata's Extra).
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = cloneJSON(x)
		}
		return s
	default:
		return v
	}
}
