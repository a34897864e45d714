// Package nodecachetest is the conformance suite every nodecache.Cache
// passes with one call.
package nodecachetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// Run checks c against the Cache contract: misses, round trips, replacing,
// namespaces kept apart, clearing some or all namespaces, and expiry (it
// waits a little over 50 ms for that). c should start empty; Run clears
// it first and last.
func Run(t *testing.T, c nodecache.Cache) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	get := func(ns, key string) ([]checkpoint.Write, bool) {
		t.Helper()
		ws, ok, err := c.Get(ctx, ns, key)
		must(err)
		return ws, ok
	}
	must(c.Clear(ctx))
	t.Cleanup(func() { _ = c.Clear(context.Background()) })

	if _, ok := get("g|a", "k"); ok {
		t.Fatal("Get on an empty cache found an entry")
	}
	ws := []checkpoint.Write{{Channel: "count", Value: []byte("1")}, {Channel: "branch:to:b", Value: nil}, {Channel: "log", Value: []byte(`"a"`)}}
	must(c.Set(ctx, "g|a", "k", ws, 0))
	ws[0].Value[0] = '9' // the cache keeps its own copy
	got, ok := get("g|a", "k")
	if !ok {
		t.Fatal("Get after Set missed")
	}
	if want := "[count=1 branch:to:b= log=\"a\"]"; show(got) != want {
		t.Fatalf("Get = %s, want %s", show(got), want)
	}
	if _, ok := get("g|a", "other"); ok {
		t.Fatal("Get of another key hit")
	}
	if _, ok := get("g|b", "k"); ok {
		t.Fatal("Get of the same key in another namespace hit")
	}

	must(c.Set(ctx, "g|a", "k", []checkpoint.Write{{Channel: "count", Value: []byte("2")}}, 0))
	if got, _ := get("g|a", "k"); show(got) != "[count=2]" {
		t.Fatalf("Get after a second Set = %s, want [count=2]", show(got))
	}
	must(c.Set(ctx, "g|a", "empty", nil, 0))
	if got, ok := get("g|a", "empty"); !ok || len(got) != 0 {
		t.Fatalf("an entry of no writes: Get = %s, %v; want [], true", show(got), ok)
	}

	must(c.Set(ctx, "g|b", "k", []checkpoint.Write{{Channel: "x", Value: []byte("3")}}, 0))
	must(c.Set(ctx, "h|a", "k", []checkpoint.Write{{Channel: "x", Value: []byte("4")}}, 0))
	must(c.Clear(ctx, "g|a"))
	if _, ok := get("g|a", "k"); ok {
		t.Fatal("Clear of the namespace left its entry")
	}
	if _, ok := get("g|b", "k"); !ok {
		t.Fatal("Clear of one namespace removed another's entry")
	}
	must(c.Clear(ctx, "g|b", "nothing-here"))
	if _, ok := get("g|b", "k"); ok {
		t.Fatal("Clear of two namespaces left an entry")
	}
	if _, ok := get("h|a", "k"); !ok {
		t.Fatal("Clear of other namespaces removed h|a's entry")
	}
	must(c.Clear(ctx))
	if _, ok := get("h|a", "k"); ok {
		t.Fatal("Clear of every namespace left an entry")
	}

	must(c.Set(ctx, "g|a", "short", []checkpoint.Write{{Channel: "x", Value: []byte("5")}}, 50*time.Millisecond))
	must(c.Set(ctx, "g|a", "long", []checkpoint.Write{{Channel: "x", Value: []byte("6")}}, time.Hour))
	if _, ok := get("g|a", "short"); !ok {
		t.Fatal("an entry missed before its TTL")
	}
	time.Sleep(70 * time.Millisecond)
	if _, ok := get("g|a", "short"); ok {
		t.Fatal("an entry was returned after its TTL")
	}
	if _, ok := get("g|a", "long"); !ok {
		t.Fatal("an entry of an hour's TTL missed")
	}
}

func show(ws []checkpoint.Write) string {
	s := "["
	for i, w := range ws {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%s=%s", w.Channel, w.Value)
	}
	return s + "]"
}
