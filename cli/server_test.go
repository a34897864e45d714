package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/inspect"
	"github.com/weftstudio/weft/internal/lgserver"
)

func decodeOut[T any](t *testing.T, out string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	return v
}

// TestCommandsOnLangGraphServer runs the headless commands with -store
// naming LangGraph's own dev server: run to the subgraph's interrupt,
// threads, state, resume (twice, and once refused as stale), history.
func TestCommandsOnLangGraphServer(t *testing.T) {
	srv := lgserver.Start(t)
	store := "-store=" + srv.URL
	out, errs, code := runCLI(t, nil, "run", "approval", "-input", `{"topic": "otters"}`, store)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	res := decodeOut[cli.ResultJSON](t, out)
	if res.Done || !slices.Equal(res.Next, []string{"research"}) || len(res.Interrupts) != 1 || res.Interrupts[0].Node != "pick" || !strings.HasPrefix(res.Interrupts[0].NS, "research:") {
		t.Fatalf("run: %+v, want the pick question of the research subgraph", res)
	}
	tid := res.ThreadID

	c, err := agentclient.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := c.CreateThread(context.Background(), agentclient.ThreadCreate{})
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, nil, "threads", store)
	threads := decodeOut[[]cli.ThreadJSON](t, out)
	if code != 0 || len(threads) != 2 || threads[0].ThreadID != fresh.ThreadID || threads[0].Status != "new" || threads[0].Checkpoints != 0 {
		t.Fatalf("threads, newest first: %d %+v %s", code, threads, errs)
	}
	if th := threads[1]; th.ThreadID != tid || th.Graph != "approval" || th.Status != "waiting" || th.Checkpoints != 3 || th.Step != 1 || th.Source != "loop" {
		t.Errorf("threads: the run's %+v", th)
	}
	out, _, code = runCLI(t, nil, "threads", "-graph", "approval", store)
	if threads = decodeOut[[]cli.ThreadJSON](t, out); code != 0 || len(threads) != 1 || threads[0].ThreadID != tid {
		t.Errorf("threads -graph approval: %d %+v", code, threads)
	}

	out, _, code = runCLI(t, nil, "state", tid, store)
	st := decodeOut[cli.SnapshotJSON](t, out)
	if code != 0 || st.CheckpointID != res.CheckpointID || !slices.Equal(st.Ran, []string{"plan"}) || st.Values["topic"] != "otters" || len(st.Interrupts) != 1 {
		t.Errorf("state: %d %+v", code, st)
	}
	stale := st.CheckpointID

	out, errs, code = runCLI(t, nil, "resume", tid, "-answer", `"fact B about otters"`, store)
	res = decodeOut[cli.ResultJSON](t, out)
	if code != 0 || len(res.Interrupts) != 1 || res.Interrupts[0].Node != "review" || res.Interrupts[0].NS != "" {
		t.Fatalf("resume pick: %d %+v %s", code, res, errs)
	}
	// Acting on the checkpoint seen before the answer is refused.
	_, errs, code = runCLI(t, nil, "resume", tid, "-answer", `"yes"`, "-checkpoint", stale, store)
	if code != 1 || !strings.Contains(errs, "moved") || !strings.Contains(errs, res.CheckpointID) {
		t.Errorf("a stale resume: %d %s", code, errs)
	}
	out, errs, code = runCLI(t, nil, "resume", tid, "-answer", `"yes"`, store)
	res = decodeOut[cli.ResultJSON](t, out)
	if log, _ := res.Values["log"].([]any); code != 0 || !res.Done || len(log) != 3 || log[2] != "published" {
		t.Fatalf("resume review: %d %+v %s", code, res, errs)
	}

	out, _, code = runCLI(t, nil, "history", tid, "-limit", "2", store)
	hist := decodeOut[[]cli.SnapshotJSON](t, out)
	if code != 0 || len(hist) != 2 || hist[0].Step != 4 || !slices.Equal(hist[0].Ran, []string{"finalize"}) || hist[0].ParentID != hist[1].CheckpointID || !slices.Equal(hist[1].Next, []string{"finalize"}) {
		t.Errorf("history: %d %+v", code, hist)
	}

	// watch and compare read the server's history as a store's; export
	// writes a bundle that import reads into a Weft store.
	out, errs, code = runCLI(t, nil, "watch", tid, "len(log)", "topic", store)
	rows := decodeOut[[]cli.WatchJSON](t, out)
	if code != 0 || len(rows) < 4 || rows[0].CheckpointID != hist[0].CheckpointID || rows[0].Values[0] != float64(3) || rows[0].Values[1] != "otters" || len(rows[0].Errors) != 0 {
		t.Errorf("watch: %d %+v %s", code, rows, errs)
	}
	out, errs, code = runCLI(t, nil, "compare", tid, hist[0].CheckpointID, hist[1].CheckpointID, store)
	cmp := decodeOut[inspect.Comparison](t, out)
	logDiffers := false
	for _, d := range cmp.Channels {
		logDiffers = logDiffers || d.Channel == "log" && !d.Equal
	}
	if code != 0 || cmp.Ancestor != hist[1].CheckpointID || !logDiffers {
		t.Errorf("compare: %d %+v %s", code, cmp, errs)
	}
	bundleFile, db := filepath.Join(t.TempDir(), "thread.json"), filepath.Join(t.TempDir(), "copy.db")
	if _, errs, code = runCLI(t, nil, "export", tid, "-o", bundleFile, store); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if _, errs, code = runCLI(t, nil, "import", bundleFile, "-db", db, "-create"); code != 0 {
		t.Fatalf("import of the server's thread: %d %s", code, errs)
	}
	out, _, _ = runCLI(t, nil, "threads", "-db", db)
	if copied := decodeOut[[]cli.ThreadJSON](t, out); len(copied) != 1 || copied[0].ThreadID != tid || copied[0].Checkpoints != len(rows) {
		t.Errorf("the imported thread: %+v, want %s with %d checkpoints", copied, tid, len(rows))
	}

	if _, errs, code = runCLI(t, nil, "state", "00000000-0000-0000-0000-000000000000", store); code != 1 || !strings.Contains(errs, "not found on this server") {
		t.Errorf("state of an unknown thread: %d %s", code, errs)
	}
	if _, errs, code = runCLI(t, nil, "prune", "-keep", "1", store); code != 2 || !strings.Contains(errs, "not available on an Agent Server") {
		t.Errorf("prune on a server: %d %s", code, errs)
	}

	// answer hands the answer to the server, which runs it.
	out, errs, code = runCLI(t, nil, "run", "approval", "-input", `{"topic": "moles"}`, store)
	if code != 0 {
		t.Fatalf("run: %d %s", code, errs)
	}
	res = decodeOut[cli.ResultJSON](t, out)
	out, errs, code = runCLI(t, nil, "answer", res.ThreadID, "-answer", `"fact A about moles"`, store)
	stored := decodeOut[map[string]any](t, out)
	if code != 0 || stored["stored"] != true || stored["checkpoint_id"] != res.CheckpointID || stored["run_id"] == "" {
		t.Fatalf("answer: %d %v %s", code, stored, errs)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		out, _, _ = runCLI(t, nil, "state", res.ThreadID, store)
		if st := decodeOut[cli.SnapshotJSON](t, out); len(st.Interrupts) == 1 && st.Interrupts[0].Node == "review" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the answered thread never reached review: %s", out)
		}
	}
}

// TestServerStoreDown: a server address nobody answers at is said so.
func TestServerStoreDown(t *testing.T) {
	_, errs, code := runCLI(t, nil, "threads", "-store", "http://127.0.0.1:1")
	if code != 1 || !strings.Contains(errs, "server unreachable") || !strings.Contains(errs, "127.0.0.1:1") {
		t.Errorf("threads on a server that is down: %d %s", code, errs)
	}
}
