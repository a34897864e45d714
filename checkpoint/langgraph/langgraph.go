// Package langgraph reads the checkpoint stores that LangGraph itself writes
// (Python LangGraph's and LangGraph.js' SqliteSaver files and PostgresSaver
// databases), read-only, and answers through Weft's checkpoint interfaces
// (checkpoint.Saver Get/List, ThreadLister, ThreadSearcher, HeaderLister,
// StatsReporter), so Weft's commands and studio read LangGraph threads as
// they read their own.
//
// The mapping to Weft's model:
//
//   - Checkpoint ids, parents, namespaces and timestamps are LangGraph's own.
//   - Channel versions become int64 by their counter: Python's strings
//     "000…N.0.123" and JS's numbers N both become N<<32, so
//     checkpoint.VersionStep gives N, as it does for Weft's own versions.
//   - Metadata source, step, parents and run_id map to their fields; every
//     other key (thread_id, user keys, …) is kept in Extra.
//   - Values become Weft's JSON form: plain JSON stays as it is; LangChain
//     messages (JS {"lc":1,"type":"constructor",…}, Python pydantic
//     messages) become Weft messages (engine.Message's fields, with what it
//     has no field for under "langchain"); Python's non-JSON values are shown
//     as tagged objects: {"$datetime": iso}, {"$date"}, {"$time"},
//     {"$timedelta": seconds}, {"$uuid"}, {"$decimal"}, {"$set": […]},
//     {"$frozenset"}, {"$deque"}, {"$enum": class, "value"}, {"$bytes":
//     base64}, {"$dict": [[key, value], …]} for non-string keys,
//     {"$pydantic": class, "value"}, {"$dataclass": class, "value"}; Send
//     becomes {"node", "arg"} and Interrupt {"id", "value"}, as Weft stores
//     them. A value that is not decoded is a note {"$note": why}: pickled
//     values (never unpickled), encrypted values without the key, unknown
//     serde types.
//
// A damaged row marks its checkpoint (or thread) unreadable with the reason;
// the rest of the store reads on. Nothing is ever written: every write
// returns an error wrapping ErrReadOnly.
package langgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// ErrReadOnly is returned by every write. It wraps checkpoint.ErrReadOnly.
var ErrReadOnly = fmt.Errorf("a LangGraph checkpoint store is read-only in Weft: Weft never writes a store LangGraph owns (running or changing its threads takes a LangGraph server): %w", checkpoint.ErrReadOnly)

// SharedBlobsKey is the metadata key (Metadata.Extra of a Tuple) that lists
// the channels whose value a checkpoint reads from another branch's blob
// (see Checkpoint.Shared).
const SharedBlobsKey = "weft:shared_blobs"

// GuessedReducersKey is the metadata key (Metadata.Extra of a view's
// snapshot) that lists the channels whose value applied a pending write
// by a guessed reducer (see Snapshot.Guessed).
const GuessedReducersKey = "weft:guessed_reducers"

// Kind names the layout of a store, as the commands print it.
type Kind string

// The four layouts.
const (
	PythonSQLite   Kind = "LangGraph (Python) SQLite store"
	JSSQLite       Kind = "LangGraph.js SQLite store"
	PythonPostgres Kind = "LangGraph (Python) PostgreSQL store"
	JSPostgres     Kind = "LangGraph.js PostgreSQL store"
)

// JS reports whether the store was written by LangGraph.js (versions are
// numbers, task ids uuid5, values JSON).
func (k Kind) JS() bool { return k == JSSQLite || k == JSPostgres }

// Option changes how a store is opened.
type Option func(*Reader)

// WithAESKey decodes values LangGraph encrypted with its AES
// EncryptedSerializer (serde types ending in "+aes") with key, as
// LANGGRAPH_AES_KEY gives it. Without it (and without that variable, see
// KeyFromEnv), such values read as a note saying they are encrypted.
func WithAESKey(key []byte) Option { return func(r *Reader) { r.aesKey = key } }

