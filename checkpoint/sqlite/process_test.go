package sqlite_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/sqlite"
)

// Environment of the helper process.
const (
	envHelper = "WEFT_SQLITE_TEST_HELPER" // "writer" switches TestHelperProcess on
	envPath   = "WEFT_SQLITE_TEST_PATH"
	envThread = "WEFT_SQLITE_TEST_THREAD"
	envCount  = "WEFT_SQLITE_TEST_COUNT" // 0: write until killed
	envGo     = "WEFT_SQLITE_TEST_GO"    // if set, wait for this file before writing
)

// TestHelperProcess is not a test: the tests below run the test binary again
// with envHelper set, and this function then writes checkpoints to a store
// as a separate process would. It prints "ready" once the store is open,
// waits for the file named by envGo if that is set, and after each committed
// checkpoint and write prints "committed <checkpoint id>".
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) != "writer" {
		t.Skip("helper process for TestTwoProcessesWriteOneFile and TestKill9KeepsCommitted")
	}
	path, thread := os.Getenv(envPath), os.Getenv(envThread)
	n, err := strconv.Atoi(os.Getenv(envCount))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad count:", err)
		os.Exit(2)
	}
	s, err := sqlite.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	if goFile := os.Getenv(envGo); goFile != "" {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			if _, err := os.Stat(goFile); err == nil {
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintln(os.Stderr, "no go signal")
				os.Exit(2)
			}
		}
	}
	ctx := t.Context()
	parent := checkpoint.Ref{ThreadID: thread}
	for i := 0; n == 0 || i < n; i++ {
		cp := stepCheckpoint(thread, i)
		changed := map[string]int64{"step": int64(i + 1)}
		if i == 0 {
			changed = cp.ChannelVersions
		}
		ref, err := s.Put(ctx, parent, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop, Step: i}, changed)
		if err == nil {
			err = s.PutWrites(ctx, ref, []checkpoint.Write{{Channel: "step", Value: []byte(fmt.Sprint(i))}}, fmt.Sprint("task-", i), "")
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("committed %s\n", cp.ID)
		parent = ref
	}
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// stepCheckpoint is the i-th checkpoint a helper writes: channel "owner"
// set once, channel "step" changing every step.
func stepCheckpoint(thread string, i int) checkpoint.Checkpoint {
	return checkpoint.Checkpoint{
		V: 4, ID: checkpoint.NewID(), TS: time.Now(),
		ChannelValues:   map[string][]byte{"owner": []byte(thread), "step": []byte(fmt.Sprint(i))},
		ChannelVersions: map[string]int64{"owner": 1, "step": int64(i + 1)},
	}
}

func helper(t *testing.T, path, thread string, n int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envHelper+"=writer", envPath+"="+path, envThread+"="+thread, envCount+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	return cmd
}

// checkThread verifies that a helper's thread holds checkpoints for steps
// 0…n-1 (at least those in ids), each with its values and write, chained
// parent to child.
func checkThread(t *testing.T, s *sqlite.Saver, thread string, n int) {
	t.Helper()
	var got []*checkpoint.Tuple
	for tp, err := range s.List(t.Context(), checkpoint.ListOptions{ThreadID: thread}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tp)
	}
	if len(got) != n {
		t.Fatalf("thread %s has %d checkpoints, want %d", thread, len(got), n)
	}
	for i, tp := range got {
		step := n - 1 - i
		v := tp.Checkpoint.ChannelValues
		if tp.Metadata.Step != step || string(v["owner"]) != thread || string(v["step"]) != fmt.Sprint(step) {
			t.Fatalf("thread %s checkpoint %d: step %d values %q %q", thread, i, tp.Metadata.Step, v["owner"], v["step"])
		}
		if len(tp.PendingWrites) != 1 || string(tp.PendingWrites[0].Value) != fmt.Sprint(step) {
			t.Fatalf("thread %s step %d writes %+v", thread, step, tp.PendingWrites)
		}
		if i+1 < len(got) && (tp.Parent == nil || tp.Parent.CheckpointID != got[i+1].Ref.CheckpointID) {
			t.Fatalf("thread %s step %d parent %v, want %s", thread, step, tp.Parent, got[i+1].Ref.CheckpointID)
		}
	}
}

