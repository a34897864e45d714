package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/checkpoint/postgres"
	"github.com/weftstudio/weft/engine"
)

// Environment of a worker process (see TestWorkerProcess).
const (
	workerModeVar   = "WEFT_PG_WORKER_MODE"   // "partitioned" or "contended"; unset: not a worker
	workerIndexVar  = "WEFT_PG_WORKER_INDEX"  // 0 … workers-1
	workerSchemaVar = "WEFT_PG_WORKER_SCHEMA" // the schema to use
	workerGateVar   = "WEFT_PG_WORKER_GATE"   // a directory: workers write ready-N there, then wait for "go"
)

const (
	workers            = 4
	partitionedThreads = 200
	contendedThreads   = 40
	workerResultPrefix = "WORKER-RESULT "
)

func partitionedThread(i int) string { return fmt.Sprintf("p%03d", i) }
func contendedThread(i int) string   { return fmt.Sprintf("c%02d", i) }

// workerResult is what a worker process reports on its standard output.
type workerResult struct {
	Index     int   `json:"index"`
	Steps     int   `json:"steps"`     // super-steps it ran and stored
	Conflicts int   `json:"conflicts"` // steps refused because another worker was first
	StartMS   int64 `json:"start_ms"`
	EndMS     int64 `json:"end_ms"`
}

// TestWorkerProcess is not a test on its own: TestMultiProcessWorkers runs
// the test binary again with this test selected and the worker variables
// set, once per worker process.
func TestWorkerProcess(t *testing.T) {
	mode := os.Getenv(workerModeVar)
	if mode == "" {
		t.Skip("runs only as a worker process started by TestMultiProcessWorkers")
	}
	idx, err := strconv.Atoi(os.Getenv(workerIndexVar))
	if err != nil {
		t.Fatalf("%s: %v", workerIndexVar, err)
	}
	gate := os.Getenv(workerGateVar)
	ctx := context.Background()
	s, err := postgres.Open(ctx, testDSN(t), postgres.WithSchema(os.Getenv(workerSchemaVar)), postgres.WithMaxConns(4))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := workGraph(t, s)
	// Start together: say ready, wait for the parent's go.
	if err := os.WriteFile(filepath.Join(gate, fmt.Sprintf("ready-%d", idx)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(gate, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the parent never said go")
		}
	}
	res := workerResult{Index: idx, StartMS: time.Now().UnixMilli()}
	step := func(thread string, in engine.Input) (done bool, err error) {
		r, err := g.Invoke(ctx, in, engine.WithThread(thread), engine.WithStepLimit(1), engine.WithDurability(engine.DurabilitySync))
		if err != nil {
			return false, err
		}
		res.Steps += r.Steps
		return r.Done, nil
	}
	switch mode {
	case "partitioned":
		// Threads i with i % workers == idx, advanced round-robin one
		// super-step at a time, so every worker interleaves its threads
		// with the other processes'.
		var pending []int
		for i := idx; i < partitionedThreads; i += workers {
			pending = append(pending, i)
		}
		started := map[int]bool{}
		for len(pending) > 0 {
			next := pending[:0]
			for _, i := range pending {
				var in engine.Input
				if !started[i] {
					in, started[i] = engine.Values{"n": i + 1}, true
				}
				done, err := step(partitionedThread(i), in)
				if err != nil {
					t.Fatalf("worker %d, thread %s: %v", idx, partitionedThread(i), err)
				}
				if !done {
					next = append(next, i)
				}
			}
			pending = next
		}
	case "contended":
		// Every worker advances every thread, in its own random order;
		// a step another worker stored first is a conflict, retried later
		// from the new head.
		rnd := rand.New(rand.NewPCG(uint64(idx), 42))
		pending := rnd.Perm(contendedThreads)
		for len(pending) > 0 {
			next := pending[:0]
			for _, i := range pending {
				done, err := step(contendedThread(i), nil)
				switch {
				case errors.Is(err, postgres.ErrConflict), errors.Is(err, checkpoint.ErrLeaseHeld):
					res.Conflicts++
				case err != nil:
					t.Fatalf("worker %d, thread %s: %v", idx, contendedThread(i), err)
				}
				if !done {
					next = append(next, i)
				}
			}
			pending = next
			rnd.Shuffle(len(pending), func(a, b int) { pending[a], pending[b] = pending[b], pending[a] })
		}
	default:
		t.Fatalf("%s=%q: want partitioned or contended", workerModeVar, mode)
	}
	res.EndMS = time.Now().UnixMilli()
	b, _ := json.Marshal(res)
	fmt.Printf("%s%s\n", workerResultPrefix, b)
}

// runWorkers starts the worker processes of one mode, waits for them and
// returns their reports.
func runWorkers(t *testing.T, mode, schema string) []workerResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gate := t.TempDir()
	results := make([]workerResult, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(),
				workerModeVar+"="+mode,
				workerIndexVar+"="+strconv.Itoa(w),
				workerSchemaVar+"="+schema,
				workerGateVar+"="+gate)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[w] = fmt.Errorf("worker %d (%s): %v\n%s", w, mode, err, out)
				return
			}
			sc := bufio.NewScanner(bytes.NewReader(out))
			for sc.Scan() {
				if line, ok := strings.CutPrefix(sc.Text(), workerResultPrefix); ok {
					errs[w] = json.Unmarshal([]byte(line), &results[w])
					return
				}
			}
			errs[w] = fmt.Errorf("worker %d (%s) reported nothing:\n%s", w, mode, out)
		}()
	}
	// Say go once every worker is ready (or one has already failed).
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Millisecond) {
		ready, _ := filepath.Glob(filepath.Join(gate, "ready-*"))
		if len(ready) == workers || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The processes really ran at the same time: their run times overlap.
	var lastStart, firstEnd int64 = 0, 1 << 62
	for _, r := range results {
		lastStart, firstEnd = max(lastStart, r.StartMS), min(firstEnd, r.EndMS)
		t.Logf("%s worker %d: %d steps, %d conflicts, %d ms", mode, r.Index, r.Steps, r.Conflicts, r.EndMS-r.StartMS)
	}
	if lastStart >= firstEnd {
		t.Errorf("%s workers did not overlap: the last started at %d, the first ended at %d", mode, lastStart, firstEnd)
	}
	return results
}

