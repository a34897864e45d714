package langgraph

import (
	"context"
	"reflect"
	"testing"
)

// A thread decoded on several goroutines (as long threads are) is the
// thread decoded on one: for every thread of both SQLite fixtures, with
// the threshold lowered so that each is cut into runs.
func TestParallelDecodeIsSerialDecode(t *testing.T) {
	defer func(n int) { parallelFrom = n }(parallelFrom)
	for _, c := range []storeCase{sqliteCase("py-sqlite", knownPython), sqliteCase("js-sqlite", knownJS)} {
		t.Run(c.name, func(t *testing.T) {
			r := c.open(t)
			ctx := context.Background()
			threads, err := r.ListThreads(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			cut := 0
			for _, th := range threads {
				parallelFrom = 1 << 30
				serial, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				parallelFrom = 1 // every checkpoint count is cut into runs
				parallel, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				if len(serial.Checkpoints) > 1 {
					cut++
				}
				if !reflect.DeepEqual(serial, parallel) {
					t.Errorf("thread %s decodes differently on several goroutines", th.ThreadID)
				}
				js := r.Kind().JS()
				if !reflect.DeepEqual(serial.History(js), parallel.History(js)) {
					t.Errorf("thread %s: its history differs when decoded on several goroutines", th.ThreadID)
				}
			}
			if cut == 0 {
				t.Fatal("no thread had two checkpoints to share out")
			}
		})
	}
}

// A thread whose rows are decoded as they are read (as rows of a megabyte
// and more are) is the thread decoded after reading: for every thread of
// both SQLite fixtures, with every row and write decoded as read.
func TestInlineDecodeIsDecode(t *testing.T) {
	defer func(n int) { inlineDecode = n }(inlineDecode)
	for _, c := range []storeCase{sqliteCase("py-sqlite", knownPython), sqliteCase("js-sqlite", knownJS)} {
		t.Run(c.name, func(t *testing.T) {
			r := c.open(t)
			ctx := context.Background()
			threads, err := r.ListThreads(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range threads {
				inlineDecode = 1 << 62
				after, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				inlineDecode = 1 // every row and write as it is read
				inline, err := r.ReadThread(ctx, th.ThreadID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(after, inline) {
					t.Errorf("thread %s decodes differently as read", th.ThreadID)
				}
			}
		})
	}
}
