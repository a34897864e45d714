package memory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/checkpointtest"
	"github.com/weftstudio/weft/checkpoint/crypt"
	"github.com/weftstudio/weft/checkpoint/memory"
)

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return memory.New() })
}

func TestConformanceEncrypted(t *testing.T) {
	key := []byte("0123456789abcdef")
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return memory.New(memory.WithEncryptionKey(key)) })
}

// A bad key never silently stores plaintext: every method fails.
func TestInvalidKeyFailsEveryCall(t *testing.T) {
	s := memory.New(memory.WithEncryptionKey([]byte("short")))
	ctx := t.Context()
	ref := checkpoint.Ref{ThreadID: "t", CheckpointID: checkpoint.NewID()}
	cp := checkpoint.Checkpoint{V: 4, ID: ref.CheckpointID, TS: time.Now()}
	_, putErr := s.Put(ctx, ref, cp, checkpoint.Metadata{Source: checkpoint.SourceInput}, nil)
	_, getErr := s.Get(ctx, ref)
	var listErr error
	for _, err := range s.List(ctx, checkpoint.ListOptions{}) {
		listErr = err
	}
	_, headersErr := s.ListHeaders(ctx, checkpoint.ListOptions{})
	_, threadsErr := s.ListThreads(ctx, 0)
	_, statsErr := s.Stats(ctx)
	for name, err := range map[string]error{
		"Put": putErr, "Get": getErr, "List": listErr, "ListHeaders": headersErr, "ListThreads": threadsErr, "Stats": statsErr,
		"PutWrites":    s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "a"}}, "task", ""),
		"DeleteThread": s.DeleteThread(ctx, "t"),
		"Prune":        s.Prune(ctx, []string{"t"}, 1),
		"CopyThread":   s.CopyThread(ctx, "t", "u"),
	} {
		if !errors.Is(err, crypt.ErrBadKey) {
			t.Errorf("%s = %v, want ErrBadKey", name, err)
		}
	}
}
