package checkpointtest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

func putCases() []testCase {
	var cs []testCase
	cs = append(cs, perNS("returns_ref", putReturnsRef)...)
	cs = append(cs, perNS("stored_unaltered", putStoredUnaltered)...)
	cs = append(cs, perNS("only_stores_values_changed_per_new_versions", putOnlyChanged)...)
	cs = append(cs, []testCase{
		{name: "roundtrip", run: putRoundtrip},
		{name: "values_kept_as_bytes", run: putValuesAsBytes},
		{name: "channel_versions_kept", run: putVersions},
		{name: "versions_seen_kept", run: putVersionsSeen},
		{name: "updated_channels_kept", run: putUpdatedChannels},
		{name: "metadata_kept", run: putMetadata},
		{name: "nested_metadata_kept", run: putNestedMetadata},
		{name: "run_id_kept", run: putRunID},
		{name: "timestamp_kept_in_utc", run: putTimestamp},
		{name: "namespace_root", run: func(t *testing.T, s checkpoint.Saver) { putNamespace(t, s, "") }},
		{name: "namespace_child_abc", run: func(t *testing.T, s checkpoint.Saver) { putNamespace(t, s, "child:abc") }},
		{name: "namespace_nested", run: func(t *testing.T, s checkpoint.Saver) { putNamespace(t, s, "a:1|b:2") }},
		{name: "many_per_thread", run: putMany},
		{name: "threads_isolated", run: putThreadsIsolated},
		{name: "parent_ref", run: putParentRef},
		{name: "incremental_blobs", run: putIncremental},
		{name: "channel_added", run: putChannelAdded},
		{name: "channel_removed", run: putChannelRemoved},
		{name: "empty_channel_in_new_versions", run: putEmptyChannel},
		{name: "same_id_replaces", run: putSameIDReplaces},
		{name: "rejects_empty_thread_id", run: putRejectsNoThread},
		{name: "rejects_empty_checkpoint_id", run: putRejectsNoID},
		{name: "rejects_empty_source", run: putRejectsNoSource},
		{name: "rejects_unencodable_metadata", run: putRejectsBadMetadata},
		{name: "rejects_child_sorting_before_parent", run: putRejectsChildBeforeParent},
	}...)
	return cs
}

// JS put: the returned ref has thread id, namespace and the checkpoint's id.
func putReturnsRef(t *testing.T, s checkpoint.Saver, ns string) {
	thread := newThread("put")
	cp := newCP(vals("k", "v"), vers("k", 1))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: ns}, cp, inputMD(), cp.ChannelVersions)
	if w := (checkpoint.Ref{ThreadID: thread, NS: ns, CheckpointID: cp.ID}); ref != w {
		t.Fatalf("Put returned %+v, want %+v", ref, w)
	}
	mustGet(t, s, ref)
}

// JS put: the checkpoint and metadata are stored unaltered (parent and child
// fixtures).
func putStoredUnaltered(t *testing.T, s checkpoint.Saver, ns string) {
	thread := newThread("put")
	p := newJSPair(thread, ns)
	p.put(t, s)
	expectTuple(t, "parent", mustGet(t, s, p.parent.Ref), p.parent)
	expectTuple(t, "child", mustGet(t, s, p.child.Ref), p.child)
}

// JS put: "should only store channel_values that have changed (based on
// newVersions)": newVersions {}, {foo:1}, {foo:1,baz:1} read back {},
// {foo}, {foo,baz}.
func putOnlyChanged(t *testing.T, s checkpoint.Saver, ns string) {
	thread := newThread("put")
	parent := checkpoint.Ref{ThreadID: thread, NS: ns}
	for i, tc := range []struct {
		newVersions map[string]int64
		want        map[string][]byte
	}{
		{vers(), vals()},
		{vers("foo", 1), vals("foo", "FOO")},
		{vers("foo", 1, "baz", 1), vals("foo", "FOO", "baz", "BAZ")},
	} {
		cp := newCP(vals("foo", "FOO", "baz", "BAZ"), vers("foo", 1, "baz", 1))
		md := loopMD(i)
		ref := mustPut(t, s, parent, cp, md, tc.newVersions)
		expectTuple(t, "after put with newVersions "+describeVersions(tc.newVersions), mustGet(t, s, ref), want(ref, parent.CheckpointID, cp, md, tc.want))
		parent = ref
	}
}

