package cli_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/testenv"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

var ctx = context.Background()

func demoGraphs(t *testing.T) []*engine.Graph {
	demos, err := examples.All(nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := make([]*engine.Graph, len(demos))
	for i, d := range demos {
		gs[i] = d.Graph
	}
	return gs
}

func runCLI(t *testing.T, graphs []*engine.Graph, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(ctx, args, cli.Env{Graphs: graphs, Stdout: &out, Stderr: &errb})
	return out.String(), errb.String(), code
}

// seed starts a writing-assistant thread in db and leaves it at the review
// interrupt.
func seed(t *testing.T, db string, graphs []*engine.Graph) {
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := graphs[0].WithSaver(s)
	res, err := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("t1"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("seed: %v %+v", err, res)
	}
}

func TestCommandsEndToEnd(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)

	out, errs, code := runCLI(t, graphs, "threads", "-db", db)
	var threads []cli.ThreadJSON
	if code != 0 || json.Unmarshal([]byte(out), &threads) != nil || len(threads) != 1 || threads[0].ThreadID != "t1" || threads[0].Graph != "writing assistant" {
		t.Fatalf("threads: code %d out %s err %s", code, out, errs)
	}

	out, _, code = runCLI(t, graphs, "history", "t1", "-db", db)
	var hist []cli.SnapshotJSON
	if code != 0 || json.Unmarshal([]byte(out), &hist) != nil || len(hist) != 6 || hist[len(hist)-1].Source != "input" {
		t.Fatalf("history: code %d, %d entries: %s", code, len(hist), out)
	}

	out, _, code = runCLI(t, graphs, "state", "-db", db, "t1")
	var st cli.SnapshotJSON
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || len(st.Interrupts) != 1 || strings.Join(st.Next, ",") != "review" {
		t.Fatalf("state: %s", out)
	}
	// The state at an earlier checkpoint.
	out, _, code = runCLI(t, graphs, "state", "-db", db, "t1", hist[len(hist)-1].CheckpointID)
	if code != 0 || !strings.Contains(out, `"__start__"`) {
		t.Fatalf("state at the input checkpoint: %s", out)
	}

	_, errs, code = runCLI(t, graphs, "resume", "t1", "-db", db, "-answer", "approve")
	if code != 2 || !strings.Contains(errs, "not valid JSON") {
		t.Fatalf("bad JSON answer: code %d, %s", code, errs)
	}
	_, errs, code = runCLI(t, graphs, "resume", "t1", "-db", db, "-answer", `"approve"`, "-id", "nope")
	if code != 1 || !strings.Contains(errs, `no pending interrupt "nope"`) {
		t.Fatalf("unknown id: code %d, %s", code, errs)
	}
	out, errs, code = runCLI(t, graphs, "resume", "t1", "-db", db, "-answer", `"approve"`)
	var res cli.ResultJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Done || res.Values["published"] == "" {
		t.Fatalf("resume: code %d out %s err %s", code, out, errs)
	}

	out, _, code = runCLI(t, graphs, "prune", "-db", db, "-keep", "2")
	if code != 0 {
		t.Fatalf("prune: %s", out)
	}
	out, _, _ = runCLI(t, graphs, "history", "t1", "-db", db)
	if json.Unmarshal([]byte(out), &hist) != nil || len(hist) != 2 {
		t.Fatalf("after prune: %d entries", len(hist))
	}
}

func TestBadInput(t *testing.T) {
	graphs := demoGraphs(t)
	dir := t.TempDir()
	foreign := filepath.Join(dir, "notes.txt")
	os.WriteFile(foreign, []byte("these are my notes, not a database"), 0o644)
	_, errs, code := runCLI(t, graphs, "threads", "-db", foreign)
	if code != 1 || !strings.Contains(errs, foreign) {
		t.Errorf("foreign file: code %d, %s", code, errs)
	}
	_, errs, code = runCLI(t, graphs, "frobnicate")
	if code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: code %d, %s", code, errs)
	}
	db := filepath.Join(dir, "weft.db")
	seed(t, db, graphs)
	_, errs, code = runCLI(t, graphs, "state", "-db", db, "missing")
	if code != 1 || !strings.Contains(errs, `thread "missing" not found`) {
		t.Errorf("missing thread: code %d, %s", code, errs)
	}
}

