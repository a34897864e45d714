package checkpointtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

// ---- storage report ----

func storageReporter(s checkpoint.Saver) bool { _, ok := s.(checkpoint.StorageReporter); return ok }

func storageCases() []testCase {
	cs := []testCase{
		{name: "summary_counts_and_parts_add_up", run: storageSummaryAddsUp},
		{name: "summary_finds_largest_thread_and_value", run: storageLargest},
		{name: "summary_deep_channels", run: storageDeepChannels},
		{name: "summary_empty_store", run: storageEmpty},
		{name: "thread_attributes_values_to_their_checkpoint", run: storagePerCheckpoint},
		{name: "thread_growth_by_step", run: storageGrowth},
		{name: "thread_missing_or_empty_id", run: storageMissing},
		{name: "deleted_thread_leaves_summary", run: storageAfterDelete},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = storageReporter, "checkpoint.StorageReporter"
	}
	return cs
}

// random returns n bytes no compressor shrinks, so stored sizes are at
// least n whatever a saver's encoding.
func random(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return string(b)
}

// sized puts a chain of n checkpoints in thread and ns: step i stores a new
// "big" value of sizes[i] random bytes (when sizes[i] > 0), and a task
// writes a value of writes[i] random bytes against it. Channel "const" is
// stored once. It returns the refs, oldest first.
func sized(t *testing.T, s checkpoint.Saver, thread, ns string, sizes, writes []int) []checkpoint.Ref {
	t.Helper()
	var refs []checkpoint.Ref
	parent := checkpoint.Ref{ThreadID: thread, NS: ns}
	big := 0
	for i, n := range sizes {
		nv := map[string]int64{}
		if i == 0 {
			nv["const"] = 1
		}
		if n > 0 {
			big = i + 1
			nv["big"] = int64(big) << 32
		}
		v := map[string][]byte{"const": []byte("c")}
		versions := vers("const", 1)
		if big > 0 {
			v["big"] = []byte(random(max(n, 1)))
			versions["big"] = int64(big) << 32
		}
		cp := newCP(v, versions)
		md := loopMD(i)
		if i == 0 {
			md = inputMD()
		}
		ref := mustPut(t, s, parent, cp, md, nv)
		if i < len(writes) && writes[i] > 0 {
			mustWrites(t, s, ref, "task", "", "w", random(writes[i]))
		}
		refs = append(refs, ref)
		parent = ref
	}
	return refs
}

func summary(t *testing.T, s checkpoint.Saver, opts checkpoint.StorageOptions) *checkpoint.StorageSummary {
	t.Helper()
	sum, err := s.(checkpoint.StorageReporter).StorageSummary(t.Context(), opts)
	if err != nil {
		t.Fatalf("StorageSummary: %v", err)
	}
	return sum
}

func threadStorage(t *testing.T, s checkpoint.Saver, thread string, opts checkpoint.StorageOptions) *checkpoint.ThreadStorage {
	t.Helper()
	ts, err := s.(checkpoint.StorageReporter).ThreadStorage(t.Context(), thread, opts)
	if err != nil {
		t.Fatalf("ThreadStorage(%q): %v", thread, err)
	}
	return ts
}

// growthTotal adds up a growth series.
func growthTotal(ps []checkpoint.GrowthPoint) (n int64, b checkpoint.ByteCounts) {
	for _, p := range ps {
		n += p.Checkpoints
		b = b.Add(p.Bytes)
	}
	return n, b
}