func describeVersions(v map[string]int64) string {
	b := new(bytes.Buffer)
	b.WriteString("{")
	for _, k := range []string{"foo", "baz"} {
		if n, ok := v[k]; ok {
			if b.Len() > 1 {
				b.WriteString(",")
			}
			b.WriteString(k)
			b.WriteString(":")
			b.WriteByte(byte('0' + n))
		}
	}
	b.WriteString("}")
	return b.String()
}

// Python test_put_roundtrip.
func putRoundtrip(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(vals("msg", `"hello"`), vers("msg", 1))
	md := inputMD()
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, cp.ChannelVersions)
	expectTuple(t, "roundtrip", mustGet(t, s, ref), want(ref, "", cp, md, cp.ChannelValues))
}

// Python test_put_preserves_channel_values, for bytes: any byte sequence,
// empty values and large values come back exactly.
func putValuesAsBytes(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	big := make([]byte, 300<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range big {
		big[i] = byte(r.Uint32())
	}
	values := map[string][]byte{
		"binary":  {0x00, 0xff, 0xfe, 0x80, 0x00},
		"utf8":    []byte("héllo, wörld ✓"),
		"json":    []byte(`{"nested":true,"list":[1,2,3]}`),
		"empty":   {},
		"nilval":  nil, // present with no bytes: comes back empty, not absent
		"big":     big,
		"int":     []byte("42"),
		"null":    []byte("null"),
		"__end__": []byte(`"x"`),
	}
	versions := map[string]int64{}
	for k := range values {
		versions[k] = 1
	}
	cp := newCP(values, versions)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), versions)
	got := mustGet(t, s, ref)
	for k, v := range values {
		g, ok := got.Checkpoint.ChannelValues[k]
		if !ok {
			t.Errorf("channel %q missing", k)
			continue
		}
		if g == nil || !bytes.Equal(g, v) {
			t.Errorf("channel %q = %s, want %s (non-nil)", k, describeBytes(g), describeBytes(v))
		}
	}
	if len(got.Checkpoint.ChannelValues) != len(values) {
		t.Errorf("got %d channels, want %d", len(got.Checkpoint.ChannelValues), len(values))
	}
}

// Python test_put_preserves_channel_versions.
func putVersions(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(vals("a", "x", "b", "y"), vers("a", 1, "b", 2, "big", 1<<40))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), cp.ChannelVersions)
	got := mustGet(t, s, ref)
	if !mapsEqual(got.Checkpoint.ChannelVersions, cp.ChannelVersions) {
		t.Errorf("ChannelVersions = %v, want %v", got.Checkpoint.ChannelVersions, cp.ChannelVersions)
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Python test_put_preserves_versions_seen and _values.
func putVersionsSeen(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(nil, nil)
	cp.VersionsSeen = map[string]map[string]int64{
		"node1":         {"ch_a": 1, "ch_b": 2},
		"node2":         {"ch_a": 3},
		"__input__":     {},
		"__interrupt__": {"ch_a": 3, "ch_b": 2},
	}
	md := inputMD()
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nil)
	expectTuple(t, "versions_seen", mustGet(t, s, ref), want(ref, "", cp, md, nil))
}

// UpdatedChannels: a list is kept; nil (unknown) stays nil; empty stays empty.
func putUpdatedChannels(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	parent := checkpoint.Ref{ThreadID: thread}
	for _, uc := range [][]string{{"a", "b"}, nil, {}} {
		cp := newCP(nil, nil)
		cp.UpdatedChannels = uc
		md := loopMD(1)
		ref := mustPut(t, s, parent, cp, md, nil)
		expectTuple(t, "updated_channels "+describeStrings(uc), mustGet(t, s, ref), want(ref, parent.CheckpointID, cp, md, nil))
		parent = ref
	}
}

