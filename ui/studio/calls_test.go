package studio

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/weftstudio/weft/engine"
)

// callRows returns the Calls list as the user reads it, one "head | detail"
// line per row.
func callRows(c *callsView) []string {
	var out []string
	for _, r := range c.rows {
		h, d := c.rowText(r)
		out = append(out, strings.TrimSpace(h)+" | "+d)
	}
	return out
}

// openCalls opens the inspector's Calls tab.
func openCalls(t *testing.T, s *Studio) *callsView {
	t.Helper()
	act(func() { s.insp.tabs.Select(s.insp.callsTab) })
	if s.insp.tabs.Selected() != s.insp.callsTab {
		t.Fatal("no Calls tab")
	}
	return s.insp.calls
}

// The tool agent's model and tool calls, at each checkpoint of its thread:
// the model's request (system prompt, user message, tools offered), its
// reply with the tool calls it asked for and its tokens; the tools' calls
// with arguments and results, the one made before the approval question
// shown while the question waits; a call selected shows in full.
func TestCallsTabOnAgent(t *testing.T) {
	s := onGraph(t, 1)
	act(func() { s.startThread("calls-1", s.m.graph().Example) })
	idle(t, s)
	step(t, s) // agent asks for two tools
	c := openCalls(t, s)
	rows := callRows(c)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "Step 1 · agent | wrote this checkpoint · 1 call") ||
		!strings.HasPrefix(rows[1], "model scripted-bank-clerk · ") || !strings.Contains(rows[1], "| asks for get_balance, transfer_money: Let me check") {
		t.Fatalf("rows after the agent's step:\n%s", strings.Join(rows, "\n"))
	}
	if !strings.Contains(rows[1], " tokens · ") {
		t.Errorf("no token counts in %q", rows[1])
	}
	// Tapping the call opens it in full.
	act(func() { c.list.Select(1) })
	if !c.detPg.Visible() || c.listPg.Visible() || c.pos.Text != "call 1 of 1" || !c.nextB.Disabled() {
		t.Fatalf("the call did not open: detail shown %v, %q", c.detPg.Visible(), c.pos.Text)
	}
	d := c.text()
	for _, want := range []string{
		"Model call · scripted-bank-clerk", "Step 1 · agent · started 12:00:00.000", "latency ",
		"Request · 2 messages", "System\nYou are a bank assistant.", "You\nCheck my balance, then send 250 to Alice.",
		"Tools offered · 3 tools", "get_balance Returns the account's balance.", `"minimum": 1`,
		"Reply\nAssistant\nLet me check your balance, then ask you to approve the transfer.",
		`→ transfer_money {"amount":250,"to":"Alice"}  id call-1-transfer`, "finish tool_calls",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("detail lacks %q:\n%s", want, d)
		}
	}
	if c.copyB.Disabled() {
		t.Error("Copy disabled with a call selected")
	}
	act(func() { test.Tap(c.copyB) })
	var rec engine.CallRecord
	if err := json.Unmarshal([]byte(fyne.CurrentApp().Clipboard().Content()), &rec); err != nil || rec.Name != "scripted-bank-clerk" || len(rec.Request) != 2 {
		t.Errorf("clipboard: %v %+v", err, rec)
	}

	// Run: tools reads the balance, then asks to approve the transfer.
	act(func() { test.Tap(s.tb.run) })
	idle(t, s)
	if len(s.ip.items) != 1 {
		t.Fatalf("no approval question (%q)", s.m.scope().status)
	}
	c = openCalls(t, s)
	rows = callRows(c)
	// The head is still the agent's checkpoint: its call, then the call
	// the tools task made before it asked.
	if len(rows) != 4 || !strings.HasPrefix(rows[0], "Step 1 · agent | wrote this checkpoint") ||
		rows[2] != "Step 2 · tools | planned here · waiting for an answer · 1 call" ||
		!strings.HasPrefix(rows[3], "tool get_balance({}) · ") || !strings.HasSuffix(rows[3], "| → Balance: 1000.") {
		t.Fatalf("rows while the approval waits:\n%s", strings.Join(rows, "\n"))
	}
	// The live calls of that run were listed as they came.
	if n := len(s.m.scope().calls); n != 1 || s.m.scope().calls[0].Record.Name != "get_balance" || s.m.scope().calls[0].Node != "tools" {
		t.Errorf("live calls of the run: %+v", s.m.scope().calls)
	}

	act(func() { test.Tap(s.ip.items[0].choices[0]) }) // approve: transfer, then the agent answers
	idle(t, s)
	if s.m.scope().status != "done" {
		t.Fatalf("status %q", s.m.scope().status)
	}
	c = openCalls(t, s)
	rows = callRows(c)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "Step 3 · agent | wrote this checkpoint") ||
		!strings.Contains(rows[1], `| “Done. Balance: 1000. Sent 250 to Alice.”`) {
		t.Fatalf("rows at the end:\n%s", strings.Join(rows, "\n"))
	}
	if d := c.text(); !strings.Contains(d, "Request · 5 messages") || !strings.Contains(d, "Tool · result of call-1-transfer\nSent 250 to Alice.") {
		t.Errorf("final model call:\n%s", d)
	}
	// Back one checkpoint: the tools step, with both tool calls.
	act(func() { s.travel(-1) })
	idle(t, s)
	c = openCalls(t, s)
	rows = callRows(c)
	if len(rows) < 3 || !strings.HasPrefix(rows[0], "Step 2 · tools | wrote this checkpoint · 2 calls") ||
		!strings.HasPrefix(rows[1], "tool get_balance({})") || !strings.HasPrefix(rows[2], `tool transfer_money({"amount":250,"to":"Alice"})`) ||
		!strings.HasSuffix(rows[2], "| → Sent 250 to Alice.") {
		t.Fatalf("rows at the tools checkpoint:\n%s", strings.Join(rows, "\n"))
	}
	// The call open before (the first) stays open; Next walks on.
	if !c.detPg.Visible() || !strings.Contains(c.text(), "Tool call · get_balance") {
		t.Fatalf("the first call is not open at the tools checkpoint:\n%s", c.text())
	}
	act(func() { test.Tap(c.nextB) })
	if d := c.text(); c.pos.Text != "call 2 of 3" || !strings.Contains(d, "Tool call · transfer_money") || !strings.Contains(d, "call id call-1-transfer") ||
		!strings.Contains(d, "Arguments\n{\n  \"amount\": 250,") || !strings.Contains(d, "Result\nSent 250 to Alice.") {
		t.Errorf("transfer detail:\n%s", d)
	}
	act(func() { test.Tap(c.backB) })
	if c.detPg.Visible() || !c.listPg.Visible() {
		t.Error("All calls did not go back to the list")
	}
	// Another thread: nothing of this one stays.
	act(func() { s.m.setThread("") })
	if len(s.insp.calls.rows) != 0 || !s.insp.calls.empty.Visible() {
		t.Errorf("calls of another thread still listed: %v", callRows(s.insp.calls))
	}
}