// KeyFromEnv returns the AES key LangGraph reads from LANGGRAPH_AES_KEY
// (its bytes, 16, 24 or 32 of them), or nil when it is unset.
func KeyFromEnv() ([]byte, error) {
	s, ok := os.LookupEnv("LANGGRAPH_AES_KEY")
	if !ok {
		return nil, nil
	}
	if n := len(s); n != 16 && n != 24 && n != 32 {
		return nil, fmt.Errorf("LANGGRAPH_AES_KEY must be 16, 24 or 32 bytes long, not %d", n)
	}
	return []byte(s), nil
}

// Reader is an open LangGraph store. It is safe for concurrent use.
type Reader struct {
	kind   Kind
	where  string
	b      backend
	aesKey []byte
}

// backend is one layout's queries.
type backend interface {
	// threads lists every thread with its root checkpoints' count and
	// newest root checkpoint.
	threads(ctx context.Context) ([]threadRow, error)
	// thread reads every checkpoint and write of one thread, all namespaces.
	thread(ctx context.Context, threadID string) (*rawThread, error)
	stats(ctx context.Context) (checkpoint.Stats, error)
	// changeProbe returns a function whose result changes when the store
	// does, and how to release what it holds.
	changeProbe(ctx context.Context) (func(context.Context) (int64, error), func(), error)
	close() error
}

type threadRow struct {
	id, latest, metaType string
	count                int
	meta                 []byte
}

type rawThread struct {
	// vc, when not nil, is the value cache the backend decoded the thread's
	// large rows with, for the rest of its decoding to share.
	vc    *valueCache
	cps   []rawCheckpoint
	blobs map[blobKey]rawBlob // PostgreSQL only: values by (namespace, channel, version)
	// shared, when not nil, gives Checkpoint.Shared by checkpoint id, as
	// the store computed it (a point read, which has not the siblings
	// flagShared needs).
	shared map[string][]string
}

type blobKey struct{ ns, channel, version string }

type rawBlob struct {
	typ  string
	data []byte
}

type rawCheckpoint struct {
	ns, id, parent string
	typ            string // serde type of cp ("" for PostgreSQL's JSONB)
	cp             []byte
	// pre, when not nil, is cp decoded as it was read (cp is then nil).
	pre      *decoded
	metaType string
	meta     []byte
	writes   []rawWrite
}

type rawWrite struct {
	task, channel, typ, path string
	idx                      int
	value                    []byte
	// pre, when not nil, is value decoded as it was read (value is then
	// nil).
	pre *decoded
}

// decoded is a stored value decoded as it was read, or why it could not be.
type decoded struct {
	v   any
	err error
}

// Kind returns the store's layout.
func (r *Reader) Kind() Kind { return r.kind }

// StoreKind says what kind of store this is, for the commands to print
// (store.Describer).
func (r *Reader) StoreKind() string { return string(r.kind) }

// Close closes the store.
func (r *Reader) Close() error { return r.b.close() }

// Put fails: a LangGraph store is never written.
func (r *Reader) Put(context.Context, checkpoint.Ref, checkpoint.Checkpoint, checkpoint.Metadata, map[string]int64) (checkpoint.Ref, error) {
	return checkpoint.Ref{}, ErrReadOnly
}

// PutWrites fails: a LangGraph store is never written.
func (r *Reader) PutWrites(context.Context, checkpoint.Ref, []checkpoint.Write, string, string) error {
	return ErrReadOnly
}

// DeleteThread fails: a LangGraph store is never written.
func (r *Reader) DeleteThread(context.Context, string) error { return ErrReadOnly }

// Stats counts the store's threads, checkpoints, writes and blobs.
func (r *Reader) Stats(ctx context.Context) (checkpoint.Stats, error) { return r.b.stats(ctx) }

// Thread is one thread of a LangGraph store, decoded: its checkpoints of
// every namespace, newest first by id within each namespace.
type Thread struct {
	ID          string
	Checkpoints []*Checkpoint

	reducerOf map[nsChannel]string      // see reducers
	order     map[string]int            // see nodeOrder
	ids       map[[2]string]*Checkpoint // (namespace, id) → checkpoint; see index
	heads     map[string]*Checkpoint    // namespace → its newest checkpoint
	joins     map[nsChannel][]string    // (namespace, node) → its join channels; see joinsOf
}