// Two processes write different threads of one new file at the same time;
// nothing is lost. Both open the file first, then start writing together,
// and their commits must interleave, so the test does exercise two writers.
func TestTwoProcessesWriteOneFile(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two processes")
	}
	const n = 200
	dir := t.TempDir()
	path, goFile := filepath.Join(dir, "shared.db"), filepath.Join(dir, "go")
	type result struct {
		ids []string
		err error
	}
	var cmds []*exec.Cmd
	results := make(chan result, 2)
	ready := make(chan bool, 2)
	for _, thread := range []string{"process-a", "process-b"} {
		cmd := helper(t, path, thread, n)
		cmd.Env = append(cmd.Env, envGo+"="+goFile)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		go func() {
			var ids []string
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "ready" {
					ready <- true
				} else if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
					ids = append(ids, id)
				}
			}
			results <- result{ids, cmd.Wait()}
		}()
	}
	for range 2 {
		select {
		case <-ready:
		case <-time.After(time.Minute):
			for _, c := range cmds {
				c.Process.Kill()
			}
			t.Fatal("helpers did not open the store")
		}
	}
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r1, r2 := <-results, <-results
	if r1.err != nil || r2.err != nil {
		t.Fatalf("helpers failed: %v, %v", r1.err, r2.err)
	}
	if len(r1.ids) != n || len(r2.ids) != n {
		t.Fatalf("helpers reported %d and %d commits, want %d each", len(r1.ids), len(r2.ids), n)
	}
	// Ids are time-ordered: overlapping ranges mean interleaved commits.
	if r1.ids[n-1] < r2.ids[0] || r2.ids[n-1] < r1.ids[0] {
		t.Fatalf("the two writers did not overlap (%s…%s and %s…%s)", r1.ids[0], r1.ids[n-1], r2.ids[0], r2.ids[n-1])
	}
	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkThread(t, s, "process-a", n)
	checkThread(t, s, "process-b", n)
}

// A process killed with SIGKILL while writing loses nothing it reported as
// committed, and leaves a store that opens (quick_check passes) and accepts
// writes.
func TestKill9KeepsCommitted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "killed.db")
	cmd := helper(t, path, "victim", 0)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var committed []string
	sc := bufio.NewScanner(out) // "ready", then one line per commit
	for len(committed) < 150 && sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
			committed = append(committed, id)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, out)
	cmd.Wait()
	if len(committed) < 150 {
		t.Fatalf("helper reported %d commits before it stopped", len(committed))
	}

	s, err := sqlite.Open(path)
	if err != nil {
		t.Fatalf("store left by a killed writer does not open: %v", err)
	}
	defer s.Close()
	for i, id := range committed {
		tp, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "victim", CheckpointID: id})
		if err != nil {
			t.Fatalf("reported commit %d (%s) lost: %v", i, id, err)
		}
		if string(tp.Checkpoint.ChannelValues["step"]) != fmt.Sprint(i) || len(tp.PendingWrites) != 1 {
			t.Fatalf("reported commit %d: values %q writes %d", i, tp.Checkpoint.ChannelValues["step"], len(tp.PendingWrites))
		}
	}
	latest, err := s.Get(t.Context(), checkpoint.Ref{ThreadID: "victim"})
	if err != nil {
		t.Fatal(err)
	}
	cp := stepCheckpoint("victim", latest.Metadata.Step+1)
	if _, err := s.Put(t.Context(), latest.Ref, cp, checkpoint.Metadata{Source: checkpoint.SourceLoop}, cp.ChannelVersions); err != nil {
		t.Fatalf("writing after the crash: %v", err)
	}
}
