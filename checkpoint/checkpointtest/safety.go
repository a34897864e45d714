package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func safetyCases() []testCase {
	return []testCase{
		{name: "mutating_put_arguments_keeps_history", run: mutatePutArgs},
		{name: "reusing_owned_put_maps_keeps_history", run: reuseOwnedPutMaps, needs: ownedPutter, capability: "checkpoint.OwnedPutter"},
		{name: "mutating_write_arguments_keeps_history", run: mutateWriteArgs},
		{name: "mutating_returned_tuples_keeps_history", run: mutateReturned},
		{name: "mutating_listed_tuples_keeps_history", run: mutateListed},
		{name: "mutating_headers_keeps_history", run: mutateHeaders, needs: headerLister, capability: "checkpoint.HeaderLister"},
		{name: "concurrent_use", run: concurrentUse},
		{name: "canceled_context", run: canceledContext},
	}
}

// richCP is a checkpoint and metadata with every mutable part filled.
func richCP() (checkpoint.Checkpoint, checkpoint.Metadata) {
	cp := newCP(vals("a", "AAAA", "b", "BBBB"), vers("a", 1, "b", 1))
	cp.VersionsSeen = map[string]map[string]int64{"node": {"a": 1}}
	cp.UpdatedChannels = []string{"a", "b"}
	md := checkpoint.Metadata{
		Source:  checkpoint.SourceLoop,
		Step:    1,
		Parents: map[string]string{"": "p"},
		Tasks:   []string{"node"},
		Extra:   map[string]any{"nested": map[string]any{"list": []any{"x"}}},
	}
	return cp, md
}

// scribble changes every mutable part of a tuple in place.
func scribble(tp *checkpoint.Tuple) {
	for _, v := range tp.Checkpoint.ChannelValues {
		for i := range v {
			v[i] = 'X'
		}
	}
	tp.Checkpoint.ChannelValues["new"] = []byte("new")
	tp.Checkpoint.ChannelVersions["a"] = 99
	for _, m := range tp.Checkpoint.VersionsSeen {
		m["a"] = 99
	}
	tp.Checkpoint.VersionsSeen["other"] = map[string]int64{}
	if len(tp.Checkpoint.UpdatedChannels) > 0 {
		tp.Checkpoint.UpdatedChannels[0] = "zzz"
	}
	scribbleMD(&tp.Metadata)
	for i := range tp.PendingWrites {
		for j := range tp.PendingWrites[i].Value {
			tp.PendingWrites[i].Value[j] = 'X'
		}
		tp.PendingWrites[i].Channel = "changed"
	}
	if tp.Parent != nil {
		tp.Parent.CheckpointID = "changed"
	}
}

func scribbleMD(md *checkpoint.Metadata) {
	if md.Parents != nil {
		md.Parents[""] = "changed"
	}
	if len(md.Tasks) > 0 {
		md.Tasks[0] = "changed"
	}
	if md.Extra != nil {
		if n, ok := md.Extra["nested"].(map[string]any); ok {
			n["list"].([]any)[0] = "changed"
			n["added"] = 1
		}
		md.Extra["added"] = true
	}
}

// Mutating what was passed to Put, after Put, never rewrites history.
func mutatePutArgs(t *testing.T, s checkpoint.Saver) {
	thread := newThread("safe")
	cp, md := richCP()
	w := want(checkpoint.Ref{ThreadID: thread, CheckpointID: cp.ID}, "", cp, md, cp.ChannelValues)
	nv := vers("a", 1, "b", 1)
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, md, nv)
	scribble(&checkpoint.Tuple{Checkpoint: cp, Metadata: md})
	nv["a"] = 5
	expectTuple(t, "after mutating Put's arguments", mustGet(t, s, ref), w)
}

func ownedPutter(s checkpoint.Saver) bool { _, ok := s.(checkpoint.OwnedPutter); return ok }

// PutOwned may keep the value bytes, but the maps, slices and metadata stay
// the caller's: reusing them for the next checkpoint (as the engine does)
// rewrites neither checkpoint.
func reuseOwnedPutMaps(t *testing.T, s checkpoint.Saver) {
	op := s.(checkpoint.OwnedPutter)
	thread := newThread("owned")
	cp, md := richCP()
	w1 := want(checkpoint.Ref{ThreadID: thread, CheckpointID: cp.ID}, "", cp, md, cp.ChannelValues)
	w1 = w1.Clone()
	nv := vers("a", 1, "b", 1)
	ref1, err := op.PutOwned(t.Context(), checkpoint.Ref{ThreadID: thread}, cp, md, nv)
	if err != nil {
		t.Fatal(err)
	}
	// The next checkpoint reuses every map and slice, changed in place.
	cp.ID = checkpoint.NewID()
	cp.ChannelValues = map[string][]byte{"a": []byte("A2")}
	cp.ChannelVersions["a"] = 2
	cp.VersionsSeen["node"]["a"] = 2
	cp.UpdatedChannels[0], cp.UpdatedChannels = "a", cp.UpdatedChannels[:1]
	clear(nv)
	nv["a"] = 2
	md.Step = 2
	md.Tasks[0] = "other"
	md.Parents[""] = "q"
	md.Extra["nested"].(map[string]any)["list"].([]any)[0] = "y"
	w2 := want(checkpoint.Ref{ThreadID: thread, CheckpointID: cp.ID}, ref1.CheckpointID, cp, md, map[string][]byte{"a": []byte("A2"), "b": []byte("BBBB")})
	w2 = w2.Clone()
	ref2, err := op.PutOwned(t.Context(), ref1, cp, md, nv)
	if err != nil {
		t.Fatal(err)
	}
	scribble(&checkpoint.Tuple{Checkpoint: checkpoint.Checkpoint{ChannelValues: map[string][]byte{}, ChannelVersions: cp.ChannelVersions, VersionsSeen: cp.VersionsSeen, UpdatedChannels: cp.UpdatedChannels}, Metadata: md})
	clear(nv)
	expectTuple(t, "first checkpoint", mustGet(t, s, ref1), w1)
	expectTuple(t, "second checkpoint", mustGet(t, s, ref2), w2)
}