// Checkpoint is one LangGraph checkpoint as stored, decoded.
type Checkpoint struct {
	NS, ID, Parent string
	V              int
	TS             string
	// Values holds each channel's value in Weft's JSON form; a channel
	// LangGraph stored without a value is absent.
	Values map[string]any
	// Versions and Seen are LangGraph's version counters.
	Versions map[string]int64
	Seen     map[string]map[string]int64
	// Updated is updated_channels; nil when the store has none.
	Updated  []string
	Metadata map[string]any
	// Writes are the pending writes in LangGraph's order (task id, index).
	Writes []Write
	// Shared lists, sorted, the channels whose value this checkpoint reads
	// from a blob another branch wrote: LangGraph.js' PostgresSaver keys
	// blobs by (channel, version) with per-thread integer versions and
	// keeps the first, so a fork that reaches a version its sibling
	// already wrote reads the sibling's value (LangGraph itself shows it
	// so). Nil when none.
	Shared []string
	// Ran names, sorted, the tasks whose writes this checkpoint applied,
	// as far as the store shows them (a loop checkpoint's parent's tasks
	// with writes); nil for input, update and fork checkpoints.
	Ran []string
	// rawVersions are the versions as stored (PostgreSQL keys blobs by them).
	rawVersions map[string]string
	// Err says why the checkpoint could not be read; the fields it could
	// not read are zero.
	Err error
}

// Write is one pending write, decoded.
type Write struct {
	TaskID, Channel, Path string
	Idx                   int
	Value                 any
}

// ReadThread reads and decodes a whole thread, or checkpoint.ErrNotFound.
func (r *Reader) ReadThread(ctx context.Context, threadID string) (*Thread, error) {
	if threadID == "" {
		return nil, checkpoint.ErrNoThread
	}
	raw, err := r.b.thread(ctx, threadID)
	if err != nil {
		return nil, err
	}
	if len(raw.cps) == 0 {
		return nil, checkpoint.ErrNotFound
	}
	return r.decodeThread(threadID, raw), nil
}

// decodeThread decodes what a backend read of a thread.
func (r *Reader) decodeThread(threadID string, raw *rawThread) *Thread {
	t := &Thread{ID: threadID, Checkpoints: r.decodeCheckpoints(raw)}
	sort.SliceStable(t.Checkpoints, func(i, j int) bool { return t.Checkpoints[i].ID > t.Checkpoints[j].ID })
	if raw.blobs != nil {
		t.flagShared()
	}
	for _, c := range t.Checkpoints {
		if sh, ok := raw.shared[c.ID]; ok {
			c.Shared = sh
		}
	}
	t.setRan(r.kind.JS())
	return t
}

// parallelFrom is the number of checkpoints from which a thread is
// decoded on every CPU: below it, starting goroutines costs more than it
// saves. A variable so that tests decode the fixtures' short threads both
// ways.
var parallelFrom = 256

// decodeCheckpoints decodes raw's checkpoints, in order. A long thread is
// cut into one run of neighbouring checkpoints per CPU, each decoded with
// the value cache they share; decoding is most of the time a long thread
// takes to open.
func (r *Reader) decodeCheckpoints(raw *rawThread) []*Checkpoint {
	out := make([]*Checkpoint, len(raw.cps))
	workers := min(runtime.GOMAXPROCS(0), len(raw.cps)/parallelFrom+1)
	vc := raw.vc
	if vc == nil {
		vc = newValueCache()
	}
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(out)/workers, (w+1)*len(out)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				out[i] = r.decodeCheckpoint(vc, &raw.cps[i], raw.blobs)
			}
		})
	}
	wg.Wait()
	return out
}