func TestExportImport(t *testing.T) {
	graphs := demoGraphs(t)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	seed(t, src, graphs)
	file := filepath.Join(dir, "t1.json")
	if out, errs, code := runCLI(t, graphs, "export", "t1", "-db", src, "-o", file); code != 0 {
		t.Fatalf("export: %s %s", out, errs)
	}
	if _, errs, code := runCLI(t, graphs, "import", file, "-db", dst); code != 1 || !strings.Contains(errs, "-create") {
		t.Fatalf("import into a missing store without -create: code %d %s", code, errs)
	}
	out, errs, code := runCLI(t, graphs, "import", file, "-db", dst, "-create")
	if code != 0 || !strings.Contains(out, `"t1"`) {
		t.Fatalf("import: %s %s", out, errs)
	}
	// The imported thread answers like the original.
	a, _, _ := runCLI(t, graphs, "history", "t1", "-db", src)
	b, _, _ := runCLI(t, graphs, "history", "t1", "-db", dst)
	if a != b || len(a) < 100 {
		t.Errorf("history differs after import:\n%s\n---\n%s", a, b)
	}
	if _, errs, code := runCLI(t, graphs, "import", file, "-db", dst); code != 1 || !strings.Contains(errs, "t1") {
		t.Errorf("importing an existing thread again: code %d %s", code, errs)
	}
	if out, _, code := runCLI(t, graphs, "resume", "t1", "-db", dst, "-answer", `"approve"`); code != 0 || !strings.Contains(out, `"done": true`) {
		t.Errorf("resume the imported thread: %s", out)
	}
}

// A reviewer stores an answer; a worker process picks the thread up and
// finishes it.
func TestAnswerThenWorker(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	out, errs, code := runCLI(t, graphs, "answer", "t1", "-db", db, "-answer", `{"action": "approve"}`)
	if code != 0 || !strings.Contains(out, `"stored": true`) {
		t.Fatalf("answer: %s %s", out, errs)
	}
	out, _, _ = runCLI(t, graphs, "state", "t1", "-db", db)
	if !strings.Contains(out, `"review"`) {
		t.Fatalf("storing an answer must not run anything: %s", out)
	}
	out, errs, code = runCLI(t, graphs, "worker", "-db", db)
	var done []cli.ResultJSON
	if code != 0 || json.Unmarshal([]byte(out), &done) != nil || len(done) != 1 || !done[0].Done || done[0].Values["published"] == "" {
		t.Fatalf("worker: %s %s", out, errs)
	}
	out, _, _ = runCLI(t, graphs, "worker", "-db", db)
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("a second worker pass found work again: %s", out)
	}
}

// The same with PostgreSQL: the store many workers share.
func TestAnswerThenWorkerPostgres(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	graphs := demoGraphs(t)
	thread := "cli-" + strings.ReplaceAll(t.Name(), "/", "-") + "-" + time.Now().Format("150405.000000")
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	g := graphs[0].WithSaver(s)
	if res, err := g.Invoke(ctx, engine.Values{"topic": "gulls"}, engine.WithThread(thread)); err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("seed: %v", err)
	}
	s.Close()
	if out, errs, code := runCLI(t, graphs, "answer", thread, "-store", dsn, "-answer", `"approve"`); code != 0 {
		t.Fatalf("answer: %s %s", out, errs)
	}
	out, errs, code := runCLI(t, graphs, "worker", "-store", dsn)
	if code != 0 || !strings.Contains(out, thread) {
		t.Fatalf("worker: %s %s", out, errs)
	}
	out, _, _ = runCLI(t, graphs, "state", thread, "-store", dsn)
	var st cli.SnapshotJSON
	if json.Unmarshal([]byte(out), &st) != nil || len(st.Next) != 0 || st.Values["published"] == "" {
		t.Errorf("final state: %s", out)
	}
}

func TestDelete(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	if _, errs, code := runCLI(t, graphs, "delete", "t1", "nope", "-db", db); code != 1 || !strings.Contains(errs, `thread "nope" not found`) {
		t.Fatalf("a missing thread: code %d %s", code, errs)
	}
	if out, _, _ := runCLI(t, graphs, "threads", "-db", db); !strings.Contains(out, `"t1"`) {
		t.Fatal("a failed delete must delete nothing")
	}
	if out, errs, code := runCLI(t, graphs, "delete", "t1", "-db", db); code != 0 {
		t.Fatalf("delete: %s %s", out, errs)
	}
	if out, _, _ := runCLI(t, graphs, "threads", "-db", db); strings.TrimSpace(out) != "[]" {
		t.Errorf("after delete: %s", out)
	}
}

