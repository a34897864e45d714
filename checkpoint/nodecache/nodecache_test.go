package nodecache_test

import (
	"context"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache"
	"github.com/weftstudio/weft/checkpoint/nodecache/nodecachetest"
)

func TestMemoryConformance(t *testing.T) { nodecachetest.Run(t, nodecache.NewMemory()) }

func TestMemoryExpiryDropsEntry(t *testing.T) {
	c := nodecache.NewMemory()
	now := time.Unix(1000, 0)
	c.SetClock(func() time.Time { return now })
	ctx := context.Background()
	if err := c.Set(ctx, "g|a", "k", []checkpoint.Write{{Channel: "x", Value: []byte("1")}}, time.Second); err != nil {
		t.Fatal(err)
	}
	now = now.Add(999 * time.Millisecond)
	if _, ok, _ := c.Get(ctx, "g|a", "k"); !ok {
		t.Fatal("missed 1 ms before expiry")
	}
	now = now.Add(time.Millisecond)
	if _, ok, _ := c.Get(ctx, "g|a", "k"); ok {
		t.Fatal("hit at expiry")
	}
	if c.Len() != 0 {
		t.Fatalf("Len = %d after the expired entry was read, want 0", c.Len())
	}
}