// The summary counts rows exactly; its totals equal the sum of its
// threads' reports, each thread's equal the sum of its checkpoints' and of
// its channels', and the growth series add up to the totals.
func storageSummaryAddsUp(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("storage"), newThread("storage")
	sized(t, s, t1, "", []int{300, 0, 500, 0}, []int{0, 100, 0, 200})
	sized(t, s, t1, "sub:1", []int{50, 60}, nil)
	sized(t, s, t2, "", []int{700, 800}, []int{10, 0})
	sum := summary(t, s, checkpoint.StorageOptions{})
	// t1: 4 root + 2 sub checkpoints; values: const + big@1 + big@3 in the
	// root, const + big@1 + big@2 in sub:1; t2: const, big@1, big@2.
	if sum.Threads != 2 || sum.Checkpoints != 8 || sum.Values != 9 || sum.Writes != 3 {
		t.Errorf("counts: threads %d checkpoints %d values %d writes %d, want 2 8 9 3", sum.Threads, sum.Checkpoints, sum.Values, sum.Writes)
	}
	if sum.Bytes.Values < 300+500+50+60+700+800 || sum.Bytes.Writes < 100+200+10 || sum.Bytes.Headers <= 0 {
		t.Errorf("bytes %+v: smaller than what was stored", sum.Bytes)
	}
	var total checkpoint.ByteCounts
	for _, th := range []string{t1, t2} {
		ts := threadStorage(t, s, th, checkpoint.StorageOptions{Checkpoints: -1})
		total = total.Add(ts.Bytes)
		var items checkpoint.ByteCounts
		var nv, nw int64
		for _, c := range ts.Newest {
			items = items.Add(c.Bytes)
			nv += c.Values
			nw += c.Writes
		}
		if items != ts.Bytes || nv != ts.Values || nw != ts.Writes || int64(len(ts.Newest)) != ts.Checkpoints {
			t.Errorf("thread %s: checkpoints add up to %+v (%d values, %d writes, %d checkpoints), thread says %+v (%d, %d, %d)",
				th, items, nv, nw, len(ts.Newest), ts.Bytes, ts.Values, ts.Writes, ts.Checkpoints)
		}
		var chV, chW int64
		for _, c := range ts.Channels {
			chV += c.ValueBytes
			chW += c.WriteBytes
		}
		if chV != ts.Bytes.Values || chW != ts.Bytes.Writes {
			t.Errorf("thread %s: channels add up to %d value and %d write bytes, thread says %+v", th, chV, chW, ts.Bytes)
		}
		if n, b := growthTotal(ts.Growth); n != ts.Checkpoints || b != ts.Bytes {
			t.Errorf("thread %s: growth adds up to %d checkpoints, %+v; thread has %d, %+v", th, n, b, ts.Checkpoints, ts.Bytes)
		}
		for i := 1; i < len(ts.Newest); i++ {
			if ts.Newest[i-1].Ref.CheckpointID < ts.Newest[i].Ref.CheckpointID {
				t.Errorf("thread %s: Newest is not newest first at %d", th, i)
			}
		}
	}
	if total != sum.Bytes {
		t.Errorf("threads add up to %+v, summary says %+v", total, sum.Bytes)
	}
	if ts := threadStorage(t, s, t1, checkpoint.StorageOptions{}); ts.Namespaces != 2 || ts.Checkpoints != 6 {
		t.Errorf("thread %s: %d namespaces, %d checkpoints; want 2, 6", t1, ts.Namespaces, ts.Checkpoints)
	}
	if n, b := growthTotal(sum.Growth); n != sum.Checkpoints || b != sum.Bytes {
		t.Errorf("summary growth adds up to %d checkpoints, %+v; summary has %d, %+v", n, b, sum.Checkpoints, sum.Bytes)
	}
	if len(sum.Growth) == 0 || len(sum.Growth) > checkpoint.DefaultStoragePoints {
		t.Errorf("summary growth has %d points, want 1 to %d", len(sum.Growth), checkpoint.DefaultStoragePoints)
	}
}

// The thread holding the most bytes comes first, and the largest value is
// named by thread, namespace, channel and version.
func storageLargest(t *testing.T, s checkpoint.Saver) {
	small, large := newThread("storage"), newThread("storage")
	sized(t, s, small, "", []int{100, 200}, nil)
	sized(t, s, large, "ns", []int{100, 64 << 10, 300}, nil)
	sum := summary(t, s, checkpoint.StorageOptions{Top: 1})
	if len(sum.LargestThreads) != 1 || sum.LargestThreads[0].ThreadID != large || sum.LargestThreads[0].Checkpoints != 3 {
		t.Fatalf("LargestThreads (Top 1) = %+v, want %s with 3 checkpoints", sum.LargestThreads, large)
	}
	want := checkpoint.ValueSize{ThreadID: large, NS: "ns", Channel: "big", Version: 2 << 32}
	if len(sum.LargestValues) != 1 {
		t.Fatalf("LargestValues (Top 1) = %+v", sum.LargestValues)
	}
	got := sum.LargestValues[0]
	if got.Bytes < 64<<10 {
		t.Errorf("largest value has %d bytes, want at least %d", got.Bytes, 64<<10)
	}
	got.Bytes = 0
	if got != want {
		t.Errorf("largest value = %+v, want %+v", got, want)
	}
	ts := threadStorage(t, s, large, checkpoint.StorageOptions{Top: 2})
	if len(ts.LargestValues) != 2 || ts.LargestValues[0].Version != 2<<32 || ts.LargestValues[1].Bytes > ts.LargestValues[0].Bytes {
		t.Errorf("thread's largest values = %+v", ts.LargestValues)
	}
	if ts.Channels[0].Channel != "big" {
		t.Errorf("thread's channels = %+v, want big first", ts.Channels)
	}
}

func storageDeepChannels(t *testing.T, s checkpoint.Saver) {
	sized(t, s, newThread("storage"), "", []int{400, 500}, []int{30, 40})
	sized(t, s, newThread("storage"), "", []int{600}, nil)
	sum := summary(t, s, checkpoint.StorageOptions{Deep: true})
	var v, w int64
	names := []string{}
	for _, c := range sum.Channels {
		v += c.ValueBytes
		w += c.WriteBytes
		names = append(names, c.Channel)
	}
	if v != sum.Bytes.Values || w != sum.Bytes.Writes {
		t.Errorf("channels add up to %d value and %d write bytes, summary says %+v", v, w, sum.Bytes)
	}
	if !slices.Equal(names, []string{"big", "w", "const"}) {
		t.Errorf("channels %q, want big, w, const (largest first)", names)
	}
	if big := sum.Channels[0]; big.Values != 3 || big.Writes != 0 {
		t.Errorf("channel big: %+v, want 3 values, no writes", big)
	}
}

func storageEmpty(t *testing.T, s checkpoint.Saver) {
	sum := summary(t, s, checkpoint.StorageOptions{Deep: true})
	if sum.Threads != 0 || sum.Checkpoints != 0 || sum.Values != 0 || sum.Writes != 0 || sum.Bytes.Total() != 0 {
		t.Errorf("empty store: %+v", sum)
	}
	if sum.LargestThreads == nil || sum.LargestValues == nil || sum.Growth == nil || sum.Engine == "" {
		t.Errorf("empty store: lists must be empty, not nil, and Engine set: %+v", sum)
	}
}