// Mistyped commands and paths never open or create anything, and say what
// was meant.
func TestCommandLineMistakes(t *testing.T) {
	graphs := demoGraphs(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")

	_, errs, code := runCLI(t, graphs, "thread", "-db", db)
	if code != 2 || !strings.Contains(errs, `unknown command "thread"`) || !strings.Contains(errs, `did you mean "threads"?`) {
		t.Errorf("a typo: code %d, %s", code, errs)
	}
	out, _, code := runCLI(t, graphs, "-h")
	if code != 0 || !strings.Contains(out, "usage: weft") {
		t.Errorf("-h: code %d, %s", code, out)
	}
	for _, cmd := range [][]string{
		{"threads"}, {"history", "t1"}, {"state", "t1"}, {"export", "t1"}, // read: never create
		{"resume", "t1", "-answer", `"x"`}, {"delete", "t1"}, {"worker"}, {"prune", "-keep", "1"}, // write: only with -create
	} {
		_, errs, code := runCLI(t, graphs, append(cmd, "-db", db)...)
		if code != 1 || !strings.Contains(errs, db) || !strings.Contains(errs, "does not exist") {
			t.Errorf("%s on a missing store: code %d, %s", cmd[0], code, errs)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%s on a missing path created %s", cmd[0], db)
		}
	}
	if _, errs, code := runCLI(t, graphs, "threads", "-db", db, "-create"); code != 2 || !strings.Contains(errs, "-create is for commands that write") {
		t.Errorf("threads -create: code %d, %s", code, errs)
	}

	// A 0-byte file and another program's new database are left alone.
	empty := filepath.Join(dir, "empty.db")
	os.WriteFile(empty, nil, 0o644)
	for _, cmd := range []string{"threads", "worker"} {
		_, errs, code := runCLI(t, graphs, cmd, "-db", empty)
		if code != 1 || !strings.Contains(errs, "empty") {
			t.Errorf("%s on a 0-byte file: code %d, %s", cmd, code, errs)
		}
		if fi, _ := os.Stat(empty); fi.Size() != 0 {
			t.Fatalf("%s turned a 0-byte file into a store", cmd)
		}
	}

	seed(t, db, graphs)
	_, errs, code = runCLI(t, graphs, "threads", "-db", db, "-graph", "nope")
	if code != 2 || !strings.Contains(errs, `unknown graph "nope"`) || !strings.Contains(errs, `"writing assistant"`) {
		t.Errorf("threads -graph nope: code %d, %s", code, errs)
	}
	_, errs, code = runCLI(t, graphs, "resume", "t1", "-db", db, "-answer", "null")
	if code != 2 || !strings.Contains(errs, "-answer null is not an answer") {
		t.Errorf("-answer null: code %d, %s", code, errs)
	}
	// Read commands leave no -wal or -shm behind.
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	if _, _, code := runCLI(t, graphs, "history", "t1", "-db", db); code != 0 {
		t.Fatal("history failed")
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(db + suffix); err == nil {
			t.Errorf("history left %s behind", filepath.Base(db+suffix))
		}
	}
}

// A worker watching a store stops with a clear error once the store's file
// is deleted under it, instead of going on against a file nobody sees.
func TestWorkerStopsWhenStoreDeleted(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	done := make(chan struct{})
	var errs string
	var code int
	go func() {
		defer close(done)
		_, errs, code = runCLI(t, graphs, "worker", "-db", db, "-watch", "20ms")
	}()
	time.Sleep(300 * time.Millisecond)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(db + suffix)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the worker kept running after its store was deleted")
	}
	if code != 1 || !strings.Contains(errs, "deleted") || !strings.Contains(errs, db) {
		t.Fatalf("worker: code %d, %s", code, errs)
	}
}

// weft serve stops with a clear error once its store's file is replaced.
func TestServeStopsWhenStoreReplaced(t *testing.T) {
	graphs := demoGraphs(t)
	dir := t.TempDir()
	db, other := filepath.Join(dir, "weft.db"), filepath.Join(dir, "other.db")
	seed(t, db, graphs)
	seed(t, other, graphs)
	done := make(chan struct{})
	var errs string
	var code int
	go func() {
		defer close(done)
		_, errs, code = runCLI(t, graphs, "serve", "-db", db, "-addr", "127.0.0.1:0")
	}()
	time.Sleep(300 * time.Millisecond)
	if err := os.Rename(other, db); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server kept running after its store was replaced")
	}
	if code != 1 || !strings.Contains(errs, "another file was put in its place") {
		t.Fatalf("serve: code %d, %s", code, errs)
	}
}

