package sqlite_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/engine"
)

// The crash test runs a loop graph in a child process (this test binary run
// again) and kills it with SIGKILL at random moments, then checks the store
// as the next process would find it.
const (
	envCrashDB     = "WEFT_CRASH_DB"     // the store; switches TestCrashLoopChild on
	envCrashThread = "WEFT_CRASH_THREAD" // the thread to run or continue
	envCrashMode   = "WEFT_CRASH_MODE"   // "sync" or "async" durability
	envCrashFSize  = "WEFT_CRASH_FSIZE"  // if set, the largest file the child may write (RLIMIT_FSIZE)
)

// crashSteps is how many times the loop node runs in a thread.
const crashSteps = 250

var (
	crashN   = engine.LastValue[int]("n")
	crashLog = engine.LastValue[string]("log") // a hash chain over the steps: any lost or doubled step shows
	crashPad = engine.LastValue[string]("pad") // 1 KB that change every step, so the store and its log grow
)

// crashPadding is the pad value after step n: incompressible, deterministic.
func crashPadding(n int) string {
	r := rand.New(rand.NewPCG(uint64(n), 99))
	b := make([]byte, 512)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return hex.EncodeToString(b)
}

func crashChain(prev string, n int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", prev, n))
	return hex.EncodeToString(h[:8])
}

// crashExpected is the state an uninterrupted run ends in.
func crashExpected() (int, string, string) {
	log := ""
	for n := 1; n <= crashSteps; n++ {
		log = crashChain(log, n)
	}
	return crashSteps, log, crashPadding(crashSteps)
}

func crashGraph(t testing.TB, saver checkpoint.Saver) *engine.Graph {
	b := engine.NewGraph("crash-loop", crashN, crashLog, crashPad)
	b.AddNode("step", func(_ context.Context, s engine.State) (engine.Output, error) {
		n := crashN.Get(s) + 1
		return engine.Updates(crashN.Set(n), crashLog.Set(crashChain(crashLog.Get(s), n)), crashPad.Set(crashPadding(n))), nil
	})
	b.AddEdge(engine.START, "step")
	b.AddConditionalEdges("step", func(_ context.Context, s engine.State) (engine.Route, error) {
		if crashN.Get(s) < crashSteps {
			return engine.To("step"), nil
		}
		return engine.To(engine.END), nil
	}, engine.Targets("step", engine.END))
	g, err := b.Compile(engine.WithSaver(saver))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// reportingSaver prints "committed <id>" once a checkpoint's Put (or the
// batch holding it) has returned: from then on it must survive a crash.
type reportingSaver struct {
	*sqlite.Saver
	mu sync.Mutex
}

func (r *reportingSaver) report(id string) {
	r.mu.Lock()
	fmt.Printf("committed %s\n", id)
	r.mu.Unlock()
}

func (r *reportingSaver) Put(ctx context.Context, parent checkpoint.Ref, cp checkpoint.Checkpoint, md checkpoint.Metadata, nv map[string]int64) (checkpoint.Ref, error) {
	ref, err := r.Saver.Put(ctx, parent, cp, md, nv)
	if err == nil {
		r.report(ref.CheckpointID)
	}
	return ref, err
}

func (r *reportingSaver) WriteBatch(ctx context.Context, ops []checkpoint.Op) error {
	err := r.Saver.WriteBatch(ctx, ops)
	if err == nil {
		for _, op := range ops {
			if op.Checkpoint != nil {
				r.report(op.Checkpoint.ID)
			}
		}
	}
	return err
}

// TestCrashLoopChild is not a test: it is the child process of
// TestCrashLoopSurvivesKills.
func TestCrashLoopChild(t *testing.T) {
	path := os.Getenv(envCrashDB)
	if path == "" {
		t.Skip("child process of TestCrashLoopSurvivesKills")
	}
	if lim := os.Getenv(envCrashFSize); lim != "" {
		n, err := strconv.ParseUint(lim, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails instead of killing
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sqlite.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	g := crashGraph(t, &reportingSaver{Saver: s})
	thread := os.Getenv(envCrashThread)
	opts := []engine.RunOption{engine.WithThread(thread), engine.WithRecursionLimit(10 * crashSteps)}
	if os.Getenv(envCrashMode) == "sync" {
		opts = append(opts, engine.WithDurability(engine.DurabilitySync))
	}
	var in engine.Input = engine.Values{}
	if _, err := s.Get(context.Background(), checkpoint.Ref{ThreadID: thread}); err == nil {
		in = nil // continue where the killed process stopped
	}
	res, err := g.Invoke(context.Background(), in, opts...)
	if err == nil && !res.Done {
		err = fmt.Errorf("run stopped before the end: next %v", res.Next)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(4)
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(5)
	}
	os.Exit(0)
}

// crashChild is one run of the child process.
type crashChild struct {
	cmd       *exec.Cmd
	mu        sync.Mutex
	committed []string
	first     chan struct{} // closed at the first commit
	stderr    strings.Builder
	done      chan error
}

func startCrashChild(t *testing.T, path, thread, mode string, fsize int64) *crashChild {
	t.Helper()
	c := &crashChild{first: make(chan struct{}), done: make(chan error, 1)}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestCrashLoopChild$", "-test.count=1")
	c.cmd.Env = append(os.Environ(), envCrashDB+"="+path, envCrashThread+"="+thread, envCrashMode+"="+mode)
	if fsize > 0 {
		c.cmd.Env = append(c.cmd.Env, envCrashFSize+"="+strconv.FormatInt(fsize, 10))
	}
	c.cmd.Stderr = &c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
				c.mu.Lock()
				if len(c.committed) == 0 {
					close(c.first)
				}
				c.committed = append(c.committed, id)
				c.mu.Unlock()
			}
		}
		c.done <- c.cmd.Wait()
	}()
	return c
}

