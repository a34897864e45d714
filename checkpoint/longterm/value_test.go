package longterm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// A value larger than MaxValueSize is refused, naming its size, and
// nothing is stored.
func TestPutRefusesHugeValue(t *testing.T) {
	s := longterm.NewMemory(longterm.Config{})
	ns := longterm.Namespace{"a"}
	err := s.Put(context.Background(), ns, "k", map[string]any{"x": strings.Repeat("y", longterm.MaxValueSize)})
	if !errors.Is(err, longterm.ErrInvalid) || !strings.Contains(err.Error(), "bytes of JSON") {
		t.Fatalf("huge value: %v, want ErrInvalid naming its size", err)
	}
	if it, _ := s.Get(context.Background(), ns, "k"); it != nil {
		t.Error("the refused value was stored")
	}
}