// One thread whose latest checkpoint cannot be read does not cost the whole
// listing: threads lists every thread, the damaged one as "unreadable" with
// its error, and exits 1 saying how many could not be read.
func TestThreadsListsPastAnUnreadableThread(t *testing.T) {
	checkThreadsPastDamage(t, nil, `checkpoint = 'damaged'`, "decode checkpoint")
}

// A damaged metadata or timestamp in a thread's latest row (what the
// listing itself reads) marks only that thread unreadable, with its
// reason, even under -graph: threads lists the others and exits 1.
func TestThreadsListsPastADamagedListingRow(t *testing.T) {
	graph := []string{"-graph", demoGraphs(t)[0].Name()}
	checkThreadsPastDamage(t, graph, `metadata = '{"source":'`, "decode metadata")
	checkThreadsPastDamage(t, graph, `ts = 'yesterday'`, `bad stored timestamp "yesterday"`)
}

// checkThreadsPastDamage stores two waiting threads, t1 and t2, sets
// column damage in t1's latest root checkpoint, and checks that threads
// (with args) lists t1 as unreadable saying says, t2 as waiting, and
// exits 1 counting one unreadable thread.
func checkThreadsPastDamage(t *testing.T, args []string, damage, says string) {
	t.Helper()
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	seed(t, db, graphs)
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := graphs[0].WithSaver(s).Invoke(ctx, engine.Values{"topic": "reefs"}, engine.WithThread("t2")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	raw, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE checkpoints SET ` + damage + ` WHERE thread_id = 't1' AND checkpoint_ns = ''
		AND checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints WHERE thread_id = 't1' AND checkpoint_ns = '')`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	out, errs, code := runCLI(t, graphs, append([]string{"threads", "-db", db}, args...)...)
	var threads []cli.ThreadJSON
	if err := json.Unmarshal([]byte(out), &threads); err != nil || len(threads) != 2 {
		t.Fatalf("%s: threads printed %q (%v), want both threads", damage, out, err)
	}
	for _, th := range threads {
		switch th.ThreadID {
		case "t1":
			if th.Status != "unreadable" || !strings.Contains(th.Error, says) {
				t.Errorf("%s: t1: status %q error %q, want unreadable saying %q", damage, th.Status, th.Error, says)
			}
		case "t2":
			if th.Status != "waiting" || th.Error != "" {
				t.Errorf("%s: t2: status %q error %q, want waiting", damage, th.Status, th.Error)
			}
		}
	}
	if code != 1 || !strings.Contains(errs, "1 thread could not be read") {
		t.Errorf("%s: exit %d, stderr %q; want 1 and a line saying 1 thread could not be read", damage, code, errs)
	}
}

// Every command's -h prints its usage and flags on stdout and exits 0,
// without a store (none is created) and without running anything.
func TestEveryCommandHelp(t *testing.T) {
	graphs := demoGraphs(t)
	db := filepath.Join(t.TempDir(), "none.db")
	flags := map[string]string{"run": "-input", "history": "-limit", "threads": "-graph", "worker": "-lease-ttl", "export": "-o", "serve": "-addr", "delete": "-force", "prune": "-keep", "storage": "-deep"}
	for _, name := range cli.Names(nil) {
		if name == "dev" {
			continue // storeless: devloop parses its own arguments
		}
		out, errs, code := runCLI(t, graphs, name, "-h", "-db", db)
		if code != 0 || !strings.Contains(out, "usage: weft "+name) || errs != "" {
			t.Errorf("%s -h: code %d, out %q, err %q", name, code, out, errs)
		}
		if f := flags[name]; f != "" && !strings.Contains(out, "  "+f) {
			t.Errorf("%s -h does not list %s:\n%s", name, f, out)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Fatal("-h created the store")
	}
	out, _, _ := runCLI(t, graphs, "help")
	if !strings.Contains(out, "opens the studio") {
		t.Errorf("weft help does not say the window opens without a command: %s", out)
	}
	var b bytes.Buffer
	cli.Run(ctx, []string{"help"}, cli.Env{Graphs: graphs, Stdout: &b, NoWindow: true})
	if strings.Contains(b.String(), "studio") || !strings.Contains(b.String(), "usage: weft COMMAND") {
		t.Errorf("help without a window mentions the studio: %s", b.String())
	}
}