// Python test_put_preserves_metadata: source, step, parents, tasks and custom
// keys.
func putMetadata(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(nil, nil)
	md := checkpoint.Metadata{
		Source:  checkpoint.SourceLoop,
		Step:    3,
		Parents: map[string]string{"": "parent-id", "a:1": "other"},
		Tasks:   []string{"a", "b"},
		Extra:   map[string]any{"custom_key": "custom_value", "score": 42, "ratio": 0.5, "ok": true, "none": nil},
	}
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nil)
	got := mustGet(t, s, ref)
	expectTuple(t, "metadata", got, want(ref, "", cp, md, nil))
	if got.Metadata.Extra["score"] != float64(42) {
		t.Errorf("Extra[score] = %#v, want float64(42)", got.Metadata.Extra["score"])
	}
	for _, src := range []checkpoint.Source{checkpoint.SourceInput, checkpoint.SourceUpdate, checkpoint.SourceFork} {
		cp := newCP(nil, nil)
		md := checkpoint.Metadata{Source: src, Step: 7}
		ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nil)
		if got := mustGet(t, s, ref).Metadata; got.Source != src || got.Step != 7 {
			t.Errorf("metadata with source %q: got %+v", src, got)
		}
	}
}

// Python test_put_preserves_nested_metadata.
func putNestedMetadata(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	nested := map[string]any{
		"profile": map[string]any{
			"name":       "alice",
			"tags":       []any{"admin", "rag"},
			"prefs":      map[string]any{"theme": "dark", "n": 3, "flag": true},
			"empty_dict": map[string]any{},
			"empty_list": []any{},
		},
		"metrics": []any{map[string]any{"step": 1, "score": 0.95}, map[string]any{"step": 2, "score": 0.99}},
	}
	md := checkpoint.Metadata{Source: checkpoint.SourceInput, Step: 1, Extra: map[string]any{"user": nested}}
	cp := newCP(nil, nil)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nil)
	expectTuple(t, "nested metadata", mustGet(t, s, ref), want(ref, "", cp, md, nil))
}

// Python test_put_preserves_run_id.
func putRunID(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	md := loopMD(0)
	md.RunID = checkpoint.NewID()
	cp := newCP(nil, nil)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nil)
	if got := mustGet(t, s, ref).Metadata.RunID; got != md.RunID {
		t.Errorf("RunID = %q, want %q", got, md.RunID)
	}
}

// The timestamp comes back as the same instant, in UTC, to the nanosecond.
func putTimestamp(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	zone := time.FixedZone("UTC+5:30", 5*3600+1800)
	for _, ts := range []time.Time{
		time.Date(2025, 3, 4, 5, 6, 7, 123456789, zone),
		time.Now(), // carries a monotonic reading
		time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC),
	} {
		cp := newCP(nil, nil)
		cp.TS = ts
		ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil)
		got := mustGet(t, s, ref).Checkpoint.TS
		if !got.Equal(ts) || got.Location() != time.UTC || got != ts.UTC() {
			t.Errorf("TS = %v (%v), want %v in UTC", got, got.Location(), ts.UTC())
		}
	}
}

// Python test_put_root/child/default_namespace.
func putNamespace(t *testing.T, s checkpoint.Saver, ns string) {
	thread := newThread("put")
	cp := newCP(vals("a", "1"), vers("a", 1))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread, NS: ns}, cp, inputMD(), cp.ChannelVersions)
	if ref.NS != ns {
		t.Fatalf("Put returned ns %q, want %q", ref.NS, ns)
	}
	got := mustGet(t, s, checkpoint.Ref{ThreadID: thread, NS: ns})
	expectTuple(t, "latest in ns", got, want(ref, "", cp, inputMD(), cp.ChannelValues))
	if ns != "" {
		expectNotFound(t, s, checkpoint.Ref{ThreadID: thread, NS: ""})
	}
}

// Python test_put_multiple_checkpoints_same_thread (with more checkpoints).
func putMany(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	parent := checkpoint.Ref{ThreadID: thread}
	var wants []*checkpoint.Tuple
	for i := range 25 {
		cp := newCP(vals("step", string(rune('a'+i))), vers("step", i+1))
		md := loopMD(i)
		ref := mustPut(t, s, parent, cp, md, cp.ChannelVersions)
		wants = append(wants, want(ref, parent.CheckpointID, cp, md, cp.ChannelValues))
		parent = ref
	}
	for _, w := range wants {
		expectTuple(t, "checkpoint by id", mustGet(t, s, w.Ref), w)
	}
	expectTuple(t, "latest", mustGet(t, s, checkpoint.Ref{ThreadID: thread}), wants[len(wants)-1])
	if got := mustList(t, s, checkpoint.ListOptions{ThreadID: thread}); len(got) != len(wants) {
		t.Errorf("List returned %d checkpoints, want %d", len(got), len(wants))
	}
}