// setRan sets Checkpoint.Ran: the tasks of the parent's step whose writes
// made the checkpoint (LangGraph does not store it; Weft's timeline shows
// it).
//
// Each checkpoint asks for its parent's tasks, whose ids are hashes, so a
// long thread is split among the CPUs as decodeCheckpoints splits it; the
// lookups the tasks read are built first, since they are built lazily.
func (t *Thread) setRan(js bool) {
	t.index()
	t.nodeOrder()
	t.joinsOf("", "")
	n := len(t.Checkpoints)
	workers := min(runtime.GOMAXPROCS(0), n/parallelFrom+1)
	var wg sync.WaitGroup
	for w := range workers {
		part := t.Checkpoints[w*n/workers : (w+1)*n/workers]
		wg.Go(func() {
			for _, c := range part {
				t.setRanOf(c, js)
			}
		})
	}
	wg.Wait()
}

func (t *Thread) setRanOf(c *Checkpoint, js bool) {
	p := t.byID(c.NS, c.Parent)
	if p == nil || p.Err != nil || c.Metadata["source"] != "loop" {
		return
	}
	wrote := map[string]bool{}
	for _, w := range p.Writes {
		if w.Channel != checkpoint.Error && w.Channel != checkpoint.Interrupt {
			wrote[w.TaskID] = true
		}
	}
	for _, task := range t.nextTasks(p, js) {
		if wrote[task.ID] && !contains(c.Ran, task.Name) {
			c.Ran = append(c.Ran, task.Name)
		}
	}
	sort.Strings(c.Ran)
}

// flagShared sets Checkpoint.Shared: a checkpoint introduces a channel's
// version when its parent had another; when two checkpoints that are not
// one the other's ancestor introduce the same version, the older one's blob
// is the one stored, and the younger one and its descendants read it.
func (t *Thread) flagShared() {
	type key struct{ ns, ch string }
	byID := map[[2]string]*Checkpoint{}
	for _, c := range t.Checkpoints {
		byID[[2]string{c.NS, c.ID}] = c
	}
	// intros[c][ch] is the oldest checkpoint of c's own line with c's
	// version of ch, filled oldest first from the parent's, so that a
	// channel unchanged along a long line costs no walk per checkpoint
	// (walking made long threads quadratic).
	intros := map[*Checkpoint]map[string]string{}
	intro := func(c *Checkpoint, ch string) string {
		if m := intros[c]; m != nil {
			if id, ok := m[ch]; ok {
				return id
			}
		}
		v := c.rawVersions[ch]
		for {
			p := byID[[2]string{c.NS, c.Parent}]
			if p == nil || p.rawVersions[ch] != v {
				return c.ID
			}
			if id, ok := intros[p][ch]; ok {
				return id
			}
			c = p
		}
	}
	first := map[key]map[string]string{}           // oldest introducer of each (namespace, channel, version)
	for i := len(t.Checkpoints) - 1; i >= 0; i-- { // oldest first
		c := t.Checkpoints[i]
		own := map[string]string{}
		for ch, v := range c.rawVersions {
			own[ch] = intro(c, ch)
			k := key{c.NS, ch}
			if first[k] == nil {
				first[k] = map[string]string{}
			}
			if _, ok := first[k][v]; !ok {
				first[k][v] = own[ch]
			}
		}
		intros[c] = own
	}
	for _, c := range t.Checkpoints {
		for ch, v := range c.rawVersions {
			if first[key{c.NS, ch}][v] != intros[c][ch] {
				c.Shared = append(c.Shared, ch)
			}
		}
		sort.Strings(c.Shared)
	}
}

