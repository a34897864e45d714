package sqlite_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// WriteBatch stores a chain of Puts and PutWrites exactly as the single
// calls would, whether the batch is small or large enough to be encoded on
// two goroutines, encrypted or not; a batch with an invalid op stores
// nothing.
func TestWriteBatchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		size  int // bytes per value
		steps int
		opts  []sqlite.Option
	}{
		{"small", 10, 3, nil},
		{"large", 4 << 10, 8, nil}, // 64 KB of values: the two-goroutine path
		{"large_encrypted", 4 << 10, 8, []sqlite.Option{sqlite.WithEncryptionKey(bytes.Repeat([]byte{7}, 32))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlite.Open(t.TempDir()+"/b.db", tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			value := func(step int, what string) []byte {
				piece := fmt.Sprintf("%s-%d ", what, step)
				return []byte(fmt.Sprintf("%q", strings.Repeat(piece, tc.size/len(piece)+1)[:tc.size]))
			}
			var ops []checkpoint.Op
			parent := checkpoint.Ref{ThreadID: "t"}
			var ids []string
			for i := range tc.steps {
				cp := &checkpoint.Checkpoint{V: checkpoint.FormatVersion, ID: checkpoint.NewID(), TS: time.Now(),
					ChannelValues:   map[string][]byte{"a": value(i, "a"), "b": value(i, "b")},
					ChannelVersions: map[string]int64{"a": int64(i + 1), "b": int64(i + 1)}}
				ops = append(ops, checkpoint.Op{Ref: parent, Checkpoint: cp,
					Metadata: checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, NewVersions: cp.ChannelVersions})
				ref := checkpoint.Ref{ThreadID: "t", CheckpointID: cp.ID}
				ops = append(ops, checkpoint.Op{Ref: ref, TaskID: "task", TaskPath: "p",
					Writes: []checkpoint.Write{{Channel: "a", Value: value(i, "w")}, {Channel: "b"}}})
				ids = append(ids, cp.ID)
				parent = ref
			}
			bad := append(append([]checkpoint.Op{}, ops...), checkpoint.Op{Ref: parent, Writes: []checkpoint.Write{{Channel: "a"}}}) // no task id
			if err := s.WriteBatch(t.Context(), bad); err == nil {
				t.Fatal("a batch with an op lacking a task id was accepted")
			}
			if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t"}); err == nil {
				t.Fatal("a refused batch stored something")
			}
			if err := s.WriteBatch(t.Context(), ops); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "t", CheckpointID: id})
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(tp.Checkpoint.ChannelValues["a"], value(i, "a")) || !bytes.Equal(tp.Checkpoint.ChannelValues["b"], value(i, "b")) {
					t.Errorf("step %d: values differ", i)
				}
				if tp.Metadata.Step != i || len(tp.PendingWrites) != 2 ||
					!bytes.Equal(tp.PendingWrites[0].Value, value(i, "w")) || tp.PendingWrites[1].Value != nil {
					t.Errorf("step %d: metadata %+v, writes %+v", i, tp.Metadata, tp.PendingWrites)
				}
			}
		})
	}
}
