package langgraph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/report"
)

// A storage report of a LangGraph store says where its bytes go in Weft's
// terms (checkpoint.StorageReporter), counted as each layout stores them:
//
//   - Headers: each checkpoint row's checkpoint id, parent id, checkpoint
//     body and metadata, less the channel values inside the body.
//   - Values: the channel values. The SqliteSavers keep every channel's
//     value inside every checkpoint row (the whole state, again and again);
//     Python's PostgresSaver keeps primitive values inline in the row and
//     the rest in checkpoint_blobs, one row per (channel, version);
//     LangGraph.js' PostgresSaver keeps them all in checkpoint_blobs.
//   - Writes: the values of checkpoint writes.
//
// Values inside rows are measured by walking each body's encoding (msgpack
// or JSON) for the byte span of every value, without decoding the values.
// A value a checkpoint row carries that its parent's row already carries
// (same channel, same version: the channel did not change in between) is
// duplicated state: what a store keeping each version once would not hold.
// It is by parent, not by version alone, because LangGraph.js numbers
// versions per thread, so two forks may give one version different values.

// StateBytes are the channel values stored inside checkpoint rows. The
// zero value is a store keeping none there (LangGraph.js' PostgresSaver).
type StateBytes struct {
	// Values and Bytes count every copy; Duplicated* those of them that
	// repeat the value the checkpoint's parent carries (same channel and
	// version). Bytes − DuplicatedBytes is what keeping each version once
	// would take.
	Values           int64 `json:"values"`
	Bytes            int64 `json:"bytes"`
	DuplicatedValues int64 `json:"duplicated_values"`
	DuplicatedBytes  int64 `json:"duplicated_bytes"`
}

func (s *StateBytes) add(o StateBytes) {
	s.Values += o.Values
	s.Bytes += o.Bytes
	s.DuplicatedValues += o.DuplicatedValues
	s.DuplicatedBytes += o.DuplicatedBytes
}

// Count counts stored values and their bytes.
type Count struct {
	Values int64 `json:"values"`
	Bytes  int64 `json:"bytes"`
}

// ThreadState is one thread's StateBytes.
type ThreadState struct {
	ThreadID    string `json:"thread_id"`
	Checkpoints int64  `json:"checkpoints"`
	StateBytes
}

// ChannelState is one channel's StateBytes, across the store or a thread.
type ChannelState struct {
	Channel string `json:"channel"`
	StateBytes
}

// Storage is a LangGraph store's storage report: Weft's summary, and what
// only a LangGraph store has.
type Storage struct {
	checkpoint.StorageSummary
	// Layout names the store's kind.
	Layout Kind `json:"layout"`
	// State is the channel values inside checkpoint rows, and how much of
	// it is duplicated.
	State StateBytes `json:"state_in_checkpoint_rows"`
	// MostDuplicated are the Top threads with the most duplicated state
	// bytes, most first (ties by id); empty when none has any.
	MostDuplicated []ThreadState `json:"most_duplicated_threads"`
	// Channels' duplicated state, most first; nil unless Deep.
	DuplicatedChannels []ChannelState `json:"duplicated_channels,omitempty"`
	// Unreferenced counts the stored values (PostgreSQL blobs) no
	// checkpoint's channel versions name: they are in the totals, and in no
	// checkpoint's bytes.
	Unreferenced Count `json:"unreferenced_values"`
	// Latest is what the newest checkpoint of each thread and namespace
	// needs: its row, every value it names (however many rows share a
	// blob) and its writes. It is what keeping only the latest state
	// would keep; the rest of Bytes is the history LangGraph keeps for
	// time travel, which only LangGraph may prune.
	Latest checkpoint.ByteCounts `json:"latest_checkpoints"`
	// Unmeasured counts checkpoint rows whose body could not be walked
	// (encrypted without the key, or damaged): each counts whole as a
	// header.
	Unmeasured int64 `json:"unmeasured_checkpoints,omitempty"`
	// Notes say in words what the numbers mean for this store.
	Notes []string `json:"notes"`
}