// Mutating a write's value after PutWrites never rewrites history.
func mutateWriteArgs(t *testing.T, s checkpoint.Saver) {
	ref := putOne(t, s, "")
	ws := []checkpoint.Write{{Channel: "ch", Value: []byte("value")}}
	if err := s.PutWrites(t.Context(), ref, ws, "task", ""); err != nil {
		t.Fatal(err)
	}
	ws[0].Value[0] = 'X'
	ws[0].Channel = "other"
	expectWrites(t, s, ref, pw("task", "ch", "value"))
}

// Mutating a tuple returned by Get never changes what the next Get returns.
func mutateReturned(t *testing.T, s checkpoint.Saver) {
	thread := newThread("safe")
	cp, md := richCP()
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread, CheckpointID: "parent-id"}, cp, md, cp.ChannelVersions)
	mustWrites(t, s, ref, "task", "", "ch", "value")
	first := mustGet(t, s, ref)
	w := first.Clone()
	scribble(first)
	expectTuple(t, "second Get", mustGet(t, s, ref), w)
}

// The same for tuples yielded by List.
func mutateListed(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	for tp, err := range s.List(t.Context(), checkpoint.ListOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		scribble(tp)
	}
	expectList(t, s, checkpoint.ListOptions{}, f.everyone)
}

// The same for headers.
func mutateHeaders(t *testing.T, s checkpoint.Saver) {
	f := fill(t, s)
	hs, err := s.(checkpoint.HeaderLister).ListHeaders(t.Context(), checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range hs {
		scribbleMD(&hs[i].Metadata)
		if hs[i].Parent != nil {
			hs[i].Parent.CheckpointID = "changed"
		}
	}
	expectList(t, s, checkpoint.ListOptions{}, f.everyone)
	again, err := s.(checkpoint.HeaderLister).ListHeaders(t.Context(), checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range again {
		if h.Ref != f.everyone[i].Ref || (h.Parent == nil) != (f.everyone[i].Parent == nil) || (h.Parent != nil && *h.Parent != *f.everyone[i].Parent) {
			t.Fatalf("header %d changed: %+v", i, h)
		}
	}
}

// Savers are safe for concurrent use: writers on their own threads, readers
// listing everything, all at once; nothing is lost.
func concurrentUse(t *testing.T, s checkpoint.Saver) {
	const writers, perWriter = 6, 20
	var wg sync.WaitGroup
	errs := make(chan error, writers*perWriter*4)
	threads := make([]string, writers)
	for w := range writers {
		threads[w] = newThread("conc")
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parent := checkpoint.Ref{ThreadID: threads[w]}
			for i := range perWriter {
				cp := newCP(vals("i", fmt.Sprint(i)), vers("i", i+1))
				ref, err := s.Put(t.Context(), parent, cp, loopMD(i), cp.ChannelVersions)
				if err != nil {
					errs <- err
					return
				}
				if err := s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "i", Value: []byte("w")}}, "task", ""); err != nil {
					errs <- err
				}
				parent = ref
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				for _, err := range s.List(t.Context(), checkpoint.ListOptions{Limit: 20}) {
					if err != nil {
						errs <- err
						return
					}
				}
				for _, th := range threads {
					if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: th}); err != nil && !isNotFound(err) {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, th := range threads {
		got := mustList(t, s, checkpoint.ListOptions{ThreadID: th})
		if len(got) != perWriter {
			t.Errorf("thread %s has %d checkpoints, want %d", th, len(got), perWriter)
			continue
		}
		if v := string(got[0].Checkpoint.ChannelValues["i"]); v != fmt.Sprint(perWriter-1) {
			t.Errorf("thread %s latest value %q", th, v)
		}
		if len(got[0].PendingWrites) != 1 {
			t.Errorf("thread %s latest has %d writes", th, len(got[0].PendingWrites))
		}
	}
}

// A canceled context fails the call instead of doing the work.
func canceledContext(t *testing.T, s checkpoint.Saver) {
	thread := newThread("ctx")
	ctx, cancel := contextWithCancel(t)
	cancel()
	cp := newCP(nil, nil)
	if _, err := s.Put(ctx, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil); err == nil {
		t.Error("Put with a canceled context: no error")
	}
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})
	mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), nil)
	if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread}); err == nil {
		t.Error("Get with a canceled context: no error")
	}
	n := 0
	var lerr error
	for _, err := range s.List(ctx, checkpoint.ListOptions{}) {
		if err != nil {
			lerr = err
			break
		}
		n++
	}
	if lerr == nil {
		t.Errorf("List with a canceled context yielded %d tuples and no error", n)
	}
}

func isNotFound(err error) bool { return errors.Is(err, checkpoint.ErrNotFound) }

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