// While a run goes, calls are listed as they are reported, under the task
// that made them, before the step ends.
func TestCallsStreamLive(t *testing.T) {
	s := onGraph(t, 1)
	act(func() { s.startThread("calls-live", s.m.graph().Example) })
	idle(t, s)
	sc := s.m.scope()
	c := openCalls(t, s)
	obs := &runObserver{s: s, sc: sc}
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	call := func(name string, args string) engine.Event {
		return engine.Event{Mode: engine.ModeCalls, Step: 0, Time: start, Call: &engine.CallEvent{Node: "tools", TaskID: "t9",
			Record: engine.CallRecord{Kind: engine.CallTool, Name: name, Start: start, Latency: 3 * time.Millisecond,
				Args: engine.CallText{Text: args}, Result: engine.CallText{Text: "ok"}}}}
	}
	act(func() {
		s.m.startRun(kindRun, sc.thread)
		s.m.setBusy()
		obs.observe(call("get_balance", "{}"))
		s.m.update(obs.flush)
	})
	rows := callRows(c)
	if len(rows) < 2 || rows[0] != "Step 0 · tools | running now · 1 call" || rows[1] != "tool get_balance({}) · 3 ms | → ok" {
		t.Fatalf("live rows:\n%s", strings.Join(rows, "\n"))
	}
	if !strings.HasSuffix(c.summary.Text, "· streaming") {
		t.Errorf("summary %q", c.summary.Text)
	}
	act(func() {
		obs.observe(call("transfer_money", `{"amount":5}`))
		s.m.update(obs.flush)
	})
	rows = callRows(c)
	if len(rows) < 3 || rows[0] != "Step 0 · tools | running now · 2 calls" || !strings.HasPrefix(rows[2], `tool transfer_money({"amount":5})`) {
		t.Fatalf("live rows after a second call:\n%s", strings.Join(rows, "\n"))
	}
	// The event log has a row per call too, filterable.
	act(func() { s.ev.mode.SetSelected("calls") })
	if len(s.ev.shown) != 2 {
		t.Errorf("%d call rows in the event log", len(s.ev.shown))
	}
	act(func() { s.m.endRun(0) })
	for _, r := range callRows(c) {
		if strings.Contains(r, "running now") {
			t.Errorf("a live row outlived its run: %q", r)
		}
	}
}