// ThreadReport is one thread's storage report: Weft's, and what only a
// LangGraph store has.
type ThreadReport struct {
	checkpoint.ThreadStorage
	// Layout, State, Unreferenced, Latest, Unmeasured and Notes are as in
	// Storage, for this thread.
	Layout Kind       `json:"layout"`
	State  StateBytes `json:"state_in_checkpoint_rows"`
	// DuplicatedChannels are the thread's channels' StateBytes, most
	// duplicated first (ties by bytes, then name).
	DuplicatedChannels []ChannelState        `json:"duplicated_channels"`
	Unreferenced       Count                 `json:"unreferenced_values"`
	Latest             checkpoint.ByteCounts `json:"latest_checkpoints"`
	Unmeasured         int64                 `json:"unmeasured_checkpoints,omitempty"`
	Notes              []string              `json:"notes"`
}

// sizeScan is what a backend reads for a storage report: sizes, and of the
// checkpoint rows their channel versions and the spans of the values
// inside them.
type sizeScan struct {
	cps    []cpSize
	blobs  []blobSize
	writes []writeSize
	// pages of the store (see checkpoint.StorageSummary).
	fileBytes, freeBytes int64
	tables               []checkpoint.TableBytes
}

type cpSize struct {
	thread, ns, id string
	parent         string
	step           int
	header         int64
	inRow          []valSize
	versions       map[string]string // channel → version as stored
	unmeasured     bool
}

type valSize struct {
	channel, version string
	bytes            int64
}

type blobSize struct {
	thread, ns, channel, version string
	bytes                        int64
}

type writeSize struct {
	thread, ns, id, channel string
	bytes                   int64
}

// sizer is a backend that reads sizes for a storage report: of one
// thread, or of every thread when threadID is "".
type sizer interface {
	sizes(ctx context.Context, threadID string, deep bool) (*sizeScan, error)
}