// expectChain checks that a thread's history is one chain: each checkpoint's
// parent is the one before it, steps consecutive from -1, ids unique.
func expectChain(t *testing.T, s *postgres.Saver, thread string, want int) {
	t.Helper()
	hs, err := s.ListHeaders(context.Background(), checkpoint.ListOptions{ThreadID: thread})
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != want {
		t.Errorf("thread %s has %d checkpoints, want %d", thread, len(hs), want)
		return
	}
	seen := map[string]bool{}
	for i, h := range hs { // newest first
		if seen[h.Ref.CheckpointID] {
			t.Errorf("thread %s: checkpoint %s twice", thread, h.Ref.CheckpointID)
		}
		seen[h.Ref.CheckpointID] = true
		if h.Ref.NS != "" || h.Metadata.Step != len(hs)-2-i {
			t.Errorf("thread %s: history[%d] is ns %q step %d, want root step %d", thread, i, h.Ref.NS, h.Metadata.Step, len(hs)-2-i)
		}
		switch {
		case i+1 < len(hs) && (h.Parent == nil || h.Parent.CheckpointID != hs[i+1].Ref.CheckpointID):
			t.Errorf("thread %s: history[%d]'s parent is %v, want %s", thread, i, h.Parent, hs[i+1].Ref.CheckpointID)
		case i+1 == len(hs) && h.Parent != nil:
			t.Errorf("thread %s: the first checkpoint has parent %v", thread, h.Parent)
		}
	}
}

// TestMultiProcessWorkers starts 4 worker processes (this test binary run
// again) against one database.
//
// Partitioned: they advance 200 threads, thread i by worker i % 4, one
// super-step (one Put transaction) at a time, interleaving their threads.
// Contended: all 4 advance the same 20 threads at once, so they race for
// every step; losers find the thread's lease held (or, rarely, get
// ErrConflict) and retry from the new head.
//
// Afterwards every thread's history is one chain with no checkpoint lost or
// duplicated, and equals the history of a single-process run of the same
// graph on the memory saver.
func TestMultiProcessWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 8 processes; skipped in -short mode")
	}
	dsn := testDSN(t)
	schema := freshSchema(t, dsn)
	ctx := context.Background()
	s, err := postgres.Open(ctx, dsn, postgres.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := workGraph(t, s)

	// The reference: the same runs, one process, the memory saver.
	ref := workGraph(t, memory.New())
	reference := func(thread string, n int) string {
		res := mustInvoke(t, ref, engine.Values{"n": n}, engine.WithThread(thread), engine.WithStepLimit(1))
		for !res.Done {
			res = mustInvoke(t, ref, nil, engine.WithThread(thread), engine.WithStepLimit(1))
		}
		return transcript(t, ref, thread)
	}

	t.Run("partitioned", func(t *testing.T) {
		results := runWorkers(t, "partitioned", schema)
		steps := 0
		for _, r := range results {
			steps += r.Steps
		}
		if want := partitionedThreads * (workCheckpoints - 1); steps != want {
			t.Errorf("workers ran %d steps, want %d", steps, want)
		}
		for i := range partitionedThreads {
			th := partitionedThread(i)
			expectChain(t, s, th, workCheckpoints)
			if got, want := transcript(t, g, th), reference(th, i+1); got != want {
				t.Errorf("thread %s differs from a single-process run\npostgres:\n%s\nmemory:\n%s", th, got, want)
			}
		}
	})

	t.Run("contended", func(t *testing.T) {
		// Each thread gets its input and first step here; the workers race
		// for the rest.
		for i := range contendedThreads {
			mustInvoke(t, g, engine.Values{"n": 1000 + i}, engine.WithThread(contendedThread(i)), engine.WithStepLimit(1))
		}
		results := runWorkers(t, "contended", schema)
		steps, conflicts := 0, 0
		for _, r := range results {
			steps += r.Steps
			conflicts += r.Conflicts
		}
		if want := contendedThreads * (workCheckpoints - 2); steps != want {
			t.Errorf("workers stored %d steps, want exactly %d (one per step of each thread)", steps, want)
		}
		t.Logf("%d conflicts for %d steps", conflicts, steps)
		for i := range contendedThreads {
			th := contendedThread(i)
			expectChain(t, s, th, workCheckpoints)
			if got, want := transcript(t, g, th), reference(th, 1000+i); got != want {
				t.Errorf("thread %s differs from a single-process run\npostgres:\n%s\nmemory:\n%s", th, got, want)
			}
		}
	})

	st, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (partitionedThreads + contendedThreads) * workCheckpoints; st.Checkpoints != want {
		t.Errorf("the store holds %d checkpoints, want %d", st.Checkpoints, want)
	}
}