// Python test_put_multiple_threads_isolated.
func putThreadsIsolated(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("put"), newThread("put")
	cp1 := newCP(vals("x", "thread1"), vers("x", 1))
	cp2 := newCP(vals("x", "thread2"), vers("x", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: t1}, cp1, inputMD(), cp1.ChannelVersions)
	r2 := mustPut(t, s, checkpoint.Ref{ThreadID: t2}, cp2, inputMD(), cp2.ChannelVersions)
	expectTuple(t, "thread 1", mustGet(t, s, checkpoint.Ref{ThreadID: t1}), want(r1, "", cp1, inputMD(), cp1.ChannelValues))
	expectTuple(t, "thread 2", mustGet(t, s, checkpoint.Ref{ThreadID: t2}), want(r2, "", cp2, inputMD(), cp2.ChannelValues))
	expectNotFound(t, s, checkpoint.Ref{ThreadID: t1, CheckpointID: cp2.ID})
}

// Python test_put_parent_config.
func putParentRef(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp1, cp2 := newCP(nil, nil), newCP(nil, nil)
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp1, loopMD(0), nil)
	r2 := mustPut(t, s, r1, cp2, loopMD(1), nil)
	if got := mustGet(t, s, r1).Parent; got != nil {
		t.Errorf("first checkpoint's Parent = %+v, want nil", *got)
	}
	got := mustGet(t, s, r2).Parent
	if got == nil || *got != r1 {
		t.Errorf("second checkpoint's Parent = %v, want %+v", got, r1)
	}
}

// Python test_put_incremental_channel_update: newVersions {a:2} stores a new
// a; b is read from version 1 (not from the second checkpoint's
// ChannelValues, which Put must ignore for b); the first checkpoint is
// unchanged.
func putIncremental(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp1 := newCP(vals("a", "v1", "b", "v2"), vers("a", 1, "b", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp1, loopMD(0), vers("a", 1, "b", 1))
	cp2 := newCP(vals("a", "v1_updated", "b", "ignored: b is not in newVersions"), vers("a", 2, "b", 1))
	r2 := mustPut(t, s, r1, cp2, loopMD(1), vers("a", 2))
	expectTuple(t, "second checkpoint", mustGet(t, s, r2), want(r2, r1.CheckpointID, cp2, loopMD(1), vals("a", "v1_updated", "b", "v2")))
	expectTuple(t, "first checkpoint", mustGet(t, s, r1), want(r1, "", cp1, loopMD(0), vals("a", "v1", "b", "v2")))
}

// Python test_put_new_channel_added.
func putChannelAdded(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp1 := newCP(vals("a", "v1"), vers("a", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp1, loopMD(0), vers("a", 1))
	cp2 := newCP(vals("a", "v1", "b", "new_channel"), vers("a", 1, "b", 1))
	r2 := mustPut(t, s, r1, cp2, loopMD(1), vers("b", 1))
	expectTuple(t, "second checkpoint", mustGet(t, s, r2), want(r2, r1.CheckpointID, cp2, loopMD(1), vals("a", "v1", "b", "new_channel")))
	expectTuple(t, "first checkpoint", mustGet(t, s, r1), want(r1, "", cp1, loopMD(0), vals("a", "v1")))
}

// Python test_put_channel_removed: a channel absent from ChannelVersions is
// absent from the values, even if ChannelValues names it.
func putChannelRemoved(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp1 := newCP(vals("a", "v1", "b", "v2"), vers("a", 1, "b", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp1, loopMD(0), vers("a", 1, "b", 1))
	cp2 := newCP(vals("a", "v1_updated", "b", "v2"), vers("a", 2))
	r2 := mustPut(t, s, r1, cp2, loopMD(1), vers("a", 2))
	expectTuple(t, "second checkpoint", mustGet(t, s, r2), want(r2, r1.CheckpointID, cp2, loopMD(1), vals("a", "v1_updated")))
}

// A channel in newVersions but absent from ChannelValues is stored as empty:
// absent from the values of every checkpoint at that version, and a later
// put of the same version does not fill it.
func putEmptyChannel(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp1 := newCP(vals("a", "A"), vers("a", 1, "gone", 1))
	r1 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp1, loopMD(0), vers("a", 1, "gone", 1))
	expectTuple(t, "first checkpoint", mustGet(t, s, r1), want(r1, "", cp1, loopMD(0), vals("a", "A")))
	cp2 := newCP(vals("a", "A", "gone", "late value"), vers("a", 1, "gone", 1))
	r2 := mustPut(t, s, r1, cp2, loopMD(1), vers("gone", 1))
	expectTuple(t, "second checkpoint (same version, value ignored)", mustGet(t, s, r2), want(r2, r1.CheckpointID, cp2, loopMD(1), vals("a", "A")))
}

// Putting a checkpoint id again replaces its header and metadata (as
// LangGraph's INSERT OR REPLACE does); values already stored for a version
// are kept.
func putSameIDReplaces(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(vals("a", "first"), vers("a", 1))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, loopMD(0), vers("a", 1))
	cp2 := cp.Clone()
	cp2.ChannelValues = vals("a", "second", "b", "B")
	cp2.ChannelVersions = vers("a", 1, "b", 1)
	md2 := loopMD(5)
	ref2 := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp2, md2, vers("a", 1, "b", 1))
	if ref2 != ref {
		t.Fatalf("second Put returned %+v, want %+v", ref2, ref)
	}
	expectTuple(t, "replaced checkpoint", mustGet(t, s, ref), want(ref, "", cp2, md2, vals("a", "first", "b", "B")))
	if n := len(mustList(t, s, checkpoint.ListOptions{ThreadID: thread})); n != 1 {
		t.Errorf("List returned %d checkpoints, want 1", n)
	}
}

