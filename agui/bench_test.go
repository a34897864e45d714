package agui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples/bench"
)

// chain10 is B1's graph (package examples/bench).
func chain10(t testing.TB) *engine.Graph {
	g, err := bench.Chain10()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// BenchmarkAGUIRun measures one AG-UI run of B1's chain over loopback HTTP
// with a SQLite store, from sending the request to reading RUN_FINISHED.
// Each run starts a new thread. Besides the mean (ns/op) it reports the
// median run time and the events per second the client received.
func BenchmarkAGUIRun(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ts := newTestServer(b, []*engine.Graph{chain10(b)}, st, WithClock(time.Now), WithIDs(randomID))
	url := ts.URL + "/agents/chain10"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}

	var times []time.Duration
	events := 0
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		body, _ := json.Marshal(input(fmt.Sprintf("bench-%d", i), fmt.Sprintf("run-%d", i), "state", map[string]any{"count": 0}))
		start := time.Now()
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(resp.Body)
		n, finished := 0, false
		for !finished {
			line, err := r.ReadString('\n')
			if err != nil {
				b.Fatalf("stream ended before RUN_FINISHED: %v", err)
			}
			if strings.HasPrefix(line, "data: ") {
				n++
				finished = strings.Contains(line, `"type":"RUN_FINISHED"`)
				if strings.Contains(line, `"type":"RUN_ERROR"`) {
					b.Fatal(line)
				}
			}
		}
		times = append(times, time.Since(start))
		events += n
		r.ReadString(0) // drain so the connection is reused
		resp.Body.Close()
	}
	b.StopTimer()
	slices.Sort(times)
	var total time.Duration
	for _, d := range times {
		total += d
	}
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "ms/run-median")
	b.ReportMetric(float64(events)/total.Seconds(), "events/s")
	b.ReportMetric(float64(events)/float64(len(times)), "events/run")
}
