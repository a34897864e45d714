package langgraph

import (
	"context"
	"reflect"
	"testing"
)

// bothWays reads every thread of both SQLite fixtures twice, after before
// and after after (each setting how a thread is decoded), and calls check
// with the two reads of each thread.
func bothWays(t *testing.T, before, after func(), check func(t *testing.T, r *Reader, id string, a, b *Thread)) {
	for _, c := range []storeCase{sqliteCase("py-sqlite", knownPython), sqliteCase("js-sqlite", knownJS)} {
		t.Run(c.name, func(t *testing.T) {
			r := c.open(t)
			ctx := context.Background()
			threads, err := r.ListThreads(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range threads {
				before()
				a, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				after()
				b, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				check(t, r, th.ThreadID, a, b)
			}
		})
	}
}

// A thread decoded on several goroutines (as long threads are) is the
// thread decoded on one: for every thread of both SQLite fixtures, with
// the threshold lowered so that each is cut into runs.
func TestParallelDecodeIsSerialDecode(t *testing.T) {
	defer func(n int) { parallelFrom = n }(parallelFrom)
	cut := 0
	bothWays(t, func() { parallelFrom = 1 << 30 }, func() { parallelFrom = 1 }, // every checkpoint count is cut into runs
		func(t *testing.T, r *Reader, id string, serial, parallel *Thread) {
			if len(serial.Checkpoints) > 1 {
				cut++
			}
			if !reflect.DeepEqual(serial, parallel) {
				t.Errorf("thread %s decodes differently on several goroutines", id)
			}
			js := r.Kind().JS()
			if !reflect.DeepEqual(serial.History(js), parallel.History(js)) {
				t.Errorf("thread %s: its history differs when decoded on several goroutines", id)
			}
		})
	if cut == 0 {
		t.Fatal("no thread had two checkpoints to share out")
	}
}

// A thread whose rows are decoded as they are read (as rows of a megabyte
// and more are) is the thread decoded after reading: for every thread of
// both SQLite fixtures, with every row and write decoded as read.
func TestInlineDecodeIsDecode(t *testing.T) {
	defer func(n int) { inlineDecode = n }(inlineDecode)
	bothWays(t, func() { inlineDecode = 1 << 62 }, func() { inlineDecode = 1 }, // every row and write as it is read
		func(t *testing.T, _ *Reader, id string, after, inline *Thread) {
			if !reflect.DeepEqual(after, inline) {
				t.Errorf("thread %s decodes differently as read", id)
			}
		})
}