// StorageSummary describes the whole store (checkpoint.StorageReporter):
// Weft's part of StorageReport.
func (r *Reader) StorageSummary(ctx context.Context, opts checkpoint.StorageOptions) (*checkpoint.StorageSummary, error) {
	s, err := r.StorageReport(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &s.StorageSummary, nil
}

// ThreadStorage describes one thread (checkpoint.StorageReporter): Weft's
// part of ThreadStorageReport.
func (r *Reader) ThreadStorage(ctx context.Context, threadID string, opts checkpoint.StorageOptions) (*checkpoint.ThreadStorage, error) {
	t, err := r.ThreadStorageReport(ctx, threadID, opts)
	if err != nil {
		return nil, err
	}
	return &t.ThreadStorage, nil
}

// StorageReport describes the whole store. Unlike Weft's stores, it reads
// every checkpoint row's body (to measure the values inside it), so its
// cost grows with the store's checkpoint bytes; it never decodes a value.
func (r *Reader) StorageReport(ctx context.Context, opts checkpoint.StorageOptions) (*Storage, error) {
	opts = opts.WithDefaults()
	sc, err := r.b.(sizer).sizes(ctx, "", opts.Deep)
	if err != nil {
		return nil, fmt.Errorf("storage report of %s: %w", r.kind, err)
	}
	out := &Storage{Layout: r.kind}
	out.Engine = r.engine()
	out.FileBytes, out.FreeBytes, out.Tables = sc.fileBytes, sc.freeBytes, sc.tables
	tally := report.NewTally()
	threads := attribute(sc)
	var states []ThreadState
	chState := map[string]*StateBytes{}
	for _, t := range threads {
		first, last := t.cps[0].id, t.cps[0].id
		for _, c := range t.cps { // sorted by namespace first
			first, last = min(first, c.id), max(last, c.id)
		}
		life := &report.Lifetime{Checkpoints: int64(len(t.cps)), First: idTime(first), Last: idTime(last)}
		for _, c := range t.items {
			life.Bytes.Headers += c.Bytes.Headers
		}
		tally.Threads[t.id] = life
		tally.Values[t.id] = t.values
		tally.Writes[t.id] = t.writeSizes
		tally.Largest = append(tally.Largest, report.TopValues(t.largest, 1)...)
		for ch, v := range t.chValues {
			sz := tally.ChValues[ch]
			sz.Add(v.N, v.Bytes)
			tally.ChValues[ch] = sz
		}
		for ch, v := range t.chWrites {
			sz := tally.ChWrites[ch]
			sz.Add(v.N, v.Bytes)
			tally.ChWrites[ch] = sz
		}
		for ch, s := range t.chState {
			if chState[ch] == nil {
				chState[ch] = &StateBytes{}
			}
			chState[ch].add(*s)
		}
		out.State.add(t.state)
		out.Unreferenced.Values += t.unreferenced.N
		out.Unreferenced.Bytes += t.unreferenced.Bytes
		out.Latest = out.Latest.Add(t.latest)
		out.Unmeasured += t.unmeasured
		if t.state.DuplicatedBytes > 0 {
			states = append(states, ThreadState{ThreadID: t.id, Checkpoints: int64(len(t.cps)), StateBytes: t.state})
		}
	}
	tally.Summarize(&out.StorageSummary, opts)
	slices.SortFunc(states, func(a, b ThreadState) int {
		return cmp.Or(cmp.Compare(b.DuplicatedBytes, a.DuplicatedBytes), cmp.Compare(a.ThreadID, b.ThreadID))
	})
	out.MostDuplicated = states[:min(len(states), opts.Top)]
	if opts.Deep {
		out.DuplicatedChannels = channelStates(chState)
	}
	out.Notes = r.notes(out.State, out.Bytes, out.Latest, out.Unmeasured)
	return out, nil
}

// ThreadStorageReport describes one thread, all namespaces, reading only
// its rows. A thread with no checkpoint returns an error wrapping
// checkpoint.ErrNotFound.
func (r *Reader) ThreadStorageReport(ctx context.Context, threadID string, opts checkpoint.StorageOptions) (*ThreadReport, error) {
	if threadID == "" {
		return nil, fmt.Errorf("thread storage: %w", checkpoint.ErrNoThread)
	}
	opts = opts.WithDefaults()
	sc, err := r.b.(sizer).sizes(ctx, threadID, false)
	if err != nil {
		return nil, fmt.Errorf("storage report of thread %q: %w", threadID, err)
	}
	threads := attribute(sc)
	if len(threads) == 0 {
		return nil, fmt.Errorf("thread %q: %w", threadID, checkpoint.ErrNotFound)
	}
	t := threads[0]
	out := &ThreadReport{Layout: r.kind, State: t.state, Unreferenced: Count{t.unreferenced.N, t.unreferenced.Bytes}, Latest: t.latest, Unmeasured: t.unmeasured}
	ts := &out.ThreadStorage
	ts.ThreadID = threadID
	ts.Checkpoints = int64(len(t.cps))
	ts.Values, ts.Writes = t.values.N, t.writeSizes.N
	ts.Bytes = checkpoint.ByteCounts{Values: t.values.Bytes, Writes: t.writeSizes.Bytes}
	nss := map[string]bool{}
	for _, c := range t.cps {
		nss[c.ns] = true
	}
	ts.Namespaces = len(nss)
	for _, it := range t.items {
		ts.Bytes.Headers += it.Bytes.Headers
	}
	ts.Channels = report.Channels(t.chValues, t.chWrites)
	ts.LargestValues = report.TopValues(t.largest, opts.Top)
	items := slices.Clone(t.items)
	ts.Growth = report.StepGrowth(items, opts.Points)
	slices.SortFunc(items, func(a, b checkpoint.CheckpointBytes) int {
		return cmp.Or(cmp.Compare(b.Ref.CheckpointID, a.Ref.CheckpointID), cmp.Compare(a.Ref.NS, b.Ref.NS))
	})
	if opts.Checkpoints > 0 && len(items) > opts.Checkpoints {
		items = items[:opts.Checkpoints]
	}
	ts.Newest = items
	out.DuplicatedChannels = channelStates(t.chState)
	out.Notes = r.notes(out.State, ts.Bytes, out.Latest, out.Unmeasured)
	return out, nil
}

func (r *Reader) engine() string {
	if r.kind == PythonPostgres || r.kind == JSPostgres {
		return "postgres"
	}
	return "sqlite"
}

// notes say what a report's numbers mean for this store, in words.
func (r *Reader) notes(st StateBytes, b, latest checkpoint.ByteCounts, unmeasured int64) []string {
	var out []string
	switch r.kind {
	case PythonSQLite, JSSQLite:
		out = append(out, fmt.Sprintf("%s keeps the whole state in every checkpoint row: %d of the %d bytes of channel values (%s) are copies of the value the checkpoint's parent already carries (duplicated state)",
			r.kind, st.DuplicatedBytes, st.Bytes, percent(st.DuplicatedBytes, st.Bytes)))
	case PythonPostgres:
		out = append(out, fmt.Sprintf("%s keeps each non-primitive value once in checkpoint_blobs and primitive values inline in every checkpoint row: %d of the %d inline bytes are duplicated state",
			r.kind, st.DuplicatedBytes, st.Bytes))
	case JSPostgres:
		out = append(out, fmt.Sprintf("%s keeps each channel version once in checkpoint_blobs: checkpoint rows carry no values, so no state is duplicated", r.kind))
	}
	if total := b.Total(); total > 0 && latest.Total() > 0 {
		out = append(out, fmt.Sprintf("the newest checkpoint of each thread (and subgraph) needs %d bytes (%s); the other %d are history LangGraph keeps for time travel",
			latest.Total(), percent(latest.Total(), total), max(total-latest.Total(), 0)))
	}
	if unmeasured > 0 {
		out = append(out, fmt.Sprintf("%d checkpoint rows could not be walked (encrypted without the key, or damaged): their values count as headers", unmeasured))
	}
	if b.Total() > 0 {
		out = append(out, fmt.Sprintf("of %d bytes: headers %s, values %s, writes %s", b.Total(), percent(b.Headers, b.Total()), percent(b.Values, b.Total()), percent(b.Writes, b.Total())))
	}
	out = append(out, "Weft only reads this store: it prunes, deletes and vacuums nothing here; removing threads or checkpoints is for LangGraph (its checkpointer's delete_thread, or a LangGraph server)")
	return out
}

func percent(a, b int64) string {
	if b == 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

func channelStates(m map[string]*StateBytes) []ChannelState {
	out := []ChannelState{}
	for ch, s := range m {
		if s.Values > 0 {
			out = append(out, ChannelState{Channel: ch, StateBytes: *s})
		}
	}
	slices.SortFunc(out, func(a, b ChannelState) int {
		return cmp.Or(cmp.Compare(b.DuplicatedBytes, a.DuplicatedBytes), cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(a.Channel, b.Channel))
	})
	return out
}

// threadSizes is one thread's sizes, attributed to its checkpoints.
type threadSizes struct {
	id                 string
	cps                []*cpSize // by namespace, then id (oldest first)
	items              []checkpoint.CheckpointBytes
	values, writeSizes report.Sizes
	chValues, chWrites map[string]report.Sizes
	chState            map[string]*StateBytes
	state              StateBytes
	unreferenced       report.Sizes
	latest             checkpoint.ByteCounts
	largest            []checkpoint.ValueSize
	unmeasured         int64
}

// attribute groups a scan by thread (sorted by id) and attributes every
// size to a checkpoint: its row's header and in-row values to the row, a
// blob to the oldest checkpoint naming its version, a write to the
// checkpoint it was stored against.
func attribute(sc *sizeScan) []*threadSizes {
	byID := map[string]*threadSizes{}
	get := func(id string) *threadSizes {
		t := byID[id]
		if t == nil {
			t = &threadSizes{id: id, chValues: map[string]report.Sizes{}, chWrites: map[string]report.Sizes{}, chState: map[string]*StateBytes{}}
			byID[id] = t
		}
		return t
	}
	for i := range sc.cps {
		t := get(sc.cps[i].thread)
		t.cps = append(t.cps, &sc.cps[i])
	}
	type at struct{ ns, id string }
	for _, t := range byID {
		slices.SortFunc(t.cps, func(a, b *cpSize) int { return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.id, b.id)) })
	}
	index := map[string]map[at]int{}
	// first checkpoint (oldest) naming each (namespace, channel, version)
	firstOf := map[string]map[blobKey]int{}
	for id, t := range byID {
		index[id] = map[at]int{}
		firstOf[id] = map[blobKey]int{}
		for i, c := range t.cps {
			index[id][at{c.ns, c.id}] = i
		}
		for i, c := range t.cps {
			var parent map[string]int64 // channel → bytes of its value in the parent's row, when of this version
			if pi, ok := index[id][at{c.ns, c.parent}]; ok && c.parent != "" {
				parent = map[string]int64{}
				for _, v := range t.cps[pi].inRow {
					if c.versions[v.channel] == v.version {
						parent[v.channel] = v.bytes
					}
				}
			}
			item := checkpoint.CheckpointBytes{Ref: checkpoint.Ref{ThreadID: id, NS: c.ns, CheckpointID: c.id}, Step: c.step,
				TS: idTime(c.id), Bytes: checkpoint.ByteCounts{Headers: c.header}}
			for ch, v := range c.versions {
				k := blobKey{c.ns, ch, v}
				if _, ok := firstOf[id][k]; !ok {
					firstOf[id][k] = i
				}
			}
			if c.unmeasured {
				t.unmeasured++
			}
			for _, v := range c.inRow {
				st := StateBytes{Values: 1, Bytes: v.bytes}
				if _, copied := parent[v.channel]; copied {
					st.DuplicatedValues, st.DuplicatedBytes = 1, v.bytes
				} else {
					t.largest = append(t.largest, valueSize(id, c.ns, v.channel, v.version, v.bytes))
				}
				t.state.add(st)
				if t.chState[v.channel] == nil {
					t.chState[v.channel] = &StateBytes{}
				}
				t.chState[v.channel].add(st)
				item.Values++
				item.Bytes.Values += v.bytes
				t.values.Add(1, v.bytes)
				addSize(t.chValues, v.channel, v.bytes)
			}
			t.items = append(t.items, item)
		}
	}
	for _, b := range sc.blobs {
		t := get(b.thread)
		t.values.Add(1, b.bytes)
		addSize(t.chValues, b.channel, b.bytes)
		t.largest = append(t.largest, valueSize(b.thread, b.ns, b.channel, b.version, b.bytes))
		if i, ok := firstOf[b.thread][blobKey{b.ns, b.channel, b.version}]; ok {
			t.items[i].Values++
			t.items[i].Bytes.Values += b.bytes
		} else {
			t.unreferenced.Add(1, b.bytes)
		}
	}
	blobBytes := map[string]map[blobKey]int64{}
	for _, b := range sc.blobs {
		if blobBytes[b.thread] == nil {
			blobBytes[b.thread] = map[blobKey]int64{}
		}
		blobBytes[b.thread][blobKey{b.ns, b.channel, b.version}] = b.bytes
	}
	for _, w := range sc.writes {
		t := get(w.thread)
		t.writeSizes.Add(1, w.bytes)
		addSize(t.chWrites, w.channel, w.bytes)
		if i, ok := index[w.thread][at{w.ns, w.id}]; ok {
			t.items[i].Writes++
			t.items[i].Bytes.Writes += w.bytes
		}
	}
	for id, t := range byID {
		for i, c := range t.cps { // by namespace, then id: each namespace's last is its newest
			if i+1 < len(t.cps) && t.cps[i+1].ns == c.ns {
				continue
			}
			l := checkpoint.ByteCounts{Headers: c.header, Writes: t.items[i].Bytes.Writes}
			inRow := map[string]bool{}
			for _, v := range c.inRow {
				l.Values += v.bytes
				inRow[v.channel] = true
			}
			for ch, ver := range c.versions {
				if !inRow[ch] {
					l.Values += blobBytes[id][blobKey{c.ns, ch, ver}]
				}
			}
			t.latest = t.latest.Add(l)
		}
	}
	out := make([]*threadSizes, 0, len(byID))
	for _, t := range byID {
		if len(t.cps) > 0 { // rows of a thread without checkpoints are not a thread
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *threadSizes) int { return cmp.Compare(a.id, b.id) })
	return out
}