// A checkpoint is charged with the values whose versions it created, not
// with those it shares with its parent, and with its own writes.
func storagePerCheckpoint(t *testing.T, s checkpoint.Saver) {
	thread := newThread("storage")
	refs := sized(t, s, thread, "", []int{1000, 0, 8000, 0}, []int{0, 0, 0, 3000})
	ts := threadStorage(t, s, thread, checkpoint.StorageOptions{Checkpoints: 3})
	if len(ts.Newest) != 3 {
		t.Fatalf("Newest has %d checkpoints, want 3 (StorageOptions.Checkpoints)", len(ts.Newest))
	}
	byID := map[string]checkpoint.CheckpointBytes{}
	for _, c := range threadStorage(t, s, thread, checkpoint.StorageOptions{Checkpoints: -1}).Newest {
		byID[c.Ref.CheckpointID] = c
	}
	first, second, third, fourth := byID[refs[0].CheckpointID], byID[refs[1].CheckpointID], byID[refs[2].CheckpointID], byID[refs[3].CheckpointID]
	if first.Values != 2 || first.Bytes.Values < 1000 || first.Bytes.Values > 4000 {
		t.Errorf("first checkpoint: %+v, want its 2 values of about 1000 bytes", first)
	}
	if second.Values != 0 || second.Bytes.Values != 0 {
		t.Errorf("second checkpoint stored nothing new: %+v", second)
	}
	if third.Values != 1 || third.Bytes.Values < 8000 {
		t.Errorf("third checkpoint: %+v, want 1 value of at least 8000 bytes", third)
	}
	if fourth.Writes != 1 || fourth.Bytes.Writes < 3000 || fourth.Values != 0 {
		t.Errorf("fourth checkpoint: %+v, want 1 write of at least 3000 bytes and no value", fourth)
	}
	for _, c := range []checkpoint.CheckpointBytes{first, second, third, fourth} {
		if c.Bytes.Headers <= 0 || c.Ref.ThreadID != thread || c.TS.IsZero() {
			t.Errorf("checkpoint %+v: no header bytes, thread or time", c)
		}
	}
	if third.Step != 2 {
		t.Errorf("third checkpoint's step = %d, want 2", third.Step)
	}
}

// Growth buckets steps into at most Points spans of equal width.
func storageGrowth(t *testing.T, s checkpoint.Saver) {
	thread := newThread("storage")
	sized(t, s, thread, "", []int{10, 10, 10, 10, 10, 10, 10, 5000, 10, 10}, nil) // steps -1 (input), 1…9
	ts := threadStorage(t, s, thread, checkpoint.StorageOptions{Points: 4})
	if len(ts.Growth) == 0 || len(ts.Growth) > 4 {
		t.Fatalf("growth has %d points, want 1 to 4: %+v", len(ts.Growth), ts.Growth)
	}
	width := ts.Growth[0].Steps
	for i, p := range ts.Growth {
		if p.Steps != width || p.From != ts.Growth[0].From+i*width {
			t.Errorf("point %d: from %d width %d; want from %d width %d", i, p.From, p.Steps, ts.Growth[0].From+i*width, width)
		}
	}
	if ts.Growth[0].From != -1 {
		t.Errorf("growth starts at step %d, want -1", ts.Growth[0].From)
	}
	// Step 7 stored 5000 bytes: its span holds the most.
	var big checkpoint.GrowthPoint
	for _, p := range ts.Growth {
		if p.Bytes.Values > big.Bytes.Values {
			big = p
		}
	}
	if big.From > 7 || big.From+big.Steps <= 7 || big.Bytes.Values < 5000 {
		t.Errorf("the span holding step 7 is %+v, want the largest with at least 5000 value bytes", big)
	}
}

func storageMissing(t *testing.T, s checkpoint.Saver) {
	r := s.(checkpoint.StorageReporter)
	if _, err := r.ThreadStorage(t.Context(), "no-such-thread", checkpoint.StorageOptions{}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("ThreadStorage of a missing thread: %v, want ErrNotFound", err)
	}
	if _, err := r.ThreadStorage(t.Context(), "", checkpoint.StorageOptions{}); !errors.Is(err, checkpoint.ErrNoThread) {
		t.Errorf("ThreadStorage with no thread id: %v, want ErrNoThread", err)
	}
}

func storageAfterDelete(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("storage"), newThread("storage")
	sized(t, s, t1, "", []int{100}, []int{10})
	sized(t, s, t2, "", []int{100, 100}, nil)
	if err := s.DeleteThread(t.Context(), t1); err != nil {
		t.Fatal(err)
	}
	sum := summary(t, s, checkpoint.StorageOptions{})
	if sum.Threads != 1 || sum.Checkpoints != 2 || sum.Writes != 0 || len(sum.LargestThreads) != 1 || sum.LargestThreads[0].ThreadID != t2 {
		t.Errorf("after deleting %s: %+v", t1, sum)
	}
}

// ---- prune by policy ----

func policyPruner(s checkpoint.Saver) bool { _, ok := s.(checkpoint.PolicyPruner); return ok }

