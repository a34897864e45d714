package agentview_test

import (
	"context"
	"sync"
	"testing"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/lgserver"
)

// BenchmarkThreadList opens LangGraph's dev server holding 100 threads of
// the approval graph, each waiting at its subgraph's interrupt, and lists
// them as the studio's thread list does: a page of 100 threads (each
// thread's head read for its latest checkpoint), then each thread's state
// for its status.
//
//	go test ./agentview -run '^$' -bench ThreadList -benchtime 5x
func BenchmarkThreadList(b *testing.B) {
	srv := lgserver.Start(b)
	ctx := context.Background()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	sem := make(chan struct{}, 4)
	for range 100 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			th, err := c.CreateThread(ctx, agentclient.ThreadCreate{})
			if err == nil {
				_, err = c.Wait(ctx, th.ThreadID, agentclient.RunRequest{AssistantID: "approval", Input: map[string]any{"topic": "otters"}})
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	v, err := agentview.Open(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	var g *engine.Graph
	for _, gr := range v.Graphs() {
		if gr.Name == "approval" {
			g = gr.Graph
		}
	}
	ts := v.Saver().(checkpoint.ThreadSearcher)
	b.ResetTimer()
	for b.Loop() {
		page, err := ts.SearchThreads(ctx, checkpoint.ThreadQuery{Limit: 100})
		if err != nil || len(page.Threads) != 100 {
			b.Fatal(len(page.Threads), err)
		}
		for _, in := range page.Threads {
			if _, err := g.GetState(ctx, engine.WithThread(in.ThreadID)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
