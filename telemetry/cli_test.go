package telemetry_test

import (
	"bytes"
	"context"
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