// decodeCheckpoint decodes one checkpoint, its values through vc (nil:
// no cache).
func (r *Reader) decodeCheckpoint(vc *valueCache, rc *rawCheckpoint, blobs map[blobKey]rawBlob) *Checkpoint {
	c := &Checkpoint{NS: rc.ns, ID: rc.id, Parent: rc.parent, Values: map[string]any{}}
	fail := func(err error) *Checkpoint {
		if c.Err == nil {
			c.Err = err
		}
		return c
	}
	md, err := decodeMetadata(rc.metaType, rc.meta)
	if err != nil {
		fail(fmt.Errorf("checkpoint %s: metadata: %w", rc.id, err))
	}
	c.Metadata = md
	var body any
	if rc.pre != nil {
		body, err = rc.pre.v, rc.pre.err
	} else {
		body, err = r.decodeBody(vc, rc.typ, rc.cp, blobs != nil)
	}
	if err != nil {
		return fail(fmt.Errorf("checkpoint %s: %w", rc.id, err))
	}
	m, ok := body.(map[string]any)
	if !ok {
		return fail(fmt.Errorf("checkpoint %s: not a checkpoint object", rc.id))
	}
	c.V = int(num(jsonNum(m["v"])))
	c.TS, _ = m["ts"].(string)
	if vals, ok := m["channel_values"].(map[string]any); ok {
		for k, v := range vals {
			c.Values[k] = v
		}
	}
	c.Versions = map[string]int64{}
	raw := map[string]string{}
	if vs, ok := m["channel_versions"].(map[string]any); ok {
		for ch, v := range vs {
			n, s, err := parseVersion(v)
			if err != nil {
				fail(fmt.Errorf("checkpoint %s: channel %q: %w", rc.id, ch, err))
				continue
			}
			c.Versions[ch], raw[ch] = n, s
		}
	}
	c.rawVersions = raw
	c.Seen = map[string]map[string]int64{}
	if seen, ok := m["versions_seen"].(map[string]any); ok {
		for node, vs := range seen {
			inner := map[string]int64{}
			vm, _ := vs.(map[string]any)
			for ch, v := range vm {
				if n, _, err := parseVersion(v); err == nil {
					inner[ch] = n
				}
			}
			c.Seen[node] = inner
		}
	}
	if up, ok := m["updated_channels"].([]any); ok {
		c.Updated = []string{}
		for _, u := range up {
			if s, ok := u.(string); ok {
				c.Updated = append(c.Updated, s)
			}
		}
	}
	if blobs != nil {
		for ch, ver := range raw {
			if _, inline := c.Values[ch]; inline {
				continue
			}
			b, ok := blobs[blobKey{rc.ns, ch, ver}]
			if !ok || b.typ == "empty" {
				continue
			}
			v, err := vc.decode(r, b.typ, b.data)
			if err != nil {
				v = note(fmt.Sprintf("unreadable: %v", err))
			}
			c.Values[ch] = v
		}
	}
	for _, w := range rc.writes {
		var v any
		var err error
		if w.pre != nil {
			v, err = w.pre.v, w.pre.err
		} else {
			v, err = vc.decode(r, w.typ, w.value)
		}
		if err != nil {
			v = note(fmt.Sprintf("unreadable: %v", err))
		}
		c.Writes = append(c.Writes, Write{TaskID: w.task, Channel: w.channel, Path: w.path, Idx: w.idx, Value: v})
	}
	sort.SliceStable(c.Writes, func(i, j int) bool {
		a, b := c.Writes[i], c.Writes[j]
		if a.TaskID != b.TaskID {
			return a.TaskID < b.TaskID
		}
		return a.Idx < b.Idx
	})
	return c
}

// decodeBody decodes a checkpoint row's body of serde type typ: JSON
// (LangGraph.js) with its channel values through vc, msgpack (Python), or,
// with jsonb, PostgreSQL's plain JSON.
func (r *Reader) decodeBody(vc *valueCache, typ string, b []byte, jsonb bool) (any, error) {
	switch {
	case !jsonb && typ == "json":
		return r.decodeJSONBody(vc, b)
	case !jsonb:
		return r.decodeValue(typ, b)
	}
	return decodeJSValue(b)
}

func jsonNum(v any) any {
	if n, ok := v.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return v
}

// parseVersion reads a LangGraph channel version: a JS number, a Python
// string "<counter>.<random>" (or, from old stores, an int). It returns the
// counter as Weft's int64 version and the text the PostgreSQL savers key
// their blobs by.
func parseVersion(v any) (int64, string, error) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseInt(x.String(), 10, 64)
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil {
				return 0, "", fmt.Errorf("version %v: %w", x, err)
			}
			n = int64(f)
		}
		return n << 32, x.String(), nil
	case string:
		head, _, _ := strings.Cut(x, ".")
		n, err := strconv.ParseInt(head, 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("version %q is not LangGraph's <counter>.<fraction>", x)
		}
		return n << 32, x, nil
	case float64:
		return int64(x) << 32, strconv.FormatInt(int64(x), 10), nil
	case int64:
		return x << 32, strconv.FormatInt(x, 10), nil
	case uint64:
		return int64(x) << 32, strconv.FormatUint(x, 10), nil
	}
	return 0, "", fmt.Errorf("version of type %T", v)
}

