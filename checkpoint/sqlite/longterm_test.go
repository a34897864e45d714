package sqlite_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/longterm/longtermtest"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

func newLongTerm(t *testing.T, cfg longterm.Config) longterm.Store {
	lt, err := openTemp(t).LongTerm(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return lt
}

// The suite runs under each search plan, forced by its thresholds, so that
// every plan returns what the memory store returns.
func TestLongTermConformance(t *testing.T) {
	const all = math.MaxInt32
	for _, p := range []struct {
		name              string
		narrow, few, walk int
	}{
		{"default", 2000, 2000, 4000},
		{"prefix_range", all, 0, 0},
		{"field_index", 0, all, 0},
		{"update_walk", 0, 0, all},
		{"short_walk_then_scan", 0, 0, 3},
		{"scan", 0, 0, 0},
	} {
		t.Run(p.name, func(t *testing.T) {
			defer sqlite.SetSearchPlan(p.narrow, p.few, p.walk)()
			longtermtest.Run(t, newLongTerm)
		})
	}
}

// A 10 MB item is put, read back, and found in the store's history and as
// at a past time, whole: the history keeps its value as the item does.
func TestLongTermBigItemRoundTrip(t *testing.T) {
	ctx := t.Context()
	lt, err := openTemp(t).LongTerm(longterm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("tide ", 2<<20) // 10 MiB
	ns := longterm.Namespace{"users", "ada"}
	if err := lt.Put(ctx, ns, "notes", map[string]any{"text": big}); err != nil {
		t.Fatal(err)
	}
	it, err := lt.Get(ctx, ns, "notes")
	if err != nil || it == nil || it.Value["text"] != big {
		t.Fatalf("Get of the 10 MB item: %v", err)
	}
	cs, err := lt.Changes(ctx, longterm.ChangeQuery{Prefix: ns, Key: "notes"})
	if err != nil || len(cs) != 1 || cs[0].Value["text"] != big {
		t.Fatalf("its history: %d changes, %v", len(cs), err)
	}
	items, err := longterm.SearchAt(ctx, lt, longterm.SearchQuery{Prefix: ns}, time.Now())
	if err != nil || len(items) != 1 || items[0].Value["text"] != big {
		t.Fatalf("as at now: %d items, %v", len(items), err)
	}
}
