package examples_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/internal/nodetest"
)

const fsServer = "../tool/mcp/e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"

// The files agent on the real filesystem server from npm: it finds the
// folder, reads the to-do list and the chart (the image reaches the model
// as an attachment), and its write waits for approval, then happens.
func TestFilesAgentOnTheFilesystemServer(t *testing.T) {
	node := nodetest.Installed(t, "../tool/mcp/e2e", "@modelcontextprotocol/server-filesystem")
	dir := filepath.Join(t.TempDir(), "notes")
	t.Setenv(examples.FilesEnv, dir)
	t.Setenv(examples.FilesServerEnv, node+" "+fsServer)
	opts, err := examples.FilesFromEnv()
	if err != nil || len(opts) != 1 {
		t.Fatalf("options %d, %v", len(opts), err)
	}
	demos, err := examples.All(memory.New(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	d := demos[len(demos)-1]
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	})
	if d.Graph.Name() != "files agent" || len(demos) != 4 {
		t.Fatalf("demos: %d, last %q", len(demos), d.Graph.Name())
	}
	res := run(t, d.Graph, d.Example, "f")
	if len(res.Interrupts) != 1 {
		t.Fatalf("want the write to wait for approval: %+v", res)
	}
	if q, ok := res.Interrupts[0].Value.(agent.ApprovalRequest); !ok || q.Tool != "write_file" || !strings.Contains(q.Args, `- buy bait`) {
		t.Fatalf("question %#v", res.Interrupts[0].Value)
	}
	before, err := os.ReadFile(filepath.Join(dir, "todo.md"))
	if err != nil || strings.Contains(string(before), "bait") {
		t.Fatalf("written before approval: %q %v", before, err)
	}
	msgs := examples.AgentMessages.Get(engine.StateOf(res.Values))
	var read, chart *engine.Message
	for i, m := range msgs {
		switch m.Name {
		case "read_text_file":
			read = &msgs[i]
		case "read_media_file":
			chart = &msgs[i]
		}
	}
	if read == nil || !strings.Contains(read.Content, "check the tide tables") {
		t.Fatalf("the to-do list read: %+v", read)
	}
	png, _ := os.ReadFile(filepath.Join(dir, "tides.png"))
	if chart == nil || len(chart.Attachments) != 1 || !bytes.Equal(chart.Attachments[0].Data, png) || strings.Contains(chart.Content, "iVBOR") {
		t.Fatalf("the chart read: %+v", chart)
	}
	res = run(t, d.Graph, engine.Command{Resume: "approve"}, "f")
	if !res.Done {
		t.Fatalf("after approval: %+v", res)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "todo.md"))
	if want := string(before) + "- buy bait\n"; string(after) != want {
		t.Errorf("todo.md is %q, want %q", after, want)
	}
	msgs = examples.AgentMessages.Get(engine.StateOf(res.Values))
	if last := msgs[len(msgs)-1]; !strings.HasPrefix(last.Content, "Done: Successfully wrote to ") {
		t.Errorf("the answer %q", last.Content)
	}
}

// Without the variable there is no files agent; an existing folder is
// used as it is, never seeded.
func TestFilesFromEnv(t *testing.T) {
	t.Setenv(examples.FilesEnv, "")
	if opts, err := examples.FilesFromEnv(); opts != nil || err != nil {
		t.Errorf("unset: %v, %v", opts, err)
	}
	dir := t.TempDir()
	t.Setenv(examples.FilesEnv, dir)
	if opts, err := examples.FilesFromEnv(); len(opts) != 1 || err != nil {
		t.Errorf("an existing folder: %v, %v", opts, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("an existing folder was seeded: %v", ents)
	}
	if srv := examples.FilesServer(dir); srv.Command != "npx" || srv.Args[len(srv.Args)-1] != dir {
		t.Errorf("default server %+v", srv)
	}
}

// The tool agent keeps a preference in the graph's long-term store and
// reads it into a later thread; without a store it says it has none.
func TestAgentRemembersAcrossThreads(t *testing.T) {
	d, err := examples.Agent(memory.New())
	if err != nil {
		t.Fatal(err)
	}
	lt := longterm.NewMemory(longterm.Config{})
	g := d.Graph.WithStore(lt)
	say := func(thread, text string) string {
		t.Helper()
		res := run(t, g, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: text}}}, thread)
		msgs := examples.AgentMessages.Get(engine.StateOf(res.Values))
		return msgs[len(msgs)-1].Content
	}
	if got := say("a", "Remember that I prefer euros"); got != "Done. Remembered: I prefer euros." {
		t.Fatalf("first thread answered %q", got)
	}
	items, err := lt.Search(ctx, longterm.SearchQuery{Prefix: examples.PreferencesNamespace})
	if err != nil || len(items) != 1 || items[0].Value["preference"] != "I prefer euros" {
		t.Fatalf("the store holds %+v, %v", items, err)
	}
	if got := say("b", "What is my balance?"); !strings.HasSuffix(got, "(I remember: I prefer euros.)") {
		t.Errorf("a later thread answered %q, without the preference", got)
	}
	// Another thread's preference, asked for with the same call id, is
	// kept beside the first, not over it.
	say("c", "Remember that I like tea")
	if got := say("d", "What is my balance?"); !strings.HasSuffix(got, "(I remember: I prefer euros; I like tea.)") {
		t.Errorf("after a second thread's preference the agent answered %q", got)
	}
	res := run(t, d.Graph, engine.Values{"messages": []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "Remember that I like tea"}}}, "e")
	msgs := examples.AgentMessages.Get(engine.StateOf(res.Values))
	if last := msgs[len(msgs)-1].Content; !strings.Contains(last, "Error: no long-term store") {
		t.Errorf("without a store the agent answered %q", last)
	}
}
