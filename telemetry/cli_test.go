package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
)

func weft(t *testing.T, g *engine.Graph, args ...string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := cli.Run(context.Background(), args, cli.Env{Graphs: []*engine.Graph{g}, Stdout: &out, Stderr: &errb}); code != 0 {
		t.Fatalf("weft %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	}
}

// TestHeadlessCommandsExport checks that weft run, resume and worker trace
// their runs when OTEL_EXPORTER_OTLP_ENDPOINT is set, each command's spans
// exported before it returns, and that the run a command resumes is
// linked across the two processes' worth of commands.
func TestHeadlessCommandsExport(t *testing.T) {
	rcv := newReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	db := filepath.Join(t.TempDir(), "weft.db")
	input := `{"messages":[{"role":"user","content":"Send Ada 5."}]}`

	g1, _ := bankAgent(t)
	weft(t, g1, "run", "bank", "-input", input, "-thread", "t1", "-db", db, "-create")
	weft(t, g1, "resume", "t1", "-db", db, "-answer", `"approve"`)
	g2, _ := bankAgent(t)
	weft(t, g2, "run", "bank", "-input", input, "-thread", "t2", "-db", db)
	weft(t, g2, "answer", "t2", "-db", db, "-answer", `"approve"`)
	weft(t, g2, "worker", "-db", db)

	byThread := map[string][]*tracepb.Span{}
	for _, s := range rcv.all() {
		if len(s.ParentSpanId) == 0 {
			th := attr(s.Attributes, "weft.thread_id")
			byThread[th] = append(byThread[th], s)
		}
	}
	for _, th := range []string{"t1", "t2"} {
		runs := byThread[th]
		if len(runs) != 2 {
			t.Fatalf("thread %s: %d run spans, want 2 (the run and the resume)", th, len(runs))
		}
		first, second := runs[0], runs[1]
		if len(first.Links) != 0 {
			first, second = second, first
		}
		if len(second.Links) != 1 || string(second.Links[0].SpanId) != string(first.SpanId) || attr(second.Links[0].Attributes, "weft.link") != "resume" {
			t.Errorf("thread %s: resumed run links %v, want one to %x", th, second.Links, first.SpanId)
		}
		if len(first.Events) != 1 || first.Events[0].Name != "weft.interrupt" {
			t.Errorf("thread %s: interrupted run events %v, want its interrupt", th, first.Events)
		}
	}
	if len(byThread) != 2 {
		t.Errorf("run spans of threads %v, want t1 and t2 only", byThread)
	}
}

// TestHeadlessBadVariable checks that a command refuses to start on an
// OTEL_* value it cannot honour, naming it, instead of running untraced.
func TestHeadlessBadVariable(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "jaeger")
	g, _ := bankAgent(t)
	var out, errb bytes.Buffer
	db := filepath.Join(t.TempDir(), "weft.db")
	code := cli.Run(context.Background(), []string{"run", "bank", "-input", `{"messages":[]}`, "-db", db, "-create"},
		cli.Env{Graphs: []*engine.Graph{g}, Stdout: &out, Stderr: &errb})
	if code != 2 || !strings.Contains(errb.String(), "OTEL_TRACES_EXPORTER") {
		t.Errorf("exit %d, stderr %q; want 2 and a message naming OTEL_TRACES_EXPORTER", code, errb.String())
	}
}

// TestServeExports checks that weft serve traces the runs it serves, an
// AG-UI run and its resume here, and exports them by the time it stops.
func TestServeExports(t *testing.T) {
	rcv := newReceiver(t)
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.srv.URL+"/v1/traces")
	db := filepath.Join(t.TempDir(), "weft.db")
	g, _ := bankAgent(t)

	ctx, stop := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var errb bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- cli.Run(ctx, []string{"serve", "-addr", "127.0.0.1:0", "-db", db, "-create"}, cli.Env{Graphs: []*engine.Graph{g}, Stdout: pw, Stderr: &errb})
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "AG-UI server listening on "); ok {
			base = strings.TrimSpace(rest)
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if base == "" {
		stop()
		t.Fatalf("serve printed no address; exit %d: %s", <-code, errb.String())
	}
	post := func(body map[string]any) string {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, err := http.Post(base+"/agents/bank", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("POST: %d %s", resp.StatusCode, out)
		}
		return string(out)
	}
	first := post(map[string]any{"threadId": "s1", "runId": "r1",
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": "Send Ada 5."}}})
	_, rest, ok := strings.Cut(first, `"interrupts":[{"id":"`)
	if !ok {
		t.Fatalf("first run did not stop at the approval: %s", first)
	}
	id, _, _ := strings.Cut(rest, `"`)
	post(map[string]any{"threadId": "s1", "runId": "r2", "messages": []any{},
		"resume": []any{map[string]any{"interruptId": id, "status": "resolved", "payload": "approve"}}})
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d: %s", c, errb.String())
	}

	var runs []*tracepb.Span
	for _, s := range rcv.all() {
		if len(s.ParentSpanId) == 0 && attr(s.Attributes, "weft.thread_id") == "s1" {
			runs = append(runs, s)
		}
	}
	if len(runs) != 2 {
		t.Fatalf("%d run spans of thread s1, want 2", len(runs))
	}
	linked := 0
	for i, r := range runs {
		if len(r.Links) == 1 && string(r.Links[0].SpanId) == string(runs[1-i].SpanId) {
			linked++
		}
	}
	if linked != 1 {
		t.Errorf("runs' links %v / %v: want the resume linked to the interrupted run", runs[0].Links, runs[1].Links)
	}
}
