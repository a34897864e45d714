package sqlite_test

import (
	"math"
	"testing"

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
