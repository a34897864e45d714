package sqlite_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/longterm/longtermtest"
)

func TestLongTermConformance(t *testing.T) {
	longtermtest.Run(t, func(t *testing.T, cfg longterm.Config) longterm.Store {
		lt, err := openTemp(t).LongTerm(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return lt
	})
}