// What a record had to cut says how big it was; omitted request messages
// are counted; a failed model call says why, with its attempts.
func TestCallDetailCutAndFailed(t *testing.T) {
	test.NewTempApp(t)
	long := strings.Repeat("x", engine.MaxCallText)
	rec := engine.CallRecord{Kind: engine.CallModel, Name: "gpt-test", Provider: "openai", Latency: 2500 * time.Millisecond,
		FirstToken: 300 * time.Millisecond, Attempts: 3, Error: "openai: 429 Too Many Requests", Omitted: 7,
		Request: []engine.CallMessage{
			{Message: engine.Message{Role: engine.RoleSystem, Content: "sys"}},
			{Message: engine.Message{Role: engine.RoleUser, Content: long}, Size: 20000},
			{Message: engine.Message{Role: engine.RoleTool, ToolCallID: "c1", Content: "[attachment 1: image image/png]",
				Attachments: []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Size: 1 << 20}}}},
		},
		Tools: []engine.CallToolSpec{{Name: "search", Description: "Searches.", Parameters: engine.CallText{Text: `{"type":"object"}`, Size: 9000}}},
	}
	c := newCallsView(nil)
	c.set([]callGroup{{Title: "Step 4 · agent", Note: "planned here · failed", Calls: []engine.CallRecord{rec,
		{Kind: engine.CallTool, Name: "search", Provider: "mcp web · web_search", Args: engine.CallText{Text: `{"q":"a"}`}, Result: engine.CallText{Text: long, Size: 1 << 20}}}, Dropped: 2}})
	rows := callRows(c)
	want := []string{
		"Step 4 · agent | planned here · failed · 2 calls (+2 not kept)",
		"model gpt-test · 2.50 s · first token 300 ms · 3 attempts | failed: openai: 429 Too Many Requests",
	}
	for i, w := range want {
		if i >= len(rows) || rows[i] != w {
			t.Errorf("row %d = %q, want %q", i, rows[i], w)
		}
	}
	c.list.Select(0) // a task's heading opens its first call
	d := c.text()
	for _, w := range []string{
		"Model call · gpt-test (openai)", "Failed: openai: 429 Too Many Requests", "3 attempts",
		"Request · 10 messages (7 older not kept", "attachment 1 · image image/png · 1.0 MB", "… 7 messages not kept …",
		"Cut: 4.0 KB of 19.5 KB shown.", "Cut: 17 B of 8.8 KB shown.", "No reply: the call failed",
	} {
		if !strings.Contains(d, w) {
			t.Errorf("detail lacks %q:\n%s", w, d)
		}
	}
	// A tool of an MCP server says which server, and its name there.
	if len(rows) < 3 || !strings.Contains(rows[2], "tool search({\"q\":\"a\"}) · 0 ms · mcp web · web_search") {
		t.Errorf("the MCP tool's row %q", rows[2:])
	}
	c.list.Select(2)
	if d := c.text(); !strings.Contains(d, "Cut: 4.0 KB of 1.0 MB shown.") || !strings.Contains(d, "Tool call · search (mcp web · web_search)") {
		t.Errorf("tool detail:\n%s", d)
	}
	c.set(nil)
	if !c.empty.Visible() || c.list.Visible() || c.detPg.Visible() {
		t.Error("no calls: the hint should show alone")
	}
}

// dur and byteSize read as a person reads them.
func TestCallUnits(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0 ms", 840 * time.Microsecond: "840 µs", 42 * time.Millisecond: "42 ms",
		1240 * time.Millisecond: "1.24 s", 90 * time.Second: "1m30s"} {
		if got := dur(d); got != want {
			t.Errorf("dur(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int]string{17: "17 B", 4096: "4.0 KB", 3 << 20: "3.0 MB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// text returns the call the view shows in full, as plain text.
func (c *callsView) text() string {
	var b strings.Builder
	for _, s := range c.detail.Segments {
		b.WriteString(s.Textual())
		if !s.Inline() {
			b.WriteString("\n")
		}
	}
	return b.String()
}