// decodeMetadata reads metadata: JSON in every layout (Python's SqliteSaver
// writes plain JSON whatever its type column says; JS tags it "json").
func decodeMetadata(typ string, b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		if typ == "msgpack" {
			v, merr := decodeMsgpack(b)
			if mm, ok := v.(map[string]any); merr == nil && ok {
				return mm, nil
			}
		}
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// metadataOf maps LangGraph metadata to Weft's.
func metadataOf(m map[string]any) checkpoint.Metadata {
	md := checkpoint.Metadata{Parents: map[string]string{}}
	for k, v := range m {
		switch k {
		case "source":
			if s, ok := v.(string); ok {
				md.Source = checkpoint.Source(s)
				continue
			}
		case "step":
			if f, ok := v.(float64); ok {
				md.Step = int(f)
				continue
			}
		case "parents":
			if p, ok := v.(map[string]any); ok {
				for ns, id := range p {
					if s, ok := id.(string); ok {
						md.Parents[ns] = s
					}
				}
				continue
			}
		case "run_id":
			if s, ok := v.(string); ok {
				md.RunID = s
				continue
			}
		}
		if md.Extra == nil {
			md.Extra = map[string]any{}
		}
		md.Extra[k] = v
	}
	return md
}

// Tuple converts a decoded checkpoint to Weft's.
func (c *Checkpoint) Tuple(threadID string) (*checkpoint.Tuple, error) {
	h, err := c.Header(threadID)
	if err != nil {
		return nil, err
	}
	t := &checkpoint.Tuple{
		Ref:      h.Ref,
		Metadata: h.Metadata,
		Checkpoint: checkpoint.Checkpoint{
			V: c.V, ID: c.ID, TS: h.TS, ChannelValues: map[string][]byte{},
			ChannelVersions: c.Versions, VersionsSeen: c.Seen,
		},
		Parent:        h.Parent,
		PendingWrites: []checkpoint.PendingWrite{},
	}
	if c.Updated != nil {
		t.Checkpoint.UpdatedChannels = append([]string{}, c.Updated...)
		sort.Strings(t.Checkpoint.UpdatedChannels)
	}
	for k, v := range c.Values {
		b, err := encodeJSON(v)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: channel %q: %w", c.ID, k, err)
		}
		t.Checkpoint.ChannelValues[k] = b
	}
	for _, w := range c.Writes {
		b, err := encodeJSON(w.Value)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: write %q: %w", c.ID, w.Channel, err)
		}
		t.PendingWrites = append(t.PendingWrites, checkpoint.PendingWrite{TaskID: w.TaskID, Channel: w.Channel, Value: b, TaskPath: w.Path})
	}
	return t, nil
}

// Header is the checkpoint's header as Tuple gives it (ref, parent, time,
// metadata with what ran and the flagged shared blobs), without encoding
// its values: what a timeline lists.
func (c *Checkpoint) Header(threadID string) (checkpoint.Header, error) {
	if c.Err != nil {
		return checkpoint.Header{}, c.Err
	}
	h := checkpoint.Header{Ref: checkpoint.Ref{ThreadID: threadID, NS: c.NS, CheckpointID: c.ID}, Metadata: metadataOf(c.Metadata)}
	h.TS, _ = time.Parse(time.RFC3339Nano, c.TS)
	if c.Ran != nil {
		h.Metadata.Tasks = append([]string{}, c.Ran...)
	}
	if c.Shared != nil {
		// Shown with the checkpoint's metadata, where the studio and the
		// commands show what is known about it.
		if h.Metadata.Extra == nil {
			h.Metadata.Extra = map[string]any{}
		}
		shared := make([]any, len(c.Shared))
		for i, s := range c.Shared {
			shared[i] = s
		}
		h.Metadata.Extra[SharedBlobsKey] = shared
	}
	if c.Parent != "" {
		h.Parent = &checkpoint.Ref{ThreadID: threadID, NS: c.NS, CheckpointID: c.Parent}
	}
	return h, nil
}

