package agentview_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
)

// TestWatchReportsAFailureOnce: a server that goes down is reported once
// while it stays down, not at every poll (each report costs the studio a
// read and an error dialog), and once more when it answers again.
func TestWatchReportsAFailureOnce(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, `{"detail":"maintenance"}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"thread_id":"t1","updated_at":"2026-12-04T10:00:00Z","status":"idle"}]`))
	}))
	defer srv.Close()
	c, err := agentclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	w, ok := agentview.New(c).Saver().(checkpoint.Watcher)
	if !ok {
		t.Fatal("the server's saver is no checkpoint.Watcher")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := w.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// count drains ch for d and says how many values came.
	count := func(d time.Duration) int {
		n := 0
		end := time.After(d)
		for {
			select {
			case <-ch:
				n++
			case <-end:
				return n
			}
		}
	}
	if n := count(2500 * time.Millisecond); n != 1 {
		t.Fatalf("%d values for a first look at an idle server, want 1", n)
	}
	down.Store(true)
	if n := count(3500 * time.Millisecond); n != 1 {
		t.Errorf("%d values while the server was down for 3 polls, want 1", n)
	}
	down.Store(false)
	if n := count(2500 * time.Millisecond); n != 1 {
		t.Errorf("%d values once the server answered again, want 1", n)
	}
}
