package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/testenv"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
)

// childVar makes the test binary act as the weft binary with the bank graph:
// TestMain runs the command in its arguments and exits. With gateVar set to
// a directory it first writes ready-<pid> there and waits for a file "go",
// so that racers start together.
const (
	childVar = "WEFT_TEST_CLI_CHILD"
	gateVar  = "WEFT_TEST_CLI_GATE"
	// holdVar makes the test binary hold the lease of the thread it names
	// in the store named by its first argument, then wait to be killed.
	holdVar = "WEFT_TEST_CLI_HOLD"
)

func TestMain(m *testing.M) {
	if thread := os.Getenv(holdVar); thread != "" {
		// Hold thread's lease in the store os.Args[1] until killed.
		s, err := sqlite.Open(os.Args[1])
		if err == nil {
			_, err = s.AcquireLease(context.Background(), thread, engine.DefaultLeaseOwner(), time.Hour)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("held")
		select {}
	}
	if os.Getenv(childVar) == "1" {
		if gate := os.Getenv(gateVar); gate != "" {
			os.WriteFile(filepath.Join(gate, fmt.Sprintf("ready-%d", os.Getpid())), nil, 0o644)
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				if _, err := os.Stat(filepath.Join(gate, "go")); err == nil {
					break
				}
				if time.Now().After(deadline) {
					fmt.Fprintln(os.Stderr, "no go from the test")
					os.Exit(2)
				}
			}
		}
		g, err := bankChild()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(cli.Run(context.Background(), os.Args[1:], cli.Env{Graphs: []*engine.Graph{g}, Stdout: os.Stdout, Stderr: os.Stderr}))
	}
	os.Exit(m.Run())
}

// bankChild is bankGraph outside a test.
func bankChild() (g *engine.Graph, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return bankGraph(fatalTB{}), nil
}

type fatalTB struct{ testing.TB }

func (fatalTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// weft returns a command running the test binary as weft with args.
func weft(ctx context.Context, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), childVar+"=1"), env...)
	return cmd
}

// raceRounds is how many rounds TestRaceOneThread runs per store.
const raceRounds = 50

// outcome is what one racer saw in one round.
type outcome int

const (
	won      outcome = iota // it ran the answered node
	held                    // refused: another process was running the thread
	answered                // refused: the interrupt was answered already
	idle                    // a worker that found nothing to do
)

var outcomeNames = []string{"won", "lease held", "already answered", "nothing to do"}