func policyCases() []testCase {
	cs := []testCase{
		{name: "keep_latest", run: policyKeepLatest},
		{name: "older_than_keeps_newer_and_latest", run: policyOlderThan},
		{name: "all_threads", run: policyAllThreads},
		{name: "zero_policy_deletes_nothing", run: policyZero},
		{name: "keeps_values_of_kept_checkpoints", run: policyKeepsValues},
		{name: "result_matches_storage_report", run: policyResultMatchesReport},
		{name: "rejects_negative_keep", run: policyNegative},
		{name: "hold_refused_stops_before_the_thread", run: policyHold},
		{name: "held_thread_skipped_and_named", run: policyHeldSkipped},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = policyPruner, "checkpoint.PolicyPruner"
	}
	return cs
}

func pruneBy(t *testing.T, s checkpoint.Saver, p checkpoint.PrunePolicy) checkpoint.PruneResult {
	t.Helper()
	res, err := s.(checkpoint.PolicyPruner).PruneBy(t.Context(), p)
	if err != nil {
		t.Fatalf("PruneBy(%+v): %v", p, err)
	}
	return res
}

func policyKeepLatest(t *testing.T, s checkpoint.Saver) {
	t1, t2 := newThread("policy"), newThread("policy")
	c := chainWrites(t, s, t1, "", 5, func(i int, ref checkpoint.Ref) {
		switch i {
		case 0:
			mustWrites(t, s, ref, "task", "", "ch", "old")
		case 4:
			mustWrites(t, s, ref, "task", "", "ch", "new")
		}
	})
	c[4].PendingWrites = []checkpoint.PendingWrite{pw("task", "ch", "new")}
	other := chain(t, s, t2, "", 3)
	var calls [][2]int
	res := pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{t1, "no-such-thread"}, KeepLatest: 2,
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	expectList(t, s, checkpoint.ListOptions{ThreadID: t1}, rev(c[3:]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: t2}, rev(other...))
	// Checkpoints 0–2 go, with the write to 0 and the values "i"@1–3.
	if res.Threads != 1 || res.Checkpoints != 3 || res.Writes != 1 || res.Values != 3 {
		t.Errorf("result %+v, want 1 thread, 3 checkpoints, 1 write, 3 values", res)
	}
	if res.Bytes.Headers <= 0 || res.Bytes.Writes < 3 || res.Bytes.Values < 3 {
		t.Errorf("result bytes %+v", res.Bytes)
	}
	if !slices.Equal(calls, [][2]int{{1, 2}, {2, 2}}) {
		t.Errorf("progress calls %v, want [[1 2] [2 2]]", calls)
	}
}

// olderChain puts checkpoints with the given ages (oldest first).
func olderChain(t *testing.T, s checkpoint.Saver, thread string, now time.Time, ages ...time.Duration) []*checkpoint.Tuple {
	t.Helper()
	var out []*checkpoint.Tuple
	parent := checkpoint.Ref{ThreadID: thread}
	for i, age := range ages {
		cp := newCP(vals("i", fmt.Sprint(i)), vers("i", i+1))
		cp.TS = now.Add(-age)
		md := loopMD(i)
		ref := mustPut(t, s, parent, cp, md, vers("i", i+1))
		out = append(out, want(ref, parent.CheckpointID, cp, md, cp.ChannelValues))
		parent = ref
	}
	return out
}

func policyOlderThan(t *testing.T, s checkpoint.Saver) {
	now := time.Now()
	day := 24 * time.Hour
	fresh, stale := newThread("policy"), newThread("policy")
	f := olderChain(t, s, fresh, now, 40*day, 35*day, 2*day, time.Hour)
	st := olderChain(t, s, stale, now, 90*day, 80*day, 70*day)
	res := pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{fresh, stale}, KeepLatest: 1, OlderThan: now.Add(-30 * day)})
	expectList(t, s, checkpoint.ListOptions{ThreadID: fresh}, rev(f[2:]...))
	// Every checkpoint of stale is old; the newest stays.
	expectList(t, s, checkpoint.ListOptions{ThreadID: stale}, rev(st[2:]...))
	if res.Checkpoints != 4 || res.Threads != 2 {
		t.Errorf("result %+v, want 4 checkpoints of 2 threads", res)
	}
	// KeepLatest 0 with an age lets even the newest go when it is old.
	pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{stale}, OlderThan: now.Add(-30 * day)})
	expectNotFound(t, s, checkpoint.Ref{ThreadID: stale})
}

func policyAllThreads(t *testing.T, s checkpoint.Saver) {
	var threads [][]*checkpoint.Tuple
	var ids []string
	for range 3 {
		id := newThread("policy")
		ids = append(ids, id)
		threads = append(threads, chain(t, s, id, "", 3))
	}
	res := pruneBy(t, s, checkpoint.PrunePolicy{AllThreads: true, KeepLatest: 1})
	for i, id := range ids {
		expectList(t, s, checkpoint.ListOptions{ThreadID: id}, threads[i][2:])
	}
	if res.Checkpoints != 6 || res.Threads != 3 {
		t.Errorf("result %+v, want 6 checkpoints of 3 threads", res)
	}
}

func policyZero(t *testing.T, s checkpoint.Saver) {
	thread := newThread("policy")
	c := chain(t, s, thread, "", 3)
	if res := pruneBy(t, s, checkpoint.PrunePolicy{}); !reflect.DeepEqual(res, checkpoint.PruneResult{}) {
		t.Errorf("zero policy deleted %+v", res)
	}
	pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{thread}, KeepLatest: 3})
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