func addSize(m map[string]report.Sizes, k string, b int64) {
	s := m[k]
	s.Add(1, b)
	m[k] = s
}

func valueSize(thread, ns, ch, version string, b int64) checkpoint.ValueSize {
	var v int64
	if version != "" {
		var x any = version
		if !strings.Contains(version, ".") {
			x = json.Number(version)
		}
		v, _, _ = parseVersion(x)
	}
	return checkpoint.ValueSize{ThreadID: thread, NS: ns, Channel: ch, Version: v, Bytes: b}
}

// measureBody finds the channel values inside a checkpoint body as stored
// (serde type typ: "msgpack" or "json"; PostgreSQL's JSONB as text is
// "json"): the byte span of each and the versions of every channel. It
// never decodes a value.
func measureBody(typ string, body []byte) (vals []valSize, versions map[string]string, err error) {
	switch typ {
	case "json":
		return measureJSON(body)
	case "msgpack":
		return measureMsgpack(body)
	}
	return nil, nil, fmt.Errorf("a checkpoint stored as %q cannot be measured", typ)
}

// measureJSON finds the values of a JSON checkpoint body with a scanner
// of its own: it only skips over values, which is several times faster
// than encoding/json's decoding into raw messages on a store of
// gigabytes, and it checks the syntax of what it skips.
func measureJSON(body []byte) ([]valSize, map[string]string, error) {
	sc := jsonScan{b: body}
	var vals []valSize
	versions := map[string]string{}
	spans := map[string]int64{}
	err := sc.object(func(key string) error {
		switch key {
		case "channel_values":
			return sc.object(func(ch string) error {
				start := sc.i
				if err := sc.skip(0); err != nil {
					return fmt.Errorf("channel_values[%q]: %w", ch, err)
				}
				spans[ch] = int64(sc.i - start)
				return nil
			})
		case "channel_versions":
			return sc.object(func(ch string) error {
				start := sc.i
				if err := sc.skip(0); err != nil {
					return fmt.Errorf("channel_versions[%q]: %w", ch, err)
				}
				v := string(body[start:sc.i])
				if strings.HasPrefix(v, `"`) {
					if err := json.Unmarshal(body[start:sc.i], &v); err != nil {
						return err
					}
				}
				versions[ch] = v
				return nil
			})
		}
		return sc.skip(0)
	})
	if err != nil {
		return nil, nil, err
	}
	if sc.ws(); sc.i != len(body) {
		return nil, nil, fmt.Errorf("data after the checkpoint at byte %d", sc.i)
	}
	for ch, n := range spans {
		vals = append(vals, valSize{channel: ch, version: versions[ch], bytes: n})
	}
	return vals, versions, nil
}

