package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The headless house must never link the window: not Fyne, not OpenGL,
// not the Graphviz the studio draws with.
func TestLinksNoWindow(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, bad := range []string{"fyne.io/", "github.com/go-gl/", "graphviz", "github.com/weftstudio/weft/ui"} {
			if strings.Contains(p, bad) {
				t.Errorf("the headless binary depends on %s", p)
			}
		}
	}
}

// buildStatic builds this command with cgo off and checks the result asks
// for no shared library at all, so it runs where no display stack is.
func buildStatic(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "weft-headless")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Fatalf("the binary needs shared libraries %v", libs)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary names a dynamic loader")
		}
	}
	return bin
}

func weft(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weft-headless %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// The static binary runs a graph to its interrupt, stores an answer, and
// its worker finishes the thread; its server answers AG-UI's agent list
// and the Agent Server API's state of the thread, and stops on SIGTERM.
func TestStaticBinaryRunsWorkerAndServer(t *testing.T) {
	bin := buildStatic(t)
	db := filepath.Join(t.TempDir(), "weft.db")
	var run struct {
		Thread string   `json:"thread_id"`
		Done   bool     `json:"done"`
		Next   []string `json:"next"`
	}
	if err := json.Unmarshal(weft(t, bin, "run", "writing assistant", "-input", `{"topic":"kelp"}`, "-db", db, "-create"), &run); err != nil {
		t.Fatal(err)
	}
	if run.Done || len(run.Next) != 1 || run.Next[0] != "review" {
		t.Fatalf("run stopped at %v (done %v), want the review interrupt", run.Next, run.Done)
	}
	weft(t, bin, "answer", run.Thread, "-answer", `"approve"`, "-db", db)
	weft(t, bin, "worker", "-db", db)
	var state struct {
		Next []string `json:"next"`
		Ran  []string `json:"ran"`
	}
	if err := json.Unmarshal(weft(t, bin, "state", run.Thread, "-db", db), &state); err != nil {
		t.Fatal(err)
	}
	if len(state.Next) != 0 || len(state.Ran) != 1 || state.Ran[0] != "publish" {
		t.Fatalf("after the worker the head ran %v and next is %v; want publish, and nothing next", state.Ran, state.Next)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "serve", "-addr", "127.0.0.1:0", "-db", db)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	var base string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "AG-UI server listening on "); ok {
			base = strings.TrimSpace(rest)
			break
		}
	}
	if base == "" {
		t.Fatal("serve printed no address")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	resp, err := http.Get(base + "/agents")
	if err != nil {
		t.Fatal(err)
	}
	var agents []struct {
		Name string `json:"name"`
	}
	err = json.NewDecoder(resp.Body).Decode(&agents)
	resp.Body.Close()
	if err != nil || len(agents) == 0 {
		t.Fatalf("GET /agents: %v, %d agents", err, len(agents))
	}
	// The Agent Server API at the root reads the same store: the thread
	// the commands above ran, finished.
	resp, err = http.Get(base + "/threads/" + run.Thread + "/state")
	if err != nil {
		t.Fatal(err)
	}
	var snap struct {
		Next   []string       `json:"next"`
		Values map[string]any `json:"values"`
	}
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || len(snap.Next) != 0 || snap.Values["published"] == "" || snap.Values["published"] == nil {
		t.Fatalf("GET /threads/%s/state: %d %v, next %v, published %v", run.Thread, resp.StatusCode, err, snap.Next, snap.Values["published"])
	}
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}

// Without a command the headless binary says it has no window instead of
// trying to open one.
func TestNoWindowSaysSo(t *testing.T) {
	bin := buildStatic(t)
	cmd := exec.Command(bin)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(string(out), "has no window") || !strings.Contains(string(out), "worker") {
		t.Fatalf("said %q", out)
	}
	// Its help offers no studio it does not have.
	help, err := exec.Command(bin, "help").CombinedOutput()
	if err != nil || strings.Contains(string(help), "studio") || !strings.Contains(string(help), "worker") {
		t.Fatalf("help: %v, %s", err, help)
	}
}
