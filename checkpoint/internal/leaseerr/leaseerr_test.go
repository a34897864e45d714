package leaseerr

import (
	"errors"
	"testing"

	"github.com/weftstudio/weft/checkpoint"
)

func TestLost(t *testing.T) {
	cur := checkpoint.Lease{ThreadID: "t", Owner: "other", Token: "x"}
	for _, c := range []struct {
		name string
		has  bool
	}{{"held by another", true}, {"gone", false}} {
		t.Run(c.name, func(t *testing.T) {
			err := Lost("t", cur, c.has)
			if !errors.Is(err, checkpoint.ErrLeaseLost) {
				t.Fatalf("%v is not ErrLeaseLost", err)
			}
			var lost *checkpoint.LeaseLostError
			if !errors.As(err, &lost) || lost.ThreadID != "t" {
				t.Fatalf("error %#v", err)
			}
			switch {
			case c.has && (lost.Now == nil || *lost.Now != cur):
				t.Errorf("Now = %v, want %v", lost.Now, cur)
			case !c.has && lost.Now != nil:
				t.Errorf("Now = %v, want nil", lost.Now)
			}
		})
	}
}