// checkAfterCrash opens the store as the next process would (read-only,
// then writable) and checks that every checkpoint the child reported is
// there.
func checkAfterCrash(t *testing.T, path, thread string, committed []string, what string) {
	t.Helper()
	for _, opts := range [][]sqlite.Option{{sqlite.ReadOnly()}, nil} {
		s, err := sqlite.Open(path, opts...)
		if err != nil {
			t.Fatalf("%s: the store does not open: %v", what, err)
		}
		for _, id := range committed {
			if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: thread, CheckpointID: id}); err != nil {
				s.Close()
				t.Fatalf("%s: checkpoint %s, reported committed, is lost: %v", what, id, err)
			}
		}
		if opts == nil {
			// The dead child's lease would hold the thread until it
			// lapsed; the test knows its holder is dead and releases it,
			// as an operator who killed a worker may.
			ls, err := s.Leases(t.Context(), thread)
			if err != nil {
				t.Fatalf("%s: reading leases: %v", what, err)
			}
			for _, l := range ls {
				if err := s.ReleaseLease(t.Context(), l); err != nil {
					t.Fatalf("%s: releasing the dead child's lease: %v", what, err)
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// finishAndCompare runs thread to its end in this process and compares its
// final state with an uninterrupted run's.
func finishAndCompare(t *testing.T, path, thread string) {
	t.Helper()
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g := crashGraph(t, s)
	// Invoke(nil) continues from the latest checkpoint, running what is
	// left (a step whose task's writes were saved but not its checkpoint
	// shows no next task, yet is not finished).
	var in engine.Input
	if _, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: thread}); errors.Is(err, checkpoint.ErrNotFound) {
		in = engine.Values{} // killed before its first checkpoint
	}
	if _, err := g.Invoke(t.Context(), in, engine.WithThread(thread), engine.WithRecursionLimit(10*crashSteps)); err != nil {
		t.Fatalf("thread %s: resuming after the crashes: %v", thread, err)
	}
	st, err := g.GetState(t.Context(), engine.WithThread(thread))
	if err != nil {
		t.Fatal(err)
	}
	n, log, pad := crashExpected()
	if crashN.Get(engine.StateOf(st.Values)) != n || crashLog.Get(engine.StateOf(st.Values)) != log || crashPad.Get(engine.StateOf(st.Values)) != pad || len(st.Next) != 0 {
		t.Fatalf("thread %s ends with n=%d log=%s next=%v; an uninterrupted run ends with n=%d log=%s", thread,
			crashN.Get(engine.StateOf(st.Values)), crashLog.Get(engine.StateOf(st.Values)), st.Next, n, log)
	}
}

// A writer of a loop graph killed with SIGKILL at random moments, with sync
// and with async durability: after every kill the store opens with Weft
// (read-only and writable), every checkpoint the child reported committed
// is there, and the run, resumed, ends in the uninterrupted run's state.
// Then a child runs out of disk (RLIMIT_FSIZE): once the limit is gone the
// store opens and resumes the same way.
func TestCrashLoopSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 1))
	const killsPerMode = 30
	total := 0
	for _, mode := range []string{"sync", "async"} {
		kills, thread := 0, 0
		for kills < killsPerMode {
			name := fmt.Sprintf("%s-%d", mode, thread)
			c := startCrashChild(t, path, name, mode, 0)
			// Half the kills land early (opening, recovering the log, the
			// first steps), half in the middle of the loop.
			var exitErr error
			exited := false
			wait := time.Duration(r.IntN(40)) * time.Millisecond
			if r.IntN(2) == 1 {
				select {
				case <-c.first:
				case exitErr = <-c.done:
					exited = true
				case <-time.After(time.Minute):
				}
				wait = time.Duration(r.IntN(120)) * time.Millisecond
			}
			if !exited {
				select {
				case exitErr = <-c.done:
				case <-time.After(wait):
					c.cmd.Process.Signal(syscall.SIGKILL)
					exitErr = <-c.done
				}
			}
			c.mu.Lock()
			committed := c.committed
			c.mu.Unlock()
			var ee *exec.ExitError
			switch {
			case exitErr == nil:
				// The run reached its end before the kill.
				finishAndCompare(t, path, name)
				thread++
				continue
			case errors.As(exitErr, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
				kills++
				total++
			default:
				t.Fatalf("%s child failed on its own: %v\n%s", mode, exitErr, c.stderr.String())
			}
			checkAfterCrash(t, path, name, committed, fmt.Sprintf("%s kill %d (%d commits reported)", mode, kills, len(committed)))
			if r.IntN(4) == 0 { // sometimes a new thread, most often the same one resumed
				finishAndCompare(t, path, name)
				thread++
			}
		}
		finishAndCompare(t, path, fmt.Sprintf("%s-%d", mode, thread))
	}
	fi, _ := os.Stat(path)
	t.Logf("%d kills survived; store %d bytes", total, fi.Size())

	// The disk fills up: no file of the child's may grow past 1 MiB, so
	// the write-ahead log soon cannot take another commit.
	path = filepath.Join(t.TempDir(), "full.db")
	if s, err = sqlite.Open(path); err != nil {
		t.Fatal(err)
	}
	s.Close()
	const size = 1 << 20
	c := startCrashChild(t, path, "full", "sync", size)
	var exitErr error
	select {
	case exitErr = <-c.done:
	case <-time.After(2 * time.Minute):
		c.cmd.Process.Kill()
		t.Fatal("the child with a full disk did not stop")
	}
	if exitErr == nil {
		t.Fatalf("the child finished although its disk was full")
	}
	t.Logf("child on a full disk: %v: %s", exitErr, strings.TrimSpace(c.stderr.String()))
	if !strings.Contains(c.stderr.String(), "full") && !strings.Contains(c.stderr.String(), "I/O") {
		t.Errorf("the child's error does not say the disk is full: %s", c.stderr.String())
	}
	c.mu.Lock()
	committed := c.committed
	c.mu.Unlock()
	if len(committed) == 0 {
		t.Fatal("the child committed nothing before the disk filled up")
	}
	checkAfterCrash(t, path, "full", committed, fmt.Sprintf("after a full disk (%d commits reported)", len(committed)))
	finishAndCompare(t, path, "full")
}
