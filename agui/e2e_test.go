package agui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/nodetest"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// TestE2EClients runs the real @ag-ui/client, 1.0.x and 0.0.59, under Node
// against Serve on loopback with a SQLite store: every stream must pass the
// client's own validation, interrupts must be reported and resumed, and the
// threads must be in the store under the client's thread ids.
func TestE2EClients(t *testing.T) {
	dir := "e2e"
	node := nodetest.Installed(t, dir, "agui-new", "agui-old")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := filepath.Join(t.TempDir(), "weft.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	graphs := append(demoGraphs(t), streamingGraph(t), reactGraph(t))

	base, urls, wait := nodetest.Serve(t, len(graphs), func(out io.Writer) error {
		return Serve(ctx, "127.0.0.1:0", st, graphs, WithOutput(out), WithKeepAlive(time.Second))
	})
	if !strings.Contains(strings.Join(urls, "\n"), base+"/agents/writing-assistant") {
		t.Errorf("printed URLs %q", urls)
	}

	type result struct {
		Client   string                     `json:"client"`
		Version  string                     `json:"version"`
		Results  map[string]json.RawMessage `json:"results"`
		Warnings []string                   `json:"warnings"`
	}
	threads := map[string]string{} // scenario/client → thread id
	for _, which := range []string{"new", "old"} {
		t.Run(which, func(t *testing.T) {
			runCtx, stop := context.WithTimeout(ctx, 2*time.Minute) // a safety net, not an assertion
			defer stop()
			cmd := exec.CommandContext(runCtx, node, "agui.mjs", which, base)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var res result
			if jerr := nodetest.LastJSON(out, &res); jerr != nil {
				t.Fatalf("node: %v\nstdout: %s\nstderr: %s", errors.Join(err, jerr), out, stderr.String())
			}
			var names []string
			for name, raw := range res.Results {
				var r struct {
					OK     bool   `json:"ok"`
					Error  string `json:"error"`
					Thread string `json:"thread"`
				}
				_ = json.Unmarshal(raw, &r)
				if !r.OK {
					t.Errorf("%s with @ag-ui/client %s: %s", name, res.Version, r.Error)
				} else {
					names = append(names, name)
				}
				threads[name+"/"+which] = r.Thread
			}
			slices.Sort(names)
			t.Logf("@ag-ui/client %s accepted: %s", res.Version, strings.Join(names, ", "))
			if len(res.Warnings) > 0 {
				t.Errorf("client warnings:\n%s", strings.Join(res.Warnings, "\n"))
			}
			if err != nil && !t.Failed() {
				t.Errorf("node: %v\nstderr: %s", err, stderr.String())
			}
		})
	}
	cancel()
	if err := wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}

	// The store the server wrote holds each thread the clients made, under
	// the clients' thread ids, finished where the clients saw them finish.
	byName := map[string]*engine.Graph{}
	for _, g := range graphs {
		byName[g.Name()] = g.WithSaver(st)
	}
	for key, thread := range threads {
		if thread == "" {
			continue
		}
		var g *engine.Graph
		switch {
		case strings.HasPrefix(key, "writer/"):
			g = byName["writing assistant"]
		case strings.HasPrefix(key, "toolAgent/"):
			g = byName["tool agent"]
		case strings.HasPrefix(key, "mapReduce/"):
			g = byName["map-reduce"]
		case strings.HasPrefix(key, "react/"):
			g = byName["react agent"]
		default:
			continue
		}
		snap, err := g.GetState(context.Background(), engine.WithThread(thread))
		if err != nil {
			t.Errorf("%s: thread %q: %v", key, thread, err)
			continue
		}
		if len(snap.Next) != 0 || snap.Metadata.RunID == "" {
			t.Errorf("%s: thread %q not finished in the store: next %v, run %q", key, thread, snap.Next, snap.Metadata.RunID)
		}
	}
	if lister, ok := st.(checkpoint.ThreadLister); ok {
		infos, err := lister.ListThreads(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		listed := map[string]bool{}
		for _, in := range infos {
			listed[in.ThreadID] = true
		}
		for key, thread := range threads {
			if thread != "" && !listed[thread] {
				t.Errorf("%s: thread %q is not listed by the store", key, thread)
			}
		}
	}
}
