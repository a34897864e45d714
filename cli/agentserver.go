package cli

import (
	"time"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// agentServerOption mounts LangGraph's Agent Server API at the root of
// weft serve's address, beside AG-UI's /agents/<graph>: one assistant per
// graph, its id the graph's AG-UI slug (two graphs with one slug are
// refused by agui.Serve).
func agentServerOption(s checkpoint.Saver, graphs []*engine.Graph, ttl time.Duration, ltc longterm.Config) (agui.Option, error) {
	byID := map[string]*engine.Graph{}
	for _, g := range graphs {
		byID[agui.Slug(g.Name())] = g
	}
	opts := []agentserver.Option{agentserver.WithLeaseTTL(ttl)}
	if lt, err := store.LongTerm(s, ltc); err == nil { // LangGraph's clients get the memories the graphs keep
		opts = append(opts, agentserver.WithLongTerm(lt))
	}
	h, err := agentserver.New(byID, s, opts...)
	if err != nil {
		return nil, err
	}
	return agui.WithRoot(h), nil
}