// Headers lists the thread's checkpoint headers as ListHeaders selects
// them (opts.NS, Before, Filter and Limit; ThreadID is ignored), newest
// first, from the decoded thread: no value is encoded. A checkpoint that
// could not be decoded is an error, as List yields it.
func (t *Thread) Headers(opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	conds, err := record.CompileFilter(opts.Filter)
	if err != nil {
		return nil, err
	}
	out := []checkpoint.Header{}
	for _, c := range t.Checkpoints {
		if opts.NS != nil && c.NS != *opts.NS || opts.Before != "" && c.ID >= opts.Before {
			continue
		}
		h, err := c.Header(t.ID)
		if err != nil {
			return nil, err
		}
		if len(conds) > 0 && !record.MatchMetadata(&h.Metadata, conds) {
			continue
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Ref.CheckpointID > out[j].Ref.CheckpointID })
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// pointReader is a backend that can read one checkpoint and its parent
// without the rest of the thread.
type pointReader interface {
	checkpoints(ctx context.Context, threadID, ns, id string) (*rawThread, error)
}

// Get returns a checkpoint, or the newest of its thread and namespace.
func (r *Reader) Get(ctx context.Context, ref checkpoint.Ref) (*checkpoint.Tuple, error) {
	if ref.ThreadID == "" {
		return nil, checkpoint.ErrNoThread
	}
	if pr, ok := r.b.(pointReader); ok {
		raw, err := pr.checkpoints(ctx, ref.ThreadID, ref.NS, ref.CheckpointID)
		if err != nil {
			return nil, err
		}
		t := r.decodeThread(ref.ThreadID, raw)
		for _, c := range t.Checkpoints {
			if ref.CheckpointID == "" && c.ID != t.Checkpoints[0].ID {
				continue // the parent, read for what ran
			}
			if ref.CheckpointID == "" || c.ID == ref.CheckpointID {
				return c.Tuple(ref.ThreadID)
			}
		}
		return nil, checkpoint.ErrNotFound
	}
	t, err := r.ReadThread(ctx, ref.ThreadID)
	if err != nil {
		return nil, err
	}
	for _, c := range t.Checkpoints {
		if c.NS == ref.NS && (ref.CheckpointID == "" || c.ID == ref.CheckpointID) {
			return c.Tuple(ref.ThreadID)
		}
	}
	return nil, checkpoint.ErrNotFound
}

// List yields matching checkpoints newest first (by id, across namespaces).
func (r *Reader) List(ctx context.Context, opts checkpoint.ListOptions) iter.Seq2[*checkpoint.Tuple, error] {
	return func(yield func(*checkpoint.Tuple, error) bool) {
		conds, err := record.CompileFilter(opts.Filter)
		if err != nil {
			yield(nil, err)
			return
		}
		ids := []string{opts.ThreadID}
		if opts.ThreadID == "" {
			rows, err := r.b.threads(ctx)
			if err != nil {
				yield(nil, err)
				return
			}
			ids = ids[:0]
			for _, row := range rows {
				ids = append(ids, row.id)
			}
			sort.Strings(ids)
		}
		var all []*checkpoint.Tuple
		for _, id := range ids {
			t, err := r.ReadThread(ctx, id)
			if errors.Is(err, checkpoint.ErrNotFound) {
				continue
			}
			if err != nil {
				yield(nil, err)
				return
			}
			for _, c := range t.Checkpoints {
				if opts.NS != nil && c.NS != *opts.NS || opts.Before != "" && c.ID >= opts.Before {
					continue
				}
				tu, err := c.Tuple(id)
				if err != nil {
					if !yield(nil, err) {
						return
					}
					continue
				}
				if len(conds) > 0 && !record.MatchMetadata(&tu.Metadata, conds) {
					continue
				}
				all = append(all, tu)
			}
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].Ref.CheckpointID > all[j].Ref.CheckpointID })
		for i, tu := range all {
			if opts.Limit > 0 && i == opts.Limit {
				return
			}
			if !yield(tu, nil) {
				return
			}
		}
	}
}

