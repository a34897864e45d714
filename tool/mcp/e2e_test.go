package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/nodetest"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/tool/mcp"
)

// The real servers, as e2e/package-lock.json pins them (installed by
// scripts/npm-e2e-setup.sh).
const (
	everything = "@modelcontextprotocol/server-everything"
	filesystem = "@modelcontextprotocol/server-filesystem"
)

func serverScript(pkg string) string {
	return filepath.Join("e2e", "node_modules", pkg, "dist", "index.js")
}

// everythingCalls are calls of the everything server's tools and what the
// model must read back from each.
var everythingCalls = []struct {
	call engine.ToolCall
	want string
}{
	{engine.ToolCall{ID: "e", Name: "echo", Args: `{"message":"hello MCP"}`}, "Echo: hello MCP"},
	{engine.ToolCall{ID: "s", Name: "get-sum", Args: `{"a":19,"b":23}`}, "The sum of 19 and 23 is 42."},
	{engine.ToolCall{ID: "w", Name: "get-structured-content", Args: `{"location":"Chicago"}`}, `{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}`},
	// Refused before it reaches the server: the schema wants a number.
	{engine.ToolCall{ID: "x", Name: "get-sum", Args: `{"a":"nineteen","b":23}`}, `Error: invalid arguments for tool "get-sum": at /a: got string, want number. Call the tool again with arguments that fit its schema.`},
	// Refused before it reaches the server: Paris is not one of the enum's cities.
	{engine.ToolCall{ID: "y", Name: "get-structured-content", Args: `{"location":"Paris"}`}, `Error: invalid arguments for tool "get-structured-content": at /location: value must be one of 'New York', 'Chicago', 'Los Angeles'. Call the tool again with arguments that fit its schema.`},
}

func checkEverything(t *testing.T, c *mcp.Client) {
	t.Helper()
	var calls []engine.ToolCall
	for _, e := range everythingCalls {
		calls = append(calls, e.call)
	}
	calls = append(calls, engine.ToolCall{ID: "i", Name: "get-tiny-image", Args: `{}`})
	conv, seen := agentRun(t, tools(c), time.Minute, calls...)
	got := results(conv)
	for _, e := range everythingCalls {
		if got[e.call.ID] != e.want {
			t.Errorf("%s %s: the model read %q, want %q", e.call.Name, e.call.Args, got[e.call.ID], e.want)
		}
	}
	if img := got["i"]; !strings.Contains(img, "[attachment 1: image image/png, ") {
		t.Errorf("get-tiny-image: the model read %q", img)
	}
	png := attached(seen, "i")
	if len(png) != 1 || png[0].MIMEType != "image/png" || !strings.HasPrefix(string(png[0].Data), "\x89PNG\r\n") {
		t.Errorf("the model was not given the PNG get-tiny-image returned: %+v", png)
	}
}

func TestEverythingServerOverStdio(t *testing.T) {
	node := nodetest.Installed(t, "e2e", everything)
	c := connect(t, mcp.Server{Name: "everything", Command: node, Args: []string{serverScript(everything), "stdio"}})
	checkEverything(t, c)
}

func TestEverythingServerOverStreamableHTTP(t *testing.T) {
	node := nodetest.Installed(t, "e2e", everything)
	url := startEverythingHTTP(t, node)
	c := connect(t, mcp.Server{Name: "everything", URL: url})
	checkEverything(t, c)
}