// JS put failure cases: a missing thread id is rejected.
func putRejectsNoThread(t *testing.T, s checkpoint.Saver) {
	cp := newCP(nil, nil)
	_, err := s.Put(t.Context(), checkpoint.Ref{}, cp, inputMD(), nil)
	if !errors.Is(err, checkpoint.ErrNoThread) {
		t.Fatalf("Put with empty thread id: err = %v, want ErrNoThread", err)
	}
}

func putRejectsNoID(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(nil, nil)
	cp.ID = ""
	_, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil)
	if !errors.Is(err, checkpoint.ErrNoCheckpoint) {
		t.Fatalf("Put with empty checkpoint id: err = %v, want ErrNoCheckpoint", err)
	}
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})
}

func putRejectsNoSource(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(nil, nil)
	if _, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: thread}, cp, checkpoint.Metadata{Step: 1}, nil); err == nil {
		t.Fatal("Put with empty metadata source: no error")
	}
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})
}

func putRejectsBadMetadata(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	cp := newCP(vals("a", "A"), vers("a", 1))
	md := inputMD()
	md.Extra = map[string]any{"fn": func() {}}
	if _, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: thread}, cp, md, cp.ChannelVersions); err == nil {
		t.Fatal("Put with a func in metadata: no error")
	}
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})
}

// Weft: a child of the head whose id sorts before it is refused with
// checkpoint.ErrIDBeforeParent and nothing is stored, so a thread's id
// order stays its chain's order (a child of an older checkpoint may sort
// anywhere after it: a branch).
func putRejectsChildBeforeParent(t *testing.T, s checkpoint.Saver) {
	thread := newThread("put")
	early := checkpoint.NewIDAfter("", time.Now().Add(-time.Hour))
	parent := newCP(vals("a", "A"), vers("a", 1))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, parent, inputMD(), parent.ChannelVersions)
	for _, md := range []checkpoint.Metadata{loopMD(0), updateMD(0)} {
		child := newCP(vals("a", "B"), vers("a", 2))
		child.ID = early
		_, err := s.Put(t.Context(), ref, child, md, vers("a", 2))
		if !errors.Is(err, checkpoint.ErrIDBeforeParent) {
			t.Fatalf("Put (source %s) of child %s after the head %s: %v, want ErrIDBeforeParent", md.Source, early, parent.ID, err)
		}
	}
	if n := len(mustList(t, s, checkpoint.ListOptions{ThreadID: thread})); n != 1 {
		t.Errorf("List returned %d checkpoints, want only the parent", n)
	}
}