// A kept checkpoint's unchanged channel lives in a value stored by a
// pruned checkpoint; it stays.
func policyKeepsValues(t *testing.T, s checkpoint.Saver) {
	thread := newThread("policy")
	c := chain(t, s, thread, "", 6)
	sub := chain(t, s, thread, "sub", 3)
	pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{thread}, KeepLatest: 2})
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr("")}, rev(c[4:]...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread, NS: ptr("sub")}, rev(sub[1:]...))
}

// What PruneBy says it deleted is what the storage report lost.
func policyResultMatchesReport(t *testing.T, s checkpoint.Saver) {
	if !storageReporter(s) {
		t.Skip("the saver has no storage report to compare with")
	}
	thread, other := newThread("policy"), newThread("policy")
	sized(t, s, thread, "", []int{500, 0, 900, 100, 0, 300}, []int{50, 60, 0, 70, 0, 80})
	sized(t, s, other, "", []int{200}, []int{20})
	before := summary(t, s, checkpoint.StorageOptions{})
	res := pruneBy(t, s, checkpoint.PrunePolicy{Threads: []string{thread}, KeepLatest: 2})
	after := summary(t, s, checkpoint.StorageOptions{})
	if got := (checkpoint.PruneResult{Threads: 1, Checkpoints: before.Checkpoints - after.Checkpoints,
		Values: before.Values - after.Values, Writes: before.Writes - after.Writes,
		Bytes: checkpoint.ByteCounts{Headers: before.Bytes.Headers - after.Bytes.Headers,
			Values: before.Bytes.Values - after.Bytes.Values, Writes: before.Bytes.Writes - after.Bytes.Writes}}); !reflect.DeepEqual(got, res) {
		t.Errorf("PruneBy says it deleted %+v; the report lost %+v", res, got)
	}
	if res.Checkpoints != 4 {
		t.Errorf("deleted %d checkpoints, want 4", res.Checkpoints)
	}
}

// Hold is asked before each thread and released after it; a refusal
// stops the prune before that thread, which stays whole, and is returned.
func policyHold(t *testing.T, s checkpoint.Saver) {
	a, b, c := newThread("hold-a"), newThread("hold-b"), newThread("hold-c")
	ca, cb, cc := chain(t, s, a, "", 3), chain(t, s, b, "", 3), chain(t, s, c, "", 3)
	busy := errors.New("thread is being run elsewhere")
	var asked, released []string
	_, err := s.(checkpoint.PolicyPruner).PruneBy(t.Context(), checkpoint.PrunePolicy{Threads: []string{a, b, c}, KeepLatest: 1,
		Hold: func(_ context.Context, thread string) (func(), error) {
			asked = append(asked, thread)
			if thread == b {
				return nil, busy
			}
			return func() { released = append(released, thread) }, nil
		}})
	if !errors.Is(err, busy) || !strings.Contains(err.Error(), b) {
		t.Fatalf("PruneBy with thread %s held elsewhere: %v, want the Hold error naming the thread", b, err)
	}
	if !slices.Equal(asked, []string{a, b}) || !slices.Equal(released, []string{a}) {
		t.Errorf("Hold asked for %q and released %q; want [%s %s] and [%s]", asked, released, a, b, a)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: a}, ca[2:])
	expectList(t, s, checkpoint.ListOptions{ThreadID: b}, rev(cb...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: c}, rev(cc...))
}

// A thread Hold refuses as held by a run is skipped and named; the others
// are pruned.
func policyHeldSkipped(t *testing.T, s checkpoint.Saver) {
	a, b, c := newThread("hold-a"), newThread("hold-b"), newThread("hold-c")
	ca, cb, cc := chain(t, s, a, "", 3), chain(t, s, b, "", 3), chain(t, s, c, "", 3)
	res, err := s.(checkpoint.PolicyPruner).PruneBy(t.Context(), checkpoint.PrunePolicy{Threads: []string{a, b, c}, KeepLatest: 1,
		Hold: func(_ context.Context, thread string) (func(), error) {
			if thread == b {
				return nil, &checkpoint.LeaseHeldError{Lease: checkpoint.Lease{ThreadID: b, Owner: "desk pid 7 (weft worker)"}}
			}
			return func() {}, nil
		}})
	if err != nil {
		t.Fatalf("PruneBy with thread %s held: %v, want the others pruned", b, err)
	}
	if res.Threads != 2 || len(res.Skipped) != 1 || res.Skipped[0].ThreadID != b ||
		!strings.Contains(res.Skipped[0].Reason, "is being run by desk pid 7 (weft worker)") {
		t.Errorf("result %+v, want 2 threads pruned and %s skipped, naming its holder", res, b)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: a}, ca[2:])
	expectList(t, s, checkpoint.ListOptions{ThreadID: b}, rev(cb...))
	expectList(t, s, checkpoint.ListOptions{ThreadID: c}, cc[2:])
}

func policyNegative(t *testing.T, s checkpoint.Saver) {
	thread := newThread("policy")
	c := chain(t, s, thread, "", 2)
	if _, err := s.(checkpoint.PolicyPruner).PruneBy(t.Context(), checkpoint.PrunePolicy{Threads: []string{thread}, KeepLatest: -1}); err == nil {
		t.Error("PruneBy with KeepLatest -1: no error")
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: thread}, rev(c...))
}