// TestRaceOneThread races 8 processes for one interrupted thread, 50
// rounds, on SQLite and on PostgreSQL: each round 3 `weft resume T -answer`,
// 3 `weft worker` (the answer is also stored for them) and 2 `weft serve`
// processes each sent an AG-UI resume. The answered node moves money (a
// line in a file): it must run exactly once per round; every other racer
// must get a clear refusal (the thread is being run by …, or its interrupt
// was answered already) or, for a worker, find nothing to do; the thread's
// history must stay one chain.
func TestRaceOneThread(t *testing.T) {
	if testing.Short() {
		t.Skip("starts hundreds of processes")
	}
	t.Run("sqlite", func(t *testing.T) {
		raceStore(t, filepath.Join(t.TempDir(), "race.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := testenv.PostgresDSN(t)
		raceStore(t, pgSchemaDSN(t, dsn))
	})
}

// pgSchemaDSN returns dsn with a search_path of a new schema, dropped when
// the test ends, so the race's tables are its own.
func pgSchemaDSN(t *testing.T, dsn string) string {
	t.Helper()
	ctx := context.Background()
	schema := fmt.Sprintf("weft_race_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c, err := pgx.Connect(ctx, dsn)
		if err == nil {
			c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			c.Close(ctx)
		}
	})
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + "search_path=" + schema
}

func raceStore(t *testing.T, spec string) {
	dir := t.TempDir()
	ledger := filepath.Join(dir, "ledger")
	env := []string{ledgerFileVar + "=" + ledger, slowVar + "=150ms"}
	storeFlag := "-db"
	if strings.Contains(spec, "://") {
		storeFlag = "-store"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	s, err := store.Open(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := bankGraph(t).WithSaver(s)

	servers := []string{startServe(t, ctx, env, storeFlag, spec), startServe(t, ctx, env, storeFlag, spec)}
	counts := map[string]map[outcome]int{"resume": {}, "worker": {}, "serve": {}}
	start := time.Now()
	for round := range raceRounds {
		thread := fmt.Sprintf("round-%02d", round)
		th := engine.WithThread(thread)
		if _, err := g.Invoke(ctx, engine.Values{"amount": 100 + round}, th); err != nil {
			t.Fatal(err)
		}
		snap, err := g.GetState(ctx, th)
		if err != nil || len(snap.Interrupts) != 1 {
			t.Fatalf("round %d: setup %v %+v", round, err, snap)
		}
		if _, err := g.SubmitAnswer(ctx, engine.Command{Resume: "approve"}, th); err != nil {
			t.Fatal(err)
		}
		interrupt := snap.Interrupts[0].ID
		before := ledgerLines(t, ledger)
		gate := filepath.Join(dir, fmt.Sprintf("gate-%02d", round))
		if err := os.Mkdir(gate, 0o755); err != nil {
			t.Fatal(err)
		}
		penv := append(env, gateVar+"="+gate)

		type result struct {
			kind string
			out  outcome
			err  error
		}
		results := make(chan result, 8)
		var wg sync.WaitGroup
		run := func(kind string, f func() (outcome, error)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				o, err := f()
				results <- result{kind, o, err}
			}()
		}
		for range 3 {
			run("resume", func() (outcome, error) {
				return raceResume(ctx, penv, storeFlag, spec, thread)
			})
			run("worker", func() (outcome, error) {
				return raceWorker(ctx, penv, storeFlag, spec, thread)
			})
		}
		// Everyone goes at once: the six processes once they are up, and
		// the requests to the two servers.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if ready, _ := filepath.Glob(filepath.Join(gate, "ready-*")); len(ready) == 6 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the racers did not start", round)
			}
		}
		if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, url := range servers {
			// The servers are warm and the processes are still opening the
			// store: a random head start of up to 80 ms lets either side
			// win some rounds.
			delay := time.Duration(rand.Int64N(int64(80 * time.Millisecond)))
			run("serve", func() (outcome, error) {
				time.Sleep(delay)
				return raceServe(ctx, url, thread, interrupt)
			})
		}
		wg.Wait()
		close(results)
		winners := 0
		for r := range results {
			if r.err != nil {
				t.Fatalf("round %d, %s: %v", round, r.kind, r.err)
			}
			counts[r.kind][r.out]++
			if r.out == won {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d racers ran the thread, want 1", round, winners)
		}
		if moved := ledgerLines(t, ledger) - before; moved != 1 {
			t.Fatalf("round %d: the answered node moved money %d times, want once", round, moved)
		}
		expectOneChain(t, s, thread)
		final, err := g.GetState(ctx, th)
		if err != nil || !final.Done() || fmtLedger(jsonValues(t, final.Values)) != fmt.Sprintf("moved %d, audited 1 entries", 100+round) {
			t.Fatalf("round %d: final state %v %+v", round, err, final)
		}
	}
	elapsed := time.Since(start)
	var lost int
	for kind, c := range counts {
		t.Logf("%s: %s", kind, describeCounts(c))
		lost += c[held]
	}
	t.Logf("%d rounds × 8 processes in %v", raceRounds, elapsed.Round(time.Millisecond))
	if lost == 0 {
		t.Errorf("no racer ever found the thread held: the processes never overlapped, so nothing was raced")
	}
}

func describeCounts(c map[outcome]int) string {
	var parts []string
	for o, name := range outcomeNames {
		if n := c[outcome(o)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		}
	}
	return strings.Join(parts, ", ")
}

// jsonValues passes values through JSON, as the CLI prints them.
func jsonValues(t *testing.T, v engine.Values) engine.Values {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out engine.Values
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// raceResume runs weft resume THREAD -answer '"approve"'.
func raceResume(ctx context.Context, env []string, storeFlag, spec, thread string) (outcome, error) {
	var stdout, stderr bytes.Buffer
	cmd := weft(ctx, env, "resume", thread, storeFlag, spec, "-answer", `"approve"`)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	msg := stderr.String()
	switch {
	case err == nil && strings.Contains(stdout.String(), `"done": true`):
		return won, nil
	case strings.Contains(msg, fmt.Sprintf("thread %q is being run by ", thread)) && strings.Contains(msg, " since "):
		return held, nil
	case strings.Contains(msg, fmt.Sprintf("thread %q has no pending interrupt to answer", thread)):
		return answered, nil
	}
	return 0, fmt.Errorf("resume: %v\nstdout: %s\nstderr: %s", err, stdout.String(), msg)
}

// raceWorker runs a one-shot weft worker.
func raceWorker(ctx context.Context, env []string, storeFlag, spec, thread string) (outcome, error) {
	var stdout, stderr bytes.Buffer
	cmd := weft(ctx, env, "worker", storeFlag, spec)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("worker: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var done []cli.ResultJSON
	if err := json.Unmarshal(stdout.Bytes(), &done); err != nil {
		return 0, fmt.Errorf("worker printed %q: %v", stdout.String(), err)
	}
	switch {
	case len(done) == 0:
		return idle, nil
	case len(done) == 1 && done[0].ThreadID == thread && done[0].Done:
		return won, nil
	}
	return 0, fmt.Errorf("worker ran %+v", done)
}

// raceServe sends an AG-UI resume of thread's interrupt to a weft serve.
func raceServe(ctx context.Context, base, thread, interrupt string) (outcome, error) {
	body, _ := json.Marshal(map[string]any{"threadId": thread, "runId": "race", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": interrupt, "status": "resolved", "payload": "approve"}}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/agents/bank", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	msg := string(b)
	switch {
	case resp.StatusCode == http.StatusConflict && strings.Contains(msg, fmt.Sprintf("thread %q is being run by ", thread)):
		return held, nil
	case resp.StatusCode != 200:
	case strings.Contains(msg, `"type":"RUN_ERROR"`) && strings.Contains(msg, "has no pending interrupts to resume"):
		return answered, nil
	case strings.Contains(msg, `"outcome":{"type":"success"}`) && strings.Contains(msg, `"type":"RUN_FINISHED"`):
		return won, nil
	}
	return 0, fmt.Errorf("serve: %d %s", resp.StatusCode, msg)
}

// startServe starts weft serve on a free port and returns its URL; it is
// stopped with SIGTERM when the test ends and must exit cleanly.
func startServe(t *testing.T, ctx context.Context, env []string, storeFlag, spec string) string {
	t.Helper()
	// Not ctx's: the server must get SIGTERM at the end, not be killed.
	cmd := weft(context.Background(), env, "serve", storeFlag, spec, "-addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("serve: %v %s", err, stderr.String())
	}
	go io.Copy(io.Discard, out)
	t.Cleanup(func() {
		cmd.Process.Signal(sigterm)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve did not stop cleanly on SIGTERM: %v %s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not stop within 30 s of SIGTERM")
		}
	})
	return strings.TrimSpace(strings.TrimPrefix(line, "AG-UI server listening on "))
}

// expectOneChain checks that thread's root checkpoints form one chain.
func expectOneChain(t *testing.T, s checkpoint.Saver, thread string) {
	t.Helper()
	root := ""
	hs, err := s.(checkpoint.HeaderLister).ListHeaders(context.Background(), checkpoint.ListOptions{ThreadID: thread, NS: &root})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hs { // newest first
		switch {
		case i+1 < len(hs) && (h.Parent == nil || h.Parent.CheckpointID != hs[i+1].Ref.CheckpointID):
			t.Fatalf("thread %s forked: checkpoint %s (step %d) has parent %v, want %s", thread, h.Ref.CheckpointID, h.Metadata.Step, h.Parent, hs[i+1].Ref.CheckpointID)
		case i+1 == len(hs) && h.Parent != nil:
			t.Fatalf("thread %s: its first checkpoint has parent %v", thread, h.Parent)
		}
	}
}
