//go:build unix

package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

// TestServeStopsOnSIGTERM: SIGTERM reaches weft serve in the middle of a
// step. The step finishes and is checkpointed, the stream ends with
// RUN_FINISHED, the process exits 0, and a new server continues the thread
// from there, without moving the money again.
func TestServeStopsOnSIGTERM(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "weft.db")
	ledger := filepath.Join(dir, "ledger")
	env := []string{ledgerFileVar + "=" + ledger, slowVar + "=1s"}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	g := bankGraph(t).WithSaver(s)
	if _, err := g.Invoke(context.Background(), engine.Values{"amount": 9}, engine.WithThread("t")); err != nil {
		t.Fatal(err)
	}
	snap, _ := g.GetState(context.Background(), engine.WithThread("t"))
	s.Close()

	serve := func() (string, func() error) {
		cmd := weft(context.Background(), env, "serve", "-db", db, "-addr", "127.0.0.1:0")
		out, _ := cmd.StdoutPipe()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("serve: %v %s", err, stderr.String())
		}
		go io.Copy(io.Discard, out)
		stop := func() error {
			cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			if err != nil {
				err = &exitError{err, stderr.String()}
			}
			return err
		}
		return strings.TrimSpace(strings.TrimPrefix(line, "AG-UI server listening on ")), stop
	}
	post := func(base string, body map[string]any) (*http.Response, *bufio.Reader) {
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+"/agents/bank", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, bufio.NewReader(resp.Body)
	}

	base, stop := serve()
	resp, r := post(base, map[string]any{"threadId": "t", "runId": "r1", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": snap.Interrupts[0].ID, "status": "resolved", "payload": "approve"}}})
	var frames []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("stream broke before the step started: %v %v", err, frames)
		}
		frames = append(frames, line)
		if strings.Contains(line, `"STEP_STARTED"`) {
			break
		}
	}
	time.Sleep(200 * time.Millisecond) // inside the transfer
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	rest, err := io.ReadAll(r)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("the stream broke on SIGTERM: %v", err)
	}
	tail := string(rest)
	if !strings.HasSuffix(tail, "\n\n") || !strings.Contains(tail, `"type":"RUN_FINISHED"`) || strings.Contains(tail, "RUN_ERROR") {
		t.Fatalf("the stream did not end cleanly:\n%s", tail)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("serve on SIGTERM: %v", err)
	}
	if n := ledgerLines(t, ledger); n != 1 {
		t.Fatalf("%d transfers", n)
	}
	s, err = store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	snap, err = bankGraph(t).WithSaver(s).GetState(context.Background(), engine.WithThread("t"))
	s.Close()
	if err != nil || strings.Join(snap.Next, ",") != "audit" || len(snap.Tasks) != 1 {
		t.Fatalf("after SIGTERM the thread should wait at a step boundary before audit: %v %+v", err, snap)
	}

	base, stop = serve()
	resp, r = post(base, map[string]any{"threadId": "t", "runId": "r2", "messages": []any{}})
	all, _ := io.ReadAll(r)
	resp.Body.Close()
	if !strings.Contains(string(all), `"stepName":"audit"`) || !strings.Contains(string(all), `"outcome":{"type":"success"}`) {
		t.Errorf("the restarted server did not finish the thread:\n%s", all)
	}
	if err := stop(); err != nil {
		t.Error(err)
	}
	if n := ledgerLines(t, ledger); n != 1 {
		t.Errorf("%d transfers after the restart, want 1", n)
	}
}

type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.stderr }

// TestWorkerStopsOnSignal: SIGTERM, or SIGINT to a worker started with
// SIGINT ignored (a script's background job), reaches `weft worker -watch`
// in the middle of the transfer step. The step finishes and is stored, the
// worker exits 0 without starting audit, and the next worker continues the
// thread from there without moving the money again.
func TestWorkerStopsOnSignal(t *testing.T) {
	for _, c := range []struct {
		name      string
		sig       syscall.Signal
		ignoreINT bool
	}{{"SIGTERM", syscall.SIGTERM, false}, {"SIGINT ignored at start", syscall.SIGINT, true}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "weft.db")
			ledger := filepath.Join(dir, "ledger")
			env := []string{ledgerFileVar + "=" + ledger, slowVar + "=1s"}
			s, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bankGraph(t).WithSaver(s).Invoke(context.Background(), engine.Values{"amount": 9}, engine.WithThread("t")); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if out, err := weft(context.Background(), env, "answer", "t", "-answer", `"approve"`, "-db", db).CombinedOutput(); err != nil {
				t.Fatalf("answer: %v %s", err, out)
			}

			cmd := weft(context.Background(), env, "worker", "-watch", "50ms", "-db", db)
			if c.ignoreINT {
				args := append([]string{"-c", `trap "" INT; exec "$@"`, "sh"}, cmd.Args...)
				sh := exec.Command("sh", args...)
				sh.Env = cmd.Env
				cmd = sh
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(30 * time.Second); ledgerLines(t, ledger) == 0; time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the worker never started the transfer: %s", stderr.String())
				}
			}
			cmd.Process.Signal(c.sig) // inside the transfer
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("worker on %s: %v\n%s", c.name, err, stderr.String())
				}
			case <-time.After(30 * time.Second): // only ends a hung test
				cmd.Process.Kill()
				t.Fatalf("the worker ignored %s: %s", c.name, stderr.String())
			}
			if !strings.Contains(stderr.String(), "stopping at the next step boundary") {
				t.Errorf("the worker did not say how it stopped: %s", stderr.String())
			}
			if next := bankNext(t, db); strings.Join(next, ",") != "audit" {
				t.Fatalf("after %s the thread should wait before audit, its transfer stored: next %v", c.name, next)
			}

			out, err := weft(context.Background(), env, "worker", "-db", db).CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"thread_id": "t"`) {
				t.Fatalf("the next worker did not continue the thread: %v %s", err, out)
			}
			if n := ledgerLines(t, ledger); n != 1 {
				t.Fatalf("%d transfers, want 1", n)
			}
			if next := bankNext(t, db); len(next) != 0 {
				t.Fatalf("the thread did not finish: next %v", next)
			}
		})
	}
}

// bankNext opens the store at db and returns what thread "t" of the bank
// graph runs next.
func bankNext(t *testing.T, db string) []string {
	t.Helper()
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap, err := bankGraph(t).WithSaver(s).GetState(context.Background(), engine.WithThread("t"))
	if err != nil {
		t.Fatal(err)
	}
	return snap.Next
}
