package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/testenv"
)

// killedAfterWrites wraps a store so that loop checkpoints fail while kill
// is set: a run then leaves a step's writes with no checkpoint after them,
// as a process killed at that moment does.
type killedAfterWrites struct {
	*sqlite.Saver
	kill bool
}

func (k *killedAfterWrites) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, nv map[string]int64) (checkpoint.Ref, error) {
	if k.kill && md.Source == checkpoint.SourceLoop {
		return checkpoint.Ref{}, errors.New("killed")
	}
	return k.Saver.Put(ctx, parent, cp, md, nv)
}

// bankStore opens db for setting threads up in the test process.
func bankStore(t *testing.T, db string) (*killedAfterWrites, *engine.Graph) {
	t.Helper()
	s, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	k := &killedAfterWrites{Saver: s}
	return k, bankGraph(t).WithSaver(k)
}

func mustRun(t *testing.T, g *engine.Graph, in engine.Input, opts ...engine.RunOption) *engine.Result {
	t.Helper()
	res, err := g.Invoke(context.Background(), in, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// strand leaves thread as a run killed mid-way leaves it: the answered
// approve step's writes stored (the transfer made), no checkpoint after.
func strand(t *testing.T, k *killedAfterWrites, g *engine.Graph, thread string) {
	t.Helper()
	th := engine.WithThread(thread)
	mustRun(t, g, engine.Values{"amount": 5}, th)
	k.kill = true
	defer func() { k.kill = false }()
	if _, err := g.Invoke(context.Background(), engine.Command{Resume: "approve"}, th, engine.WithDurability(engine.DurabilitySync)); err == nil {
		t.Fatal("strand: the step's checkpoint was stored")
	}
}

func ledgerLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestThreadsStatus: weft threads says what each thread is doing, by the
// rule the studio uses (engine.StatusOf), and who holds it.
func TestThreadsStatus(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	k, g := bankStore(t, db)
	ledger := filepath.Join(dir, "ledger")
	t.Setenv(ledgerFileVar, ledger)
	ctx := context.Background()

	mustRun(t, g, engine.Values{"amount": 1}, engine.WithThread("waiting"))
	mustRun(t, g, engine.Values{"amount": 2}, engine.WithThread("done"))
	mustRun(t, g, engine.Command{Resume: "approve"}, engine.WithThread("done"))
	mustRun(t, g, engine.Values{"amount": 3}, engine.WithThread("paused"), engine.BreakBefore("approve"))
	strand(t, k, g, "cut")
	mustRun(t, g, engine.Values{"amount": 4}, engine.WithThread("running"))
	if _, err := k.AcquireLease(ctx, "running", "desk pid 9 (weft worker)", time.Minute); err != nil {
		t.Fatal(err)
	}
	mustRun(t, g, engine.Values{"amount": 6}, engine.WithThread("died"), engine.BreakBefore("approve"))
	if _, err := k.AcquireLease(ctx, "died", "gone pid 1 (weft worker)", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Invoke(ctx, engine.Values{"amount": -7}, engine.WithThread("failed")); err == nil {
		t.Fatal("a negative amount was accepted")
	}
	time.Sleep(5 * time.Millisecond) // "died"'s lease lapses

	out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "threads", "-db", db)
	var threads []cli.ThreadJSON
	if code != 0 || json.Unmarshal([]byte(out), &threads) != nil {
		t.Fatalf("threads: %d %s %s", code, out, errs)
	}
	got := map[string]cli.ThreadJSON{}
	for _, th := range threads {
		got[th.ThreadID] = th
	}
	for thread, want := range map[string]engine.ThreadStatus{"waiting": engine.StatusWaiting, "done": engine.StatusDone,
		"paused": engine.StatusPaused, "cut": engine.StatusPaused, "running": engine.StatusRunning, "died": engine.StatusPaused,
		"failed": engine.StatusFailed} {
		if got[thread].Status != string(want) {
			t.Errorf("thread %q: status %q, want %q", thread, got[thread].Status, want)
		}
	}
	if l := got["running"].Lease; l == nil || l.Owner != "desk pid 9 (weft worker)" || l.Expired {
		t.Errorf("running thread's lease: %+v", l)
	}
	if l := got["died"].Lease; l == nil || !l.Expired {
		t.Errorf("the dead run's lease: %+v", l)
	}
	if got["done"].Lease != nil {
		t.Errorf("a finished thread has a lease: %+v", got["done"].Lease)
	}
	// A binary without the graph cannot tell the status, and says nothing.
	out, _, _ = runCLI(t, nil, "threads", "-db", db)
	if strings.Contains(out, `"status"`) {
		t.Errorf("statuses without the graph: %s", out)
	}
}

// TestResumeWithoutAnswerContinues: weft resume THREAD continues a thread a
// dead run left mid-step, without running its finished task again, and
// refuses threads with nothing to continue.
func TestResumeWithoutAnswerContinues(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	k, g := bankStore(t, db)
	ledger := filepath.Join(dir, "ledger")
	t.Setenv(ledgerFileVar, ledger)
	strand(t, k, g, "cut")
	mustRun(t, g, engine.Values{"amount": 1}, engine.WithThread("waiting"))
	if n := ledgerLines(t, ledger); n != 1 {
		t.Fatalf("setup: %d transfers", n)
	}
	graphs := []*engine.Graph{bankGraph(t)}
	out, errs, code := runCLI(t, graphs, "resume", "cut", "-db", db)
	var res cli.ResultJSON
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !res.Done {
		t.Fatalf("resume without an answer: %d %s %s", code, out, errs)
	}
	if fmtLedger(res.Values) != "moved 5, audited 1 entries" {
		t.Errorf("final ledger %v", res.Values["ledger"])
	}
	if n := ledgerLines(t, ledger); n != 1 {
		t.Errorf("%d transfers: the finished task ran again", n)
	}
	if _, errs, code := runCLI(t, graphs, "resume", "cut", "-db", db); code != 1 || !strings.Contains(errs, `thread "cut" is done: there is nothing to continue`) {
		t.Errorf("resume of a done thread: %d %s", code, errs)
	}
	if _, errs, code := runCLI(t, graphs, "resume", "waiting", "-db", db); code != 1 || !strings.Contains(errs, "waits for an answer") || !strings.Contains(errs, "-answer") {
		t.Errorf("resume of a waiting thread without an answer: %d %s", code, errs)
	}
	if _, errs, code := runCLI(t, graphs, "resume", "waiting", "-db", db, "-id", "x"); code != 2 {
		t.Errorf("-id without -answer: %d %s", code, errs)
	}
}

func fmtLedger(v engine.Values) string {
	var out []string
	l, _ := v["ledger"].([]any) // as decoded from JSON
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return strings.Join(out, ", ")
}

// TestWorkerContinuesDeadRuns: a worker runs threads whose run died (a
// step's writes with no checkpoint after them, or a lapsed lease) and
// leaves alone threads paused on purpose, held by a live run, or waiting
// for a person.
func TestWorkerContinuesDeadRuns(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	k, g := bankStore(t, db)
	t.Setenv(ledgerFileVar, filepath.Join(dir, "ledger"))
	ctx := context.Background()
	strand(t, k, g, "cut")
	mustRun(t, g, engine.Values{"amount": 2}, engine.WithThread("died"), engine.BreakBefore("approve"))
	if _, err := k.AcquireLease(ctx, "died", "gone pid 1 (weft worker)", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mustRun(t, g, engine.Values{"amount": 3}, engine.WithThread("paused"), engine.BreakBefore("approve"))
	strand(t, k, g, "held")
	if _, err := k.AcquireLease(ctx, "held", "desk pid 9 (weft resume)", time.Minute); err != nil {
		t.Fatal(err)
	}
	mustRun(t, g, engine.Values{"amount": 4}, engine.WithThread("waiting"))
	time.Sleep(5 * time.Millisecond)

	out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "worker", "-db", db)
	var done []cli.ResultJSON
	if code != 0 || json.Unmarshal([]byte(out), &done) != nil {
		t.Fatalf("worker: %d %s %s", code, out, errs)
	}
	ran := map[string]cli.ResultJSON{}
	for _, r := range done {
		ran[r.ThreadID] = r
	}
	if len(ran) != 2 || !ran["cut"].Done || len(ran["died"].Interrupts) != 1 {
		t.Errorf("the worker ran %s; want cut (to the end) and died (to its question)", out)
	}
	if ls, _ := k.Leases(ctx); len(ls) != 1 || ls[0].ThreadID != "held" {
		t.Errorf("leases after the worker: %+v, want only the live holder's", ls)
	}
}

// TestDeleteRespectsLeases: delete refuses a thread another run holds and
// deletes nothing; with -force it stops that run first, and the stopped run
// does not write the thread back.
func TestDeleteRespectsLeases(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	k, g := bankStore(t, db)
	ctx := context.Background()
	graphs := []*engine.Graph{bankGraph(t)}
	mustRun(t, g, engine.Values{"amount": 1}, engine.WithThread("a"))
	mustRun(t, g, engine.Values{"amount": 2}, engine.WithThread("b"))
	lease, err := k.AcquireLease(ctx, "b", "desk pid 9 (weft resume)", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, errs, code := runCLI(t, graphs, "delete", "a", "b", "-db", db)
	if code != 1 || !strings.Contains(errs, `thread "b" is being run by desk pid 9 (weft resume) since`) || !strings.Contains(errs, "nothing was deleted") {
		t.Fatalf("delete of a held thread: %d %s", code, errs)
	}
	for _, th := range []string{"a", "b"} {
		if _, err := k.Get(ctx, checkpoint.Ref{ThreadID: th}); err != nil {
			t.Fatalf("thread %q after a refused delete: %v", th, err)
		}
	}
	if err := k.ReleaseLease(ctx, lease); err != nil {
		t.Fatal(err)
	}

	// A live run in this process, in the middle of a slow transfer.
	t.Setenv(slowVar, "1m")
	runErr := make(chan error, 1)
	go func() {
		_, err := g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("b"), engine.WithLeaseTTL(300*time.Millisecond))
		runErr <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if ls, _ := k.Leases(ctx, "b"); len(ls) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never took its lease")
		}
	}
	out, errs, code := runCLI(t, graphs, "delete", "b", "-force", "-db", db)
	if code != 0 || !strings.Contains(out, `"b"`) || !strings.Contains(errs, "asked it to stop") {
		t.Fatalf("delete -force: %d %s %s", code, out, errs)
	}
	select {
	case err := <-runErr:
		if !errors.Is(err, checkpoint.ErrStopRequested) {
			t.Errorf("the stopped run: %v, want ErrStopRequested", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not stop")
	}
	if _, err := k.Get(ctx, checkpoint.Ref{ThreadID: "b"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("thread b after delete -force and the run's end: %v, want not found", err)
	}
	if _, err := k.Get(ctx, checkpoint.Ref{ThreadID: "a"}); err != nil {
		t.Errorf("thread a: %v", err)
	}
}

// countCheckpoints is how many checkpoints thread has, in every namespace.
func countCheckpoints(t *testing.T, s checkpoint.Saver, thread string) int {
	t.Helper()
	n := 0
	for _, err := range s.List(context.Background(), checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// Both prune commands, run over threads whose runs died (lapsed leases),
// leave those runs for a worker to continue: the prune's hold puts the dead
// run's lease back.
func TestPruneKeepsDeadRuns(t *testing.T) {
	for _, cmd := range [][]string{{"storage", "prune", "-keep", "1"}, {"prune", "-keep", "1"}, {"storage", "prune", "-keep", "100"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "weft.db")
			k, g := bankStore(t, db)
			t.Setenv(ledgerFileVar, filepath.Join(dir, "ledger"))
			ctx := context.Background()
			dead := []string{"d1", "d2", "d3"}
			for i, th := range dead {
				mustRun(t, g, engine.Values{"amount": i + 1}, engine.WithThread(th), engine.BreakBefore("approve"))
				if _, err := k.AcquireLease(ctx, th, "gone pid 1 (weft worker)", time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(5 * time.Millisecond) // the dead runs' leases lapse
			if _, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, append(cmd, "-db", db)...); code != 0 {
				t.Fatalf("%s: exit %d: %s", cmd, code, errs)
			}
			ls, err := k.Leases(ctx)
			if err != nil || len(ls) != len(dead) {
				t.Fatalf("leases after the prune: %+v %v, want the %d dead runs'", ls, err, len(dead))
			}
			for _, l := range ls {
				if !l.Expired || l.Owner != "gone pid 1 (weft worker)" {
					t.Errorf("after the prune, thread %q's lease is %+v, want the dead run's", l.ThreadID, l)
				}
			}
			out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "worker", "-db", db)
			var done []cli.ResultJSON
			if code != 0 || json.Unmarshal([]byte(out), &done) != nil {
				t.Fatalf("worker: %d %s %s", code, out, errs)
			}
			if len(done) != len(dead) {
				t.Errorf("the worker continued %s; want all of %q", out, dead)
			}
		})
	}
}

// Both prune commands prune every thread they can, skip the one a run
// holds, name it with its holder and exit 1.
func TestPruneSkipsRunningThreads(t *testing.T) {
	for _, cmd := range [][]string{{"storage", "prune", "-keep", "1"}, {"prune", "-keep", "1"}, {"storage", "prune", "-older-than", "0d"}, {"prune", "-older-than", "1ns"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "weft.db")
			k, g := bankStore(t, db)
			t.Setenv(ledgerFileVar, filepath.Join(dir, "ledger"))
			ctx := context.Background()
			for i, th := range []string{"a", "b", "c"} {
				mustRun(t, g, engine.Values{"amount": i + 1}, engine.WithThread(th))
				mustRun(t, g, engine.Command{Resume: "approve"}, engine.WithThread(th))
			}
			before := countCheckpoints(t, k, "b")
			if before < 2 {
				t.Fatalf("thread b has %d checkpoints; the test needs more than one", before)
			}
			if _, err := k.AcquireLease(ctx, "b", "desk pid 9 (weft worker)", time.Minute); err != nil {
				t.Fatal(err)
			}
			out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, append(cmd, "-db", db)...)
			if code != 1 || !strings.Contains(errs, `"b"`) || !strings.Contains(errs, "desk pid 9 (weft worker)") || !strings.Contains(errs, "skipped") {
				t.Errorf("%s with b held: exit %d, stderr %q; want 1, naming b and its holder", cmd, code, errs)
			}
			if !strings.Contains(out, `"skipped"`) {
				t.Errorf("%s printed %s; want what it pruned and skipped", cmd, out)
			}
			for th, want := range map[string]int{"a": 1, "b": before, "c": 1} {
				if got := countCheckpoints(t, k, th); got != want {
					t.Errorf("thread %q has %d checkpoints after the prune, want %d", th, got, want)
				}
			}
		})
	}
}

// A run killed on this machine is dead at once: threads shows its thread as
// ended, not running, and a worker continues it without waiting for its
// lease (an hour) to lapse.
func TestKilledHolderIsDeadAtOnce(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	_, g := bankStore(t, db)
	t.Setenv(ledgerFileVar, filepath.Join(dir, "ledger"))
	mustRun(t, g, engine.Values{"amount": 2}, engine.WithThread("killed"), engine.BreakBefore("approve"))
	cmd := exec.Command(os.Args[0], db)
	cmd.Env = append(os.Environ(), holdVar+"=killed")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "held\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the holder said %q", line)
	}
	pid := cmd.Process.Pid
	// While it lives, the thread is running.
	status := func() cli.ThreadJSON {
		t.Helper()
		out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "threads", "-db", db)
		var threads []cli.ThreadJSON
		if code != 0 || json.Unmarshal([]byte(out), &threads) != nil || len(threads) != 1 {
			t.Fatalf("threads: %d %s %s", code, out, errs)
		}
		return threads[0]
	}
	if th := status(); th.Status != string(engine.StatusRunning) || th.Lease == nil || th.Lease.Expired {
		t.Errorf("while its holder lives: %+v", th)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	want := fmt.Sprintf("the run by pid %d on this host ended without finishing", pid)
	if th := status(); th.Status != string(engine.StatusPaused) || th.Lease == nil || !th.Lease.Expired || th.Lease.Ended != want {
		t.Errorf("once its holder is killed: %+v, lease %+v; want paused, the lease expired and %q", th, th.Lease, want)
	}
	out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "worker", "-db", db)
	var done []cli.ResultJSON
	if code != 0 || json.Unmarshal([]byte(out), &done) != nil {
		t.Fatalf("worker: %d %s %s", code, out, errs)
	}
	if len(done) != 1 || done[0].ThreadID != "killed" || len(done[0].Interrupts) != 1 {
		t.Errorf("the worker ran %s; want the killed run's thread continued to its question", out)
	}
}

