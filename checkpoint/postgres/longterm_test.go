package postgres_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/longterm/longtermtest"
)

func TestLongTermConformance(t *testing.T) {
	testDSN(t)
	longtermtest.Run(t, func(t *testing.T, cfg longterm.Config) longterm.Store {
		s, _ := openFresh(t)
		lt, err := s.LongTerm(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return lt
	})
}
