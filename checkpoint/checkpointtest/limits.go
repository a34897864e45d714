package checkpointtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

// limitCases pin down checkpoint.MaxValueSize, the one limit every saver
// keeps: a value of exactly the limit is stored and read back byte for
// byte, whether it compresses not at all (random) or about 1000×
// (repetitive text); one byte more is refused when written, naming the
// channel, the size and the limit, and nothing is stored.
func limitCases() []testCase {
	var out []testCase
	for _, d := range limitData {
		out = append(out,
			testCase{name: "at_limit/" + d.name, run: func(t *testing.T, s checkpoint.Saver) { atLimit(t, s, d.data()[:checkpoint.MaxValueSize]) }},
			testCase{name: "over_limit/" + d.name, run: func(t *testing.T, s checkpoint.Saver) { overLimit(t, s, d.data()) }})
	}
	out = append(out, testCase{name: "many_repetitive_values", run: manyRepetitiveValues})
	return out
}

// limitData are values of checkpoint.MaxValueSize+1 bytes, made once per
// test binary.
var limitData = []struct {
	name string
	data func() []byte
}{
	{"random", sync.OnceValue(func() []byte {
		b := make([]byte, checkpoint.MaxValueSize+1)
		r := rand.NewChaCha8([32]byte{'w', 'e', 'f', 't'})
		r.Read(b)
		return b
	})},
	{"repetitive", sync.OnceValue(func() []byte {
		return bytes.Repeat([]byte("x"), checkpoint.MaxValueSize+1)
	})},
}

// expectSame fails unless got is want, without printing megabytes.
func expectSame(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes read back, not the %d written", what, len(got), len(want))
	}
}

func atLimit(t *testing.T, s checkpoint.Saver, v []byte) {
	thread := newThread("limit")
	cp := newCP(map[string][]byte{"topic": v}, vers("topic", 1))
	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, cp, inputMD(), vers("topic", 1))
	if err := s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "topic", Value: v}}, "task-1", ""); err != nil {
		t.Fatalf("PutWrites of a value of %d bytes (the limit): %v", len(v), err)
	}
	tp := mustGet(t, s, checkpoint.Ref{ThreadID: thread})
	expectSame(t, "Get: channel topic", tp.Checkpoint.ChannelValues["topic"], v)
	if len(tp.PendingWrites) != 1 {
		t.Fatalf("Get: %d pending writes, want 1", len(tp.PendingWrites))
	}
	expectSame(t, "Get: the pending write", tp.PendingWrites[0].Value, v)
	// A child keeps the value (same version) and reads back with it in
	// history, as List reads a page.
	child := newCP(map[string][]byte{"topic": v, "n": []byte("1")}, vers("topic", 1, "n", 2))
	mustPut(t, s, ref, child, loopMD(0), vers("n", 2))
	tuples := mustList(t, s, checkpoint.ListOptions{ThreadID: thread})
	if len(tuples) != 2 {
		t.Fatalf("List: %d checkpoints, want 2", len(tuples))
	}
	for _, tp := range tuples {
		expectSame(t, "List: checkpoint "+tp.Ref.CheckpointID+" channel topic", tp.Checkpoint.ChannelValues["topic"], v)
	}
}

// expectTooLarge checks err refuses a value of n bytes on channel ch.
func expectTooLarge(t *testing.T, what string, err error, ch string, n int) {
	t.Helper()
	msg := fmt.Sprint(err)
	if !errors.Is(err, checkpoint.ErrValueTooLarge) || !strings.Contains(msg, strconv.Quote(ch)) ||
		!strings.Contains(msg, strconv.Itoa(n)) || !strings.Contains(msg, strconv.Itoa(checkpoint.MaxValueSize)) {
		t.Fatalf("%s of a value of %d bytes = %v; want checkpoint.ErrValueTooLarge naming channel %q, the size and the limit %d",
			what, n, err, ch, checkpoint.MaxValueSize)
	}
}

func overLimit(t *testing.T, s checkpoint.Saver, v []byte) {
	thread := newThread("limit")
	cp := newCP(map[string][]byte{"topic": v, "small": []byte(`"ok"`)}, vers("topic", 1, "small", 1))
	_, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: thread}, cp, inputMD(), vers("topic", 1, "small", 1))
	expectTooLarge(t, "Put", err, "topic", len(v))
	expectNotFound(t, s, checkpoint.Ref{ThreadID: thread})

	ref := mustPut(t, s, checkpoint.Ref{ThreadID: thread}, newCP(vals("small", `"ok"`), vers("small", 1)), inputMD(), vers("small", 1))
	err = s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "small", Value: []byte(`"ok"`)}, {Channel: "topic", Value: v}}, "task-1", "")
	expectTooLarge(t, "PutWrites", err, "topic", len(v))
	if tp := mustGet(t, s, ref); len(tp.PendingWrites) != 0 {
		t.Fatalf("a refused PutWrites stored %d writes; want none (not even the small one)", len(tp.PendingWrites))
	}
}

// manyRepetitiveValues reads a thread whose checkpoints each hold a
// different, highly repetitive value of a fifth of the limit: a page of
// them inflates to many times the limit from a few hundred kilobytes
// stored, and is still honest data every reader must read.
func manyRepetitiveValues(t *testing.T, s checkpoint.Saver) {
	thread := newThread("repetitive")
	const n = 12
	values := make([][]byte, n)
	parent := checkpoint.Ref{ThreadID: thread}
	for i := range n {
		values[i] = bytes.Repeat([]byte{byte('a' + i)}, checkpoint.MaxValueSize/5)
		cp := newCP(map[string][]byte{"topic": values[i]}, vers("topic", i+1))
		md := loopMD(i)
		if i == 0 {
			md = inputMD()
		}
		parent = mustPut(t, s, parent, cp, md, vers("topic", i+1))
		if err := s.PutWrites(t.Context(), parent, []checkpoint.Write{{Channel: "topic", Value: values[i]}}, "task-1", ""); err != nil {
			t.Fatalf("PutWrites %d: %v", i, err)
		}
	}
	tuples := mustList(t, s, checkpoint.ListOptions{ThreadID: thread})
	if len(tuples) != n {
		t.Fatalf("List: %d checkpoints, want %d", len(tuples), n)
	}
	for i, tp := range tuples {
		want := values[n-1-i] // newest first
		expectSame(t, "List: checkpoint "+tp.Ref.CheckpointID+" channel topic", tp.Checkpoint.ChannelValues["topic"], want)
		if len(tp.PendingWrites) != 1 {
			t.Fatalf("List: checkpoint %s has %d pending writes, want 1", tp.Ref.CheckpointID, len(tp.PendingWrites))
		}
		expectSame(t, "List: checkpoint "+tp.Ref.CheckpointID+" pending write", tp.PendingWrites[0].Value, want)
	}
	tp := mustGet(t, s, checkpoint.Ref{ThreadID: thread})
	expectSame(t, "Get: channel topic", tp.Checkpoint.ChannelValues["topic"], values[n-1])
}