// ---- vacuum ----

func vacuumer(s checkpoint.Saver) bool { _, ok := s.(checkpoint.Vacuumer); return ok }

func vacuumCases() []testCase {
	return []testCase{{name: "keeps_data_and_reports", run: vacuumKeepsData, needs: vacuumer, capability: "checkpoint.Vacuumer"}}
}

// A vacuum after deleting most of a store keeps what is left, reports
// progress to the end and says what it gave back.
func vacuumKeepsData(t *testing.T, s checkpoint.Saver) {
	keep, drop := newThread("vacuum"), newThread("vacuum")
	kept := chain(t, s, keep, "", 3)
	sized(t, s, drop, "", []int{64 << 10, 64 << 10, 64 << 10, 64 << 10}, []int{64 << 10})
	if err := s.DeleteThread(t.Context(), drop); err != nil {
		t.Fatal(err)
	}
	var last checkpoint.VacuumProgress
	calls := 0
	var inside, overlaps atomic.Int32
	res, err := s.(checkpoint.Vacuumer).Vacuum(t.Context(), checkpoint.VacuumOptions{Progress: func(p checkpoint.VacuumProgress) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inside.Add(-1)
		calls++
		last = p
	}})
	if err != nil {
		t.Fatalf("Vacuum: %v", err)
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("Progress was called while a call was still running (%d times); calls must come one at a time", n)
	}
	if calls == 0 || last.Done != last.Total {
		t.Errorf("progress: %d calls, last %+v; want at least one, ending with Done == Total", calls, last)
	}
	if res.Reclaimed != max(0, res.BytesBefore-res.BytesAfter) || res.Took <= 0 {
		t.Errorf("result %+v: Reclaimed is not Before - After, or no duration", res)
	}
	expectList(t, s, checkpoint.ListOptions{ThreadID: keep}, rev(kept...))
	// The store still takes writes.
	chain(t, s, newThread("vacuum"), "", 2)
}

// ---- thread pages ----

func threadSearcher(s checkpoint.Saver) bool { _, ok := s.(checkpoint.ThreadSearcher); return ok }

func searchCases() []testCase {
	cs := []testCase{
		{name: "pages_follow_list_threads", run: searchPages},
		{name: "search_ignores_case", run: searchText},
		{name: "empty_store", run: searchEmpty},
		{name: "filter_pages", run: searchFilterPages},
		{name: "filter_with_search", run: searchFilterText},
		{name: "filter_top_level_keys", run: searchFilterTopLevel},
		{name: "filter_null_matches_missing", run: searchFilterNull},
		{name: "filter_latest_root_decides", run: searchFilterLatest},
		{name: "filter_invalid", run: searchFilterInvalid},
	}
	for i := range cs {
		cs[i].needs, cs[i].capability = threadSearcher, "checkpoint.ThreadSearcher"
	}
	return cs
}

func searchThreads(t *testing.T, s checkpoint.Saver, q checkpoint.ThreadQuery) checkpoint.ThreadPage {
	t.Helper()
	p, err := s.(checkpoint.ThreadSearcher).SearchThreads(t.Context(), q)
	if err != nil {
		t.Fatalf("SearchThreads(%+v): %v", q, err)
	}
	return p
}

func searchPages(t *testing.T, s checkpoint.Saver) {
	var latest []*checkpoint.Tuple
	for range 5 {
		c := chain(t, s, newThread("page"), "", 2)
		latest = append(latest, c[1])
	}
	// A subgraph checkpoint neither counts nor makes a thread newer.
	mustPut(t, s, checkpoint.Ref{ThreadID: latest[0].Ref.ThreadID, NS: "sub"}, newCP(nil, nil), inputMD(), nil)
	var got []checkpoint.ThreadInfo
	q := checkpoint.ThreadQuery{Limit: 2}
	for pages := 0; ; pages++ {
		p := searchThreads(t, s, q)
		got = append(got, p.Threads...)
		if len(p.Threads) > 2 || pages > 5 {
			t.Fatalf("page %d has %d threads (limit 2)", pages, len(p.Threads))
		}
		if !p.More {
			if pages != 2 {
				t.Errorf("%d pages, want 3", pages+1)
			}
			break
		}
		q.After = &p.Threads[len(p.Threads)-1]
	}
	var want []checkpoint.ThreadInfo
	for i := len(latest) - 1; i >= 0; i-- {
		want = append(want, threadInfo(latest[i], 2))
	}
	expectThreads(t, got, want)
	expectThreads(t, searchThreads(t, s, checkpoint.ThreadQuery{}).Threads, want)
}

func searchText(t *testing.T, s checkpoint.Saver) {
	a := chain(t, s, "Report-Alpha-"+newThread("s"), "", 1)
	chain(t, s, "other-"+newThread("s"), "", 1)
	b := chain(t, s, "REPORT-beta-"+newThread("s"), "", 1)
	p := searchThreads(t, s, checkpoint.ThreadQuery{Search: "report-"})
	expectThreads(t, p.Threads, []checkpoint.ThreadInfo{threadInfo(b[0], 1), threadInfo(a[0], 1)})
	if p.More {
		t.Error("More set on the only page")
	}
	p = searchThreads(t, s, checkpoint.ThreadQuery{Search: "report-", Limit: 1})
	if len(p.Threads) != 1 || !p.More || p.Threads[0].ThreadID != b[0].Ref.ThreadID {
		t.Errorf("first page of 1: %+v", p)
	}
	if p := searchThreads(t, s, checkpoint.ThreadQuery{Search: "nothing-like-this"}); len(p.Threads) != 0 || p.More || p.Threads == nil {
		t.Errorf("no match: %+v, want an empty, non-nil page", p)
	}
}

