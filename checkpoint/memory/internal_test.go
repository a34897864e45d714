package memory

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// With a key, what the saver holds is ciphertext; without, plaintext (the
// control that shows the check can tell).
func TestValuesHeldEncrypted(t *testing.T) {
	const secret = "PLAINTEXT-MARKER"
	for _, tc := range []struct {
		name      string
		opts      []Option
		plaintext bool
	}{
		{"plain", nil, true},
		{"encrypted", []Option{WithEncryptionKey(bytes.Repeat([]byte{1}, 32))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.opts...)
			cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(),
				ChannelValues: map[string][]byte{"c": []byte(secret)}, ChannelVersions: map[string]int64{"c": 1}}
			ref, err := s.Put(t.Context(), checkpoint.Ref{ThreadID: "t"}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput}, cp.ChannelVersions)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.PutWrites(t.Context(), ref, []checkpoint.Write{{Channel: "c", Value: []byte(secret)}}, "task", ""); err != nil {
				t.Fatal(err)
			}
			held := 0
			for _, sp := range s.threads["t"].all() {
				for _, c := range sp.blobs {
					for _, e := range c.vs {
						if bytes.Contains(e.value, []byte(secret)) {
							held++
						}
					}
				}
				for _, rec := range sp.cps {
					for _, w := range rec.writes {
						if bytes.Contains(w.value, []byte(secret)) {
							held++
						}
					}
				}
			}
			if tc.plaintext && held != 2 || !tc.plaintext && held != 0 {
				t.Fatalf("%d stored values hold the plaintext", held)
			}
			tp, err := s.Get(t.Context(), ref)
			if err != nil || string(tp.Checkpoint.ChannelValues["c"]) != secret || string(tp.PendingWrites[0].Value) != secret {
				t.Fatalf("Get = %+v, %v", tp, err)
			}
		})
	}
}

// Headers read back as they were put, nil and empty kept apart, and a
// damaged header is an error naming the checkpoint rather than a wrong
// checkpoint.
func TestHeaderRoundTrip(t *testing.T) {
	var n names
	for _, cp := range []checkpoint.Checkpoint{
		{V: 4},
		{V: 4, ChannelVersions: map[string]int64{}, VersionsSeen: map[string]map[string]int64{}, UpdatedChannels: []string{}},
		{V: 1, ChannelVersions: map[string]int64{"a": 1, "b": -1 << 62, "c": 1<<62 + 5},
			VersionsSeen:    map[string]map[string]int64{"n1": {"a": 1}, "n2": nil, "n3": {}},
			UpdatedChannels: []string{"b", "a"}},
	} {
		var a record.Arena
		b := n.encodeHeader(&a, &cp)
		got, err := n.decodeHeader(b, "id", time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		want := cp
		want.ID = "id"
		if want.ChannelVersions == nil {
			want.ChannelVersions = map[string]int64{}
		}
		if want.VersionsSeen == nil {
			want.VersionsSeen = map[string]map[string]int64{}
		}
		want.ChannelValues = map[string][]byte{}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %#v\nwant %#v", got, want)
		}
		for _, bad := range [][]byte{b[:len(b)-1], append(slices.Clone(b), 0), {0xff}} {
			if _, err := n.decodeHeader(bad, "id", time.Time{}); err == nil || !strings.Contains(err.Error(), "checkpoint id") {
				t.Errorf("damaged header %x: err = %v", bad, err)
			}
		}
	}
}

// Threads that share value slices after CopyThread never see each other's
// later values, whether appended or inserted (a fork's lower version).
func TestCopiedThreadsDoNotShareLaterValues(t *testing.T) {
	ctx := t.Context()
	s := New()
	put := func(thread string, v int64, val string) {
		t.Helper()
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), TS: time.Now(),
			ChannelValues: map[string][]byte{"a": []byte(val)}, ChannelVersions: map[string]int64{"a": v}}
		if _, err := s.PutOwned(ctx, checkpoint.Ref{ThreadID: thread}, cp, checkpoint.Metadata{Source: checkpoint.SourceInput}, cp.ChannelVersions); err != nil {
			t.Fatal(err)
		}
	}
	for v := int64(10); v <= 40; v += 10 { // room in the slice for an append
		put("t", v, "t")
	}
	if err := s.CopyThread(ctx, "t", "u"); err != nil {
		t.Fatal(err)
	}
	put("t", 50, "t-only")
	put("u", 60, "u-only")
	put("u", 15, "u-fork")
	put("t", 5, "t-fork")
	versions := func(thread string) []int64 {
		var out []int64
		for _, e := range s.threads[thread].root.blobs["a"].vs {
			out = append(out, e.version)
			if v, _ := s.threads[thread].root.blobs.get("a", e.version); v == nil {
				t.Errorf("thread %s: version %d not found", thread, e.version)
			}
		}
		return out
	}
	if got, want := versions("t"), []int64{5, 10, 20, 30, 40, 50}; !slices.Equal(got, want) {
		t.Errorf("thread t versions %v, want %v", got, want)
	}
	if got, want := versions("u"), []int64{10, 15, 20, 30, 40, 60}; !slices.Equal(got, want) {
		t.Errorf("thread u versions %v, want %v", got, want)
	}
}
