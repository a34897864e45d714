package memory

import (
	"bytes"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
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
			for _, sp := range s.threads["t"].spaces {
				for _, b := range sp.blobs {
					if bytes.Contains(b, []byte(secret)) {
						held++
					}
				}
				for _, ws := range sp.writes {
					for _, w := range ws {
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
