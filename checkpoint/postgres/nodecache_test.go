package postgres_test

import (
	"testing"

	"github.com/weftstudio/weft/checkpoint/nodecache/nodecachetest"
)

func TestNodeCacheConformance(t *testing.T) {
	dsn := testDSN(t)
	s := openSchema(t, dsn, freshSchema(t, dsn))
	nodecachetest.Run(t, s.NodeCache())
}
