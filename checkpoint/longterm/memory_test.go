package longterm_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/longterm/longtermtest"
)

func TestMemoryConformance(t *testing.T) {
	longtermtest.Run(t, func(t *testing.T, cfg longterm.Config) longterm.Store { return longterm.NewMemory(cfg) })
}