// startEverythingHTTP runs the everything server over streamable HTTP on a
// free loopback port and returns its endpoint once it listens.
func startEverythingHTTP(t *testing.T, node string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, serverScript(everything), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprint("PORT=", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.Contains(sc.Text(), "listening on port") {
				ready <- ""
				break
			}
		}
		ready <- strings.Join(seen, "\n")
		for sc.Scan() {
		}
	}()
	select {
	case out := <-ready:
		if out != "" {
			t.Fatalf("the server stopped before listening: %s", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the everything server did not listen within 30s")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// The filesystem server on a scratch folder, through the agent: it lists
// and reads the folder, a write waits for approval and then lands on disk,
// and a read outside the folder comes back as the server's error.
func TestFilesystemServerWithApproval(t *testing.T) {
	node := nodetest.Installed(t, "e2e", filesystem)
	dir, err := filepath.EvalSymlinks(t.TempDir()) // the server compares resolved paths
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("kelp grows fast"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dot.png"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, mcp.Server{Name: "fs", Command: node, Args: []string{serverScript(filesystem), dir}},
		mcp.WithPrefix("fs_"), mcp.WithTools("list_directory", "read_text_file", "read_media_file", "write_file"))
	out := filepath.Join(dir, "summary.txt")
	m := scripted.New(scripted.Replies(
		scripted.Turn{Calls: []engine.ToolCall{
			{ID: "ls", Name: "fs_list_directory", Args: fmt.Sprintf(`{"path":%q}`, dir)},
			{ID: "rd", Name: "fs_read_text_file", Args: fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "notes.txt"))},
			{ID: "out", Name: "fs_read_text_file", Args: `{"path":"/etc/hostname"}`},
			{ID: "img", Name: "fs_read_media_file", Args: fmt.Sprintf(`{"path":%q}`, filepath.Join(dir, "dot.png"))},
		}},
		scripted.Turn{Calls: []engine.ToolCall{{ID: "wr", Name: "fs_write_file", Args: fmt.Sprintf(`{"path":%q,"content":"Kelp: fast."}`, out)}}},
		scripted.Turn{Text: "done"},
	))
	g, err := agent.New(m, tools(c), agent.WithApproval("fs_write_file"), agent.WithCompileOptions(engine.WithSaver(memory.New())))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := g.Invoke(ctx, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "summarise my notes"}}}, engine.WithThread("fs"))
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("want the write to wait for approval: %v %+v", err, res)
	}
	if q, ok := res.Interrupts[0].Value.(agent.ApprovalRequest); !ok || q.Tool != "fs_write_file" {
		t.Fatalf("question %#v", res.Interrupts[0].Value)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the file was written before approval: %v", err)
	}
	res, err = g.Invoke(ctx, engine.Command{Resume: "approve"}, engine.WithThread("fs"))
	if err != nil || !res.Done {
		t.Fatalf("after approval: %v %+v", err, res)
	}
	conv := msgs.Get(engine.StateOf(res.Values))
	got := results(conv)
	// The image is the tool message's attachment, and its text names it
	// once: the server's structured content repeats the image's base64,
	// which is not for the model to read as text.
	if want := fmt.Sprintf("[attachment 1: image image/png, %d B]", len(pngBytes)); got["img"] != want {
		t.Errorf("read_media_file: the model read %q, want %q", oneLine(got["img"], 200), want)
	}
	if a := attached(conv, "img"); len(a) != 1 || !bytes.Equal(a[0].Data, pngBytes) {
		t.Errorf("read_media_file: attachments %d", len(a))
	}
	if got["ls"] != "[FILE] dot.png\n[FILE] notes.txt" {
		t.Errorf("list_directory: %q", got["ls"])
	}
	if got["rd"] != "kelp grows fast" {
		t.Errorf("read_text_file: %q", got["rd"])
	}
	if !strings.HasPrefix(got["out"], "Error: ") || !strings.Contains(got["out"], "Access denied") {
		t.Errorf("a read outside the folder: %q", got["out"])
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "Kelp: fast." {
		t.Errorf("the approved write: %q, %v (the model read %q)", b, err, got["wr"])
	}
	// The call records name the server and its name for the tool, for
	// the studio's Calls tab.
	hist, err := g.History(ctx, checkpoint.ListOptions{}, engine.WithThread("fs"))
	if err != nil {
		t.Fatal(err)
	}
	origin := map[string]string{}
	for _, s := range hist {
		for _, ts := range s.Tasks {
			for _, rec := range ts.Calls {
				if rec.Kind == engine.CallTool {
					origin[rec.ToolCallID] = rec.Provider
				}
			}
		}
	}
	if origin["rd"] != "mcp fs · read_text_file" || origin["wr"] != "mcp fs · write_file" {
		t.Errorf("the tool calls' origins %q", origin)
	}
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// The everything server's resources and prompts: listed, a text resource
// and a binary one read, a prompt filled with its arguments, and the
// server's refusals named.
func TestEverythingResourcesAndPrompts(t *testing.T) {
	node := nodetest.Installed(t, "e2e", everything)
	c := connect(t, mcp.Server{Name: "everything", Command: node, Args: []string{serverScript(everything), "stdio"}})
	ctx := context.Background()
	rs, err := c.Resources(ctx)
	if err != nil || len(rs) == 0 {
		t.Fatalf("resources: %d, %v", len(rs), err)
	}
	var doc string
	for _, r := range rs {
		if strings.HasPrefix(r.URI, "demo://resource/static/document/") {
			doc = r.URI
		}
	}
	if doc == "" {
		t.Fatalf("no static document among %d resources", len(rs))
	}
	text, err := c.ReadResource(ctx, doc)
	if err != nil || len(text.Text) < 20 || text.Attachments != nil {
		t.Errorf("reading %s: %+v, %v", doc, text, err)
	}
	blob, err := c.ReadResource(ctx, "demo://resource/dynamic/blob/7")
	if err != nil || len(blob.Attachments) != 1 || len(blob.Attachments[0].Data) == 0 || !strings.Contains(blob.Text, "[attachment 1: resource demo://resource/dynamic/blob/7") {
		t.Errorf("reading the blob: %+v, %v", blob, err)
	}
	if _, err := c.ReadResource(ctx, "demo://resource/dynamic/blob/zero"); err == nil || !strings.Contains(err.Error(), "server everything: reading the resource demo://resource/dynamic/blob/zero") {
		t.Errorf("a resource the server refuses: %v", err)
	}
	ps, err := c.Prompts(ctx)
	if err != nil || len(ps) == 0 {
		t.Fatalf("prompts: %d, %v", len(ps), err)
	}
	msgs, err := c.Prompt(ctx, "args-prompt", map[string]string{"city": "Lyon", "state": "Rhône"})
	if err != nil || len(msgs) != 1 || msgs[0].Role != engine.RoleUser || msgs[0].Content != "What's weather in Lyon, Rhône?" {
		t.Errorf("args-prompt: %+v, %v", msgs, err)
	}
	if _, err := c.Prompt(ctx, "args-prompt", nil); err == nil || !strings.Contains(err.Error(), "getting the prompt args-prompt") {
		t.Errorf("a prompt without its required argument: %v", err)
	}
}
