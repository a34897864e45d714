// Package lgserver starts a real LangGraph Agent Server for tests: the
// in-memory dev server of @langchain/langgraph-cli 1.5.1 (what `langgraph
// dev` runs), offline on loopback, serving the two LangGraph.js graphs in
// app/src: "approval" (plan → research, a subgraph whose pick node
// interrupts → review, which interrupts → finalize; configurable.delay_ms
// slows plan) and "agent" (a tool-calling loop on a scripted model that
// streams its answer word by word).
//
// scripts/npm-e2e-setup.sh installs the server into app/node_modules.
package lgserver

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/internal/nodetest"
)

// StartTimeout bounds the wait for a first GET /ok: the dev server
// compiles the TypeScript graphs at start, 15–30 s on a quiet 2-core
// machine and more under load.
const StartTimeout = 4 * time.Minute

// App is the folder holding the server's package.json and graphs.
func App() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "app")
}

// Server is a running dev server.
type Server struct {
	// URL is the server's base address, http://127.0.0.1:PORT.
	URL string
	// Log is the file the server writes its output to.
	Log string
}

// Start starts a fresh dev server (no threads) on a free loopback port and
// stops it when the test ends. It skips the test when the server is not
// installed, or fails it where services are required (nodetest.Missing).
// The server runs from a copy of App, because the dev server keeps its
// threads and edits .gitignore in the folder it runs in.
func Start(t testing.TB) *Server {
	t.Helper()
	app := App()
	nodetest.Installed(t, app, "@langchain/langgraph-cli", "@langchain/langgraph-api")
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "src"), os.DirFS(filepath.Join(app, "src"))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"package.json", "langgraph.json"} {
		b, err := os.ReadFile(filepath.Join(app, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(app, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Log: filepath.Join(dir, "server.log")}
	logf, err := os.Create(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "langgraphjs"), "dev",
		"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--no-browser", "--no-reload",
		"--studio-url", "http://127.0.0.1:1")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	// Offline: no analytics call, no tracing, no browser; schema
	// extraction (GET …/schemas) may take minutes on a loaded machine.
	cmd.Env = append(os.Environ(), "LANGGRAPH_CLI_NO_ANALYTICS=1", "LANGSMITH_TRACING=false",
		"LANGCHAIN_TRACING_V2=false", "BROWSER=none", "LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS=180000")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the CLI forks a worker: stop the group
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("starting LangGraph's dev server: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); logf.Close() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	for {
		if ok(ctx, s.URL) {
			return s
		}
		select {
		case err := <-exited:
			t.Fatalf("LangGraph's dev server exited before answering /ok (%v); its log:\n%s", err, tail(s.Log))
		case <-ctx.Done():
			t.Fatalf("LangGraph's dev server did not answer /ok within %v; its log:\n%s", StartTimeout, tail(s.Log))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func ok(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/ok", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last 4 KiB of a log, for a failure message.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4096 {
		b = b[len(b)-4096:]
	}
	return string(bytes.TrimSpace(b))
}
