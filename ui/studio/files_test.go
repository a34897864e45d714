package studio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/examples"
	"github.com/weftstudio/weft/internal/nodetest"
)

// The files agent in the studio, on the real filesystem MCP server from
// npm: the run's calls name the server and its tool, the chart the server
// returned shows in the chat, and the write waits for the approval given
// in the window.
func TestFilesAgentInTheStudio(t *testing.T) {
	node := nodetest.Installed(t, "../../tool/mcp/e2e", "@modelcontextprotocol/server-filesystem")
	dir := filepath.Join(t.TempDir(), "notes")
	t.Setenv(examples.FilesEnv, dir)
	t.Setenv(examples.FilesServerEnv, node+" ../../tool/mcp/e2e/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	demos, err := examples.AllFromEnv(nil)
	if err != nil {
		t.Fatal(err)
	}
	gs := graphsOf(t, demos)
	s := openStudio(t, test.NewTempApp(t), Config{Store: memory.New(), StoreName: "test.db", Graphs: gs})
	act(func() { s.Window().Resize(fyne.NewSize(1280, 800)) })
	idle(t, s)
	act(func() { s.m.setGraph(len(gs) - 1) })
	idle(t, s)
	if name := s.m.graph().Graph.Name(); name != "files agent" {
		t.Fatalf("graph %q", name)
	}
	act(func() { s.startThread("f-1", s.m.graph().Example) })
	idle(t, s)
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("no approval question (%q)", s.m.scope().status)
	}
	origins := map[string]bool{}
	for _, c := range s.m.scope().calls {
		origins[c.Record.Provider] = true
	}
	for _, want := range []string{"mcp files · list_allowed_directories", "mcp files · read_text_file", "mcp files · read_media_file"} {
		if !origins[want] {
			t.Errorf("no call of %q among the run's calls %v", want, origins)
		}
	}
	act(func() {
		s.insp.tabs.Select(s.insp.chatTab)
		walkObjects(s.insp.chat.box, func(o fyne.CanvasObject) bool {
			if a, ok := o.(*widget.Accordion); ok { // unfold the calls: the chart is under its call
				a.MultiOpen = true
				a.OpenAll()
			}
			return false
		})
	})
	if len(previewsShown(t, s.insp.chat.box, 1)) == 0 {
		t.Error("the chat shows no chart from read_media_file")
	}
	if q := s.ip.items[0]; len(q.choices) != 2 || q.choices[0].Text != "Approve" {
		t.Fatalf("approval choices %d (want Approve, Reject)", len(q.choices))
	}
	act(func() { test.Tap(s.ip.items[0].choices[0]) })
	idle(t, s)
	if s.m.scope().status != "done" {
		t.Fatalf("status %q", s.m.scope().status)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "todo.md")); err != nil || !strings.HasSuffix(string(b), "- buy bait\n") {
		t.Errorf("todo.md after approval: %q %v", b, err)
	}
}