// ListHeaders lists checkpoint headers newest first, as List selects them.
// A thread's are read from it decoded (Thread.Headers), with no value
// encoded as List's tuples need.
func (r *Reader) ListHeaders(ctx context.Context, opts checkpoint.ListOptions) ([]checkpoint.Header, error) {
	if opts.ThreadID != "" {
		t, err := r.ReadThread(ctx, opts.ThreadID)
		if errors.Is(err, checkpoint.ErrNotFound) {
			return []checkpoint.Header{}, nil // as List yields nothing
		}
		if err != nil {
			return nil, err
		}
		return t.Headers(opts)
	}
	out := []checkpoint.Header{}
	for t, err := range r.List(ctx, opts) {
		if err != nil {
			return nil, err
		}
		out = append(out, checkpoint.Header{Ref: t.Ref, Parent: t.Parent, TS: t.Checkpoint.TS, Metadata: t.Metadata})
	}
	return out, nil
}

// ListThreads lists threads newest first by their newest root checkpoint.
func (r *Reader) ListThreads(ctx context.Context, limit int) ([]checkpoint.ThreadInfo, error) {
	page, err := r.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: limit})
	return page.Threads, err
}

// SearchThreads lists a page of threads (see checkpoint.ThreadSearcher).
func (r *Reader) SearchThreads(ctx context.Context, q checkpoint.ThreadQuery) (checkpoint.ThreadPage, error) {
	conds, err := record.CompileFilter(q.Filter)
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	rows, err := r.b.threads(ctx)
	if err != nil {
		return checkpoint.ThreadPage{}, err
	}
	infos := make([]checkpoint.ThreadInfo, 0, len(rows))
	for _, row := range rows {
		info := checkpoint.ThreadInfo{ThreadID: row.id, Checkpoints: row.count,
			Latest: checkpoint.Ref{ThreadID: row.id, CheckpointID: row.latest}}
		if m, err := decodeMetadata(row.metaType, row.meta); err != nil {
			info.Err = fmt.Errorf("thread %q: checkpoint %s: metadata: %w", row.id, row.latest, err)
		} else {
			info.LatestMeta = metadataOf(m)
		}
		info.UpdatedAt = idTime(row.latest)
		infos = append(infos, info)
	}
	sort.Slice(infos, func(i, j int) bool {
		a, b := infos[i], infos[j]
		if a.Latest.CheckpointID != b.Latest.CheckpointID {
			return a.Latest.CheckpointID > b.Latest.CheckpointID
		}
		return a.ThreadID < b.ThreadID
	})
	return checkpoint.PageThreads(infos, q, func(md *checkpoint.Metadata) bool { return record.MatchMetadata(md, conds) }), nil
}

// idTime is the time in a LangGraph checkpoint id: a UUIDv6 (its 60-bit
// Gregorian timestamp, 100 ns since 1582-10-15), so the thread list needs no
// checkpoint body. A non-v6 id gives the zero time.
func idTime(id string) time.Time {
	h := strings.ReplaceAll(id, "-", "")
	if len(h) != 32 || h[12] != '6' {
		return time.Time{}
	}
	hi, err1 := strconv.ParseUint(h[:12], 16, 64)
	lo, err2 := strconv.ParseUint(h[13:16], 16, 64)
	if err1 != nil || err2 != nil {
		return time.Time{}
	}
	ticks := hi<<12 | lo
	const gregorianToUnix = 122192928000000000
	return time.Unix(0, 0).Add(time.Duration(int64(ticks)-gregorianToUnix) * 100).UTC()
}

var _ interface {
	checkpoint.Saver
	checkpoint.ThreadLister
	checkpoint.ThreadSearcher
	checkpoint.HeaderLister
	checkpoint.StatsReporter
} = (*Reader)(nil)