// jsonScan walks JSON text without decoding it.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jsonScan) errorf(what string) error {
	return fmt.Errorf("invalid JSON at byte %d: %s", s.i, what)
}

// object reads an object, calling member with each key when the scanner
// stands at its value; member must consume the value.
func (s *jsonScan) object(member func(key string) error) error {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return s.errorf("not an object")
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return nil
	}
	for {
		s.ws()
		start := s.i
		if err := s.str(); err != nil {
			return err
		}
		key := string(s.b[start+1 : s.i-1])
		if strings.IndexByte(key, '\\') >= 0 {
			if err := json.Unmarshal(s.b[start:s.i], &key); err != nil {
				return err
			}
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return s.errorf("no colon after a key")
		}
		s.i++
		s.ws()
		if err := member(key); err != nil {
			return err
		}
		s.ws()
		if s.i >= len(s.b) {
			return s.errorf("unterminated object")
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return nil
		default:
			return s.errorf("neither comma nor end of object")
		}
	}
}

// str skips a string, the scanner standing at its opening quote. It looks
// for the closing quote only (bytes.IndexByte, fast on long values): the
// measuring walk leaves validating a string's contents to decoding.
func (s *jsonScan) str() error {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return s.errorf("not a string")
	}
	for j := s.i + 1; ; {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			return s.errorf("unterminated string")
		}
		j += k
		esc := 0 // backslashes right before the quote: odd escapes it
		for esc < j && s.b[j-1-esc] == '\\' {
			esc++
		}
		j++
		if esc%2 == 0 {
			s.i = j
			return nil
		}
	}
}