func searchEmpty(t *testing.T, s checkpoint.Saver) {
	if p := searchThreads(t, s, checkpoint.ThreadQuery{Limit: 10}); len(p.Threads) != 0 || p.More {
		t.Errorf("empty store: %+v", p)
	}
}

// graphThread puts one root checkpoint in thread per metadata in mds,
// each a child of the one before, and returns what ThreadSearcher must
// report for the thread.
func graphThread(t *testing.T, s checkpoint.Saver, thread string, mds ...checkpoint.Metadata) checkpoint.ThreadInfo {
	t.Helper()
	parent := checkpoint.Ref{ThreadID: thread}
	var last *checkpoint.Tuple
	for i, md := range mds {
		cp := newCP(vals("i", fmt.Sprint(i)), vers("i", i+1))
		ref := mustPut(t, s, parent, cp, md, cp.ChannelVersions)
		last = want(ref, parent.CheckpointID, cp, md, cp.ChannelValues)
		parent = ref
	}
	return threadInfo(last, len(mds))
}

// ofGraph is loop metadata of step with the engine's graph key set to
// graph.
func ofGraph(step int, graph string) checkpoint.Metadata {
	md := loopMD(step)
	md.Extra = map[string]any{"graph": graph}
	return md
}

// searchAll pages through every thread q selects, Limit at a time, and
// returns them with the number of pages it took.
func searchAll(t *testing.T, s checkpoint.Saver, q checkpoint.ThreadQuery) ([]checkpoint.ThreadInfo, int) {
	t.Helper()
	var got []checkpoint.ThreadInfo
	for pages := 1; ; pages++ {
		p := searchThreads(t, s, q)
		if q.Limit > 0 && len(p.Threads) > q.Limit {
			t.Fatalf("SearchThreads(%+v): page %d has %d threads (limit %d)", q, pages, len(p.Threads), q.Limit)
		}
		got = append(got, p.Threads...)
		if !p.More {
			return got, pages
		}
		if len(p.Threads) == 0 || pages > 20 {
			t.Fatalf("SearchThreads(%+v): page %d is empty or one of too many, yet More is set", q, pages)
		}
		q.After = &p.Threads[len(p.Threads)-1]
	}
}

// A filter applies before the limit: a page holds Limit matching threads,
// however many others lie between them, and More is set only when more
// matching threads follow.
func searchFilterPages(t *testing.T, s checkpoint.Saver) {
	// Oldest first: b, a, b, a, b, a, b (each thread of two checkpoints).
	var a, b []checkpoint.ThreadInfo
	for i := range 7 {
		g := []string{"b", "a"}[i%2]
		ti := graphThread(t, s, newThread("graph-"+g), ofGraph(0, g), ofGraph(1, g))
		if g == "a" {
			a = append([]checkpoint.ThreadInfo{ti}, a...)
		} else {
			b = append([]checkpoint.ThreadInfo{ti}, b...)
		}
	}
	onlyA := map[string]any{"graph": "a"}
	p := searchThreads(t, s, checkpoint.ThreadQuery{Limit: 2, Filter: onlyA})
	expectThreads(t, p.Threads, a[:2])
	if !p.More {
		t.Error("first page of 2 of 3 matching threads: More is not set")
	}
	p = searchThreads(t, s, checkpoint.ThreadQuery{Limit: 2, Filter: onlyA, After: &p.Threads[1]})
	expectThreads(t, p.Threads, a[2:])
	if p.More {
		t.Error("last matching thread's page: More is set, though only other graphs' threads follow")
	}
	// A page exactly as long as the matches has nothing more.
	if p := searchThreads(t, s, checkpoint.ThreadQuery{Limit: 3, Filter: onlyA}); p.More || len(p.Threads) != 3 {
		t.Errorf("Limit 3 of 3 matching threads: %d threads, More %v; want 3, false", len(p.Threads), p.More)
	}
	got, pages := searchAll(t, s, checkpoint.ThreadQuery{Limit: 2, Filter: map[string]any{"graph": "b"}})
	expectThreads(t, got, b)
	if pages != 2 {
		t.Errorf("graph b's 4 threads, 2 a page, took %d pages, want 2", pages)
	}
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{"graph": "c"}})
	expectThreads(t, got, nil)
	// An empty filter keeps every thread.
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Limit: 3, Filter: map[string]any{}})
	if len(got) != 7 {
		t.Errorf("empty filter: %d threads, want 7", len(got))
	}
}

// Search and Filter both apply.
func searchFilterText(t *testing.T, s checkpoint.Saver) {
	reportA := graphThread(t, s, "Report-"+newThread("s"), ofGraph(0, "a"))
	graphThread(t, s, "report-"+newThread("s"), ofGraph(0, "b"))
	graphThread(t, s, "other-"+newThread("s"), ofGraph(0, "a"))
	reportA2 := graphThread(t, s, "REPORT-"+newThread("s"), ofGraph(0, "a"))
	graphThread(t, s, "report-"+newThread("s"), ofGraph(0, "b"))
	q := checkpoint.ThreadQuery{Search: "report-", Filter: map[string]any{"graph": "a"}, Limit: 1}
	got, pages := searchAll(t, s, q)
	expectThreads(t, got, []checkpoint.ThreadInfo{reportA2, reportA})
	if pages != 2 {
		t.Errorf("2 matching threads, 1 a page: %d pages, want 2", pages)
	}
}

