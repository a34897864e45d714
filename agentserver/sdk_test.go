package agentserver_test

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentserver"
	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/nodetest"
)

// TestSDK runs LangGraph's own JS SDK (@langchain/langgraph-sdk 1.15.0,
// pinned in e2e/package-lock.json) under Node against the server weft
// serve runs (agui.Serve with the Agent Server API at its root, a SQLite
// store, a token the SDK sends as X-Api-Key), through the writing
// assistant: assistants, the graph, a thread with metadata, a stream to
// the review interrupt, state, history, a resume with a Command, a search
// by metadata, a fork, a background run and join, and a refused resume;
// then the tool agent's tokens in messages-tuple and map-reduce's subgraph
// events named mode|namespace, on stateless runs; and two runs rolled
// back, by multitaskStrategy "rollback" and by a cancel with action
// "rollback".
func TestSDK(t *testing.T) {
	const token = "sdk-token"
	sv := sdkServer(t, token, map[string]*engine.Graph{"slow": slowGraph(t)}) // a run still going when the next comes, for the rollbacks
	out := sv.script(t, 2*time.Minute, "sdk.mjs", sv.base, token)
	var seen struct {
		Assistants      []string
		Assistant       string
		GraphNodes      []string
		ThreadMetadata  map[string]any
		Events          []string
		FirstEvent      string
		StreamInterrupt map[string]any
		LastValuesKeys  []string
		StateNext       []string
		StateInterrupt  map[string]any
		StateCheckpoint string
		ThreadStatus    string
		HistoryHead     string
		HistorySteps    []string
		Resumed         struct {
			Published *string
		}
		Found []struct {
			ID     bool
			Status string
		}
		ForkCheckpoint string
		ForkEvents     []string
		BgStatus       string
		BgFinal        string
		BadResume      struct {
			Status  int
			Message string
		}
		Messages []struct {
			Type string
			Node string
		}
		SubgraphEvents []string
		Rollback       struct {
			Steps                 bool
			N                     float64
			FirstGone, SecondGone any
			KeptBefore            bool
			Added                 int
			SameAsMid             bool
			Status                string
			Runs                  int
		}
	}
	if err := nodetest.LastJSON(out, &seen); err != nil {
		t.Fatalf("node printed %s: %v", out, err)
	}
	if !slices.Contains(seen.Assistants, "writing-assistant") || seen.Assistant != "writing-assistant" {
		t.Errorf("assistants %v, get → %q", seen.Assistants, seen.Assistant)
	}
	if !slices.Contains(seen.GraphNodes, "review") || !slices.Contains(seen.GraphNodes, "__start__") {
		t.Errorf("graph nodes %v", seen.GraphNodes)
	}
	if seen.ThreadMetadata["via"] != "sdk" {
		t.Errorf("thread metadata %v", seen.ThreadMetadata)
	}
	if seen.FirstEvent != "metadata" {
		t.Errorf("first event %q, want metadata", seen.FirstEvent)
	}
	for _, e := range []string{"updates", "values", "debug"} {
		if !slices.Contains(seen.Events, e) {
			t.Errorf("events %v lack %s", seen.Events, e)
		}
	}
	if seen.StreamInterrupt["id"] == nil || seen.StreamInterrupt["id"] != seen.StateInterrupt["id"] {
		t.Errorf("interrupt in the stream %v, on the state's task %v", seen.StreamInterrupt, seen.StateInterrupt)
	}
	// The writing assistant follows Python LangGraph (the default
	// reference): its values chunk at the interrupt is the state with
	// "__interrupt__" (LangGraph.js's server sends "__interrupt__" alone).
	if !slices.Contains(seen.LastValuesKeys, "__interrupt__") || !slices.Contains(seen.LastValuesKeys, "topic") {
		t.Errorf("last values chunk keys %v, want the state's and __interrupt__", seen.LastValuesKeys)
	}
	if !slices.Equal(seen.StateNext, []string{"review"}) || seen.ThreadStatus != "interrupted" {
		t.Errorf("state next %v, thread status %q", seen.StateNext, seen.ThreadStatus)
	}
	if seen.HistoryHead == "" || seen.HistoryHead != seen.StateCheckpoint {
		t.Errorf("history head %q, state checkpoint %q", seen.HistoryHead, seen.StateCheckpoint)
	}
	if len(seen.HistorySteps) == 0 || seen.HistorySteps[len(seen.HistorySteps)-1] != "-1:input:__start__" || seen.HistorySteps[0] != "4:loop:review" {
		t.Errorf("history %v", seen.HistorySteps)
	}
	if seen.Resumed.Published == nil || !strings.Contains(*seen.Resumed.Published, "TIDE POOLS") {
		t.Errorf("resumed run's values: published %v", seen.Resumed.Published)
	}
	if len(seen.Found) != 1 || !seen.Found[0].ID || seen.Found[0].Status != "idle" {
		t.Errorf("search by metadata found %+v", seen.Found)
	}
	if seen.ForkCheckpoint == "" || !slices.Equal(seen.ForkEvents, []string{"metadata:attempt,run_id", "updates:__interrupt__"}) {
		t.Errorf("fork %q streamed %v", seen.ForkCheckpoint, seen.ForkEvents)
	}
	if seen.BgStatus != "pending" || seen.BgFinal != "success" {
		t.Errorf("background run: %q at creation, %q after join", seen.BgStatus, seen.BgFinal)
	}
	if seen.BadResume.Status != 400 || !strings.Contains(seen.BadResume.Message, "no interrupt waiting") {
		t.Errorf("resume with nothing waiting: %+v", seen.BadResume)
	}
	if len(seen.Messages) == 0 {
		t.Errorf("the tool agent streamed no messages-tuple events")
	}
	for _, m := range seen.Messages {
		if m.Type != "AIMessageChunk" || m.Node != "agent" {
			t.Errorf("a messages-tuple event: %+v, want an AIMessageChunk of node agent", m)
		}
	}
	if !slices.Contains(seen.SubgraphEvents, "updates|summarize") {
		t.Errorf("map-reduce with stream_subgraphs: events %v, want updates|summarize:<task>", seen.SubgraphEvents)
	}
	// Both rolled-back runs are gone (404) with their checkpoints: the
	// history after the cancel is the one before the second slow run, the
	// one before the first plus the run that rolled it back (counting 2 →
	// 4 from the state before it, not 1003 → 1004).
	rb := seen.Rollback
	if !rb.Steps || rb.N != 4 || rb.FirstGone != 404.0 || rb.SecondGone != 404.0 || !rb.KeptBefore || !rb.SameAsMid || rb.Added == 0 || rb.Status != "idle" || rb.Runs != 2 {
		t.Errorf("rollback through the SDK: %+v, want both runs 404, n 4, only the rolling-back run's checkpoints added, the thread idle with 2 runs", rb)
	}
	sv.stop()
	if err := sv.wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// sdkServer is what weft serve runs, for LangGraph's JS SDK to drive: the
// demo graphs (and extra ones, served by the Agent Server API only) on a
// SQLite store, with the long-term store it keeps, AG-UI's server with
// the Agent Server API at its root, token its API key ("" for none).
type sdkServerT struct {
	node, base string
	st         store.Store
	lt         longterm.Store
	stop       func()       // stops the server
	wait       func() error // waits for it to stop
}

func sdkServer(t *testing.T, token string, extra map[string]*engine.Graph, opts ...agentserver.Option) *sdkServerT {
	t.Helper()
	sv := &sdkServerT{node: nodetest.Installed(t, "e2e", "@langchain/langgraph-sdk")}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sv.stop = cancel
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lt, err := store.LongTerm(st, longterm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sv.st, sv.lt = st, lt
	byID := demoGraphs(t)
	var graphs []*engine.Graph
	for _, g := range byID {
		graphs = append(graphs, g)
	}
	for id, g := range extra {
		byID[id] = g
	}
	h, err := agentserver.New(byID, st, append([]agentserver.Option{agentserver.WithLongTerm(lt)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	serveOpts := []agui.Option{agui.WithRoot(h)}
	if token != "" {
		serveOpts = append(serveOpts, agui.WithToken(token))
	}
	sv.base, _, sv.wait = nodetest.Serve(t, 0, func(out io.Writer) error {
		return agui.Serve(ctx, "127.0.0.1:0", st, graphs, append(serveOpts, agui.WithOutput(out))...)
	})
	return sv
}

// script runs a Node script of e2e with args and returns what it printed;
// limit is a safety net, not an assertion.
func (sv *sdkServerT) script(t *testing.T, limit time.Duration, name string, args ...string) []byte {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), limit)
	defer stop()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, sv.node, append([]string{name}, args...)...)
	cmd.Dir = "e2e"
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", name, err, out, stderr.String())
	}
	return out
}