// skip skips one value, the scanner standing at it.
func (s *jsonScan) skip(depth int) error {
	if depth > maxDepth {
		return s.errorf("nested too deeply")
	}
	if s.i >= len(s.b) {
		return s.errorf("no value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{':
		return s.object(func(string) error { return s.skip(depth + 1) })
	case c == '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return nil
		}
		for {
			s.ws()
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.i >= len(s.b) {
				return s.errorf("unterminated array")
			}
			if s.b[s.i] == ']' {
				s.i++
				return nil
			}
			if s.b[s.i] != ',' {
				return s.errorf("neither comma nor end of array")
			}
			s.i++
		}
	case c == '-' || c >= '0' && c <= '9':
		start := s.i
		for s.i < len(s.b) && strings.IndexByte("+-.eE0123456789", s.b[s.i]) >= 0 {
			s.i++
		}
		if !json.Valid(s.b[start:s.i]) {
			return s.errorf("not a number")
		}
		return nil
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
			s.i += len(lit)
			return nil
		}
	}
	return s.errorf("not a value")
}

func measureMsgpack(body []byte) ([]valSize, map[string]string, error) {
	br := bytes.NewReader(body)
	d := msgpack.NewDecoder(br)
	pos := func() int64 { return int64(len(body) - br.Len()) }
	n, err := d.DecodeMapLen()
	if err != nil {
		return nil, nil, fmt.Errorf("not a msgpack map: %w", err)
	}
	spans := map[string]int64{}
	versions := map[string]string{}
	for range n {
		key, err := d.DecodeString()
		if err != nil {
			return nil, nil, err
		}
		switch key {
		case "channel_values":
			m, err := d.DecodeMapLen()
			if err != nil {
				return nil, nil, fmt.Errorf("channel_values: %w", err)
			}
			for range m {
				ch, err := d.DecodeString()
				if err != nil {
					return nil, nil, fmt.Errorf("channel_values: %w", err)
				}
				start := pos()
				if err := d.Skip(); err != nil {
					return nil, nil, fmt.Errorf("channel_values[%q]: %w", ch, err)
				}
				spans[ch] = pos() - start
			}
		case "channel_versions":
			m, err := d.DecodeMapLen()
			if err != nil {
				return nil, nil, fmt.Errorf("channel_versions: %w", err)
			}
			for range m {
				ch, err := d.DecodeString()
				if err != nil {
					return nil, nil, fmt.Errorf("channel_versions: %w", err)
				}
				v, err := d.DecodeInterfaceLoose()
				if err != nil {
					return nil, nil, fmt.Errorf("channel_versions[%q]: %w", ch, err)
				}
				versions[ch] = fmt.Sprint(v)
			}
		default:
			if err := d.Skip(); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", key, err)
			}
		}
	}
	if br.Len() != 0 {
		return nil, nil, errors.New("data after the checkpoint")
	}
	vals := make([]valSize, 0, len(spans))
	for ch, b := range spans {
		vals = append(vals, valSize{channel: ch, version: versions[ch], bytes: b})
	}
	return vals, versions, nil
}

var (
	_ checkpoint.StorageReporter = (*Reader)(nil)
	_ sizer                      = (*sqliteBackend)(nil)
	_ sizer                      = (*pgBackend)(nil)
	_ pointReader                = (*sqliteBackend)(nil)
	_ pointReader                = (*pgBackend)(nil)
)