// Filter keys name the metadata's own fields too, and values compare as
// JSON, as in List.
func searchFilterTopLevel(t *testing.T, s checkpoint.Saver) {
	upd := loopMD(2)
	upd.Source = checkpoint.SourceUpdate
	updated := graphThread(t, s, newThread("top"), inputMD(), upd)
	looped := graphThread(t, s, newThread("top"), inputMD(), loopMD(0), loopMD(1))
	run := loopMD(0)
	run.RunID = "run-7"
	ran := graphThread(t, s, newThread("top"), run)
	for _, c := range []struct {
		filter map[string]any
		want   []checkpoint.ThreadInfo
	}{
		{map[string]any{"source": "update"}, []checkpoint.ThreadInfo{updated}},
		{map[string]any{"source": checkpoint.SourceLoop}, []checkpoint.ThreadInfo{ran, looped}},
		{map[string]any{"source": "input"}, nil},
		{map[string]any{"step": 1}, []checkpoint.ThreadInfo{looped}},
		{map[string]any{"step": 2.0, "source": "update"}, []checkpoint.ThreadInfo{updated}},
		{map[string]any{"step": "1"}, nil},
		{map[string]any{"run_id": "run-7"}, []checkpoint.ThreadInfo{ran}},
		{map[string]any{"run_id": nil, "source": "loop"}, []checkpoint.ThreadInfo{looped}},
	} {
		got, _ := searchAll(t, s, checkpoint.ThreadQuery{Filter: c.filter, Limit: 1})
		if len(got) != len(c.want) || len(got) > 0 && !reflect.DeepEqual(got, c.want) {
			t.Errorf("Filter %v:\n got: %+v\nwant: %+v", c.filter, got, c.want)
		}
	}
}

// A nil filter value matches a key that is missing or null.
func searchFilterNull(t *testing.T, s checkpoint.Saver) {
	null := loopMD(0)
	null.Extra = map[string]any{"graph": nil, "other": 1}
	none := graphThread(t, s, newThread("null"), loopMD(0))
	ofA := graphThread(t, s, newThread("null"), ofGraph(0, "a"))
	nulled := graphThread(t, s, newThread("null"), null)
	// A thread with no root checkpoint has no latest metadata to match.
	mustPut(t, s, checkpoint.Ref{ThreadID: newThread("null"), NS: "sub"}, newCP(nil, nil), loopMD(0), nil)
	got, _ := searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{"graph": nil}, Limit: 1})
	expectThreads(t, got, []checkpoint.ThreadInfo{nulled, none})
	// A key no JSON path can name, as in List.
	odd := loopMD(0)
	odd.Extra = map[string]any{`say "hi"\`: true, "graph": "a"}
	oddThread := graphThread(t, s, newThread("null"), odd)
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{`say "hi"\`: true}})
	expectThreads(t, got, []checkpoint.ThreadInfo{oddThread})
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{`say "hi"\`: nil, "graph": "a"}})
	expectThreads(t, got, []checkpoint.ThreadInfo{ofA})
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{`say "hi"\`: nil}, Limit: 2})
	expectThreads(t, got, []checkpoint.ThreadInfo{nulled, ofA, none})
}

// The latest root checkpoint decides: not an older one, nor a subgraph's.
func searchFilterLatest(t *testing.T, s checkpoint.Saver) {
	moved := graphThread(t, s, newThread("latest"), ofGraph(0, "a"), ofGraph(1, "a"), ofGraph(2, "b"))
	stays := graphThread(t, s, newThread("latest"), ofGraph(0, "b"), ofGraph(1, "a"))
	// A newer subgraph checkpoint of graph b does not make stays a b thread.
	sub := ofGraph(0, "b")
	sub.Parents = map[string]string{"": stays.Latest.CheckpointID}
	mustPut(t, s, checkpoint.Ref{ThreadID: stays.ThreadID, NS: "tool:1"}, newCP(nil, nil), sub, nil)
	got, _ := searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{"graph": "a"}, Limit: 1})
	expectThreads(t, got, []checkpoint.ThreadInfo{stays})
	got, _ = searchAll(t, s, checkpoint.ThreadQuery{Filter: map[string]any{"graph": "b"}, Limit: 1})
	expectThreads(t, got, []checkpoint.ThreadInfo{moved})
}

// A filter value that cannot be encoded as JSON is an error naming its
// key, not an empty page.
func searchFilterInvalid(t *testing.T, s checkpoint.Saver) {
	graphThread(t, s, newThread("bad"), ofGraph(0, "a"))
	p, err := s.(checkpoint.ThreadSearcher).SearchThreads(t.Context(), checkpoint.ThreadQuery{Filter: map[string]any{"graph": "a", "weird-key": func() {}}})
	if err == nil {
		t.Fatalf("SearchThreads with a func in the filter: %d threads and no error", len(p.Threads))
	}
	if !strings.Contains(err.Error(), "weird-key") {
		t.Errorf("error %q does not name the key weird-key", err)
	}
}