// The same on PostgreSQL, with named threads (the store is shared with
// other tests): both prune commands keep dead runs for the worker, and skip
// and name a thread a run holds.
func TestPruneLeasesPostgres(t *testing.T) {
	dsn := testenv.PostgresDSN(t)
	t.Setenv(ledgerFileVar, filepath.Join(t.TempDir(), "ledger"))
	s, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := s.(checkpoint.Leaser)
	g := bankGraph(t).WithSaver(s)
	for _, cmd := range [][]string{{"storage", "prune", "-keep", "1"}, {"prune", "-keep", "1"}} {
		prefix := fmt.Sprintf("cli-prune-%s-%d-", cmd[0], time.Now().UnixNano())
		dead, held, free := prefix+"dead", prefix+"held", prefix+"free"
		mustRun(t, g, engine.Values{"amount": 1}, engine.WithThread(dead), engine.BreakBefore("approve"))
		for _, th := range []string{held, free} {
			mustRun(t, g, engine.Values{"amount": 2}, engine.WithThread(th))
			mustRun(t, g, engine.Command{Resume: "approve"}, engine.WithThread(th))
		}
		if _, err := l.AcquireLease(ctx, dead, "gone pid 1 (weft worker)", time.Millisecond); err != nil {
			t.Fatal(err)
		}
		holder, err := l.AcquireLease(ctx, held, "desk pid 9 (weft worker)", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // the dead run's lease lapses
		before := countCheckpoints(t, s, held)
		_, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, append(cmd, "-store", dsn, dead, held, free)...)
		if code != 1 || !strings.Contains(errs, held) || !strings.Contains(errs, "desk pid 9 (weft worker)") {
			t.Errorf("%s with %s held: exit %d, stderr %q; want 1, naming it and its holder", cmd, held, code, errs)
		}
		if got := countCheckpoints(t, s, free); got != 1 {
			t.Errorf("%s: %s has %d checkpoints, want 1", cmd, free, got)
		}
		if got := countCheckpoints(t, s, held); got != before {
			t.Errorf("%s: the held thread has %d checkpoints, want %d", cmd, got, before)
		}
		if ls, err := l.Leases(ctx, dead); err != nil || len(ls) != 1 || !ls[0].Expired || ls[0].Owner != "gone pid 1 (weft worker)" {
			t.Errorf("%s: the dead run's lease after the prune: %+v %v", cmd, ls, err)
		}
		l.ReleaseLease(ctx, holder)
		out, errs, code := runCLI(t, []*engine.Graph{bankGraph(t)}, "worker", "-store", dsn)
		if code != 0 || !strings.Contains(out, dead) {
			t.Errorf("%s: the worker did not continue the dead run %s: %d %s %s", cmd, dead, code, out, errs)
		}
	}
}
