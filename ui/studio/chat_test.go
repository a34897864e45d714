package studio

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// The agent's Messages channel reads as a conversation: the user's
// request, the assistant's tool calls with their arguments and results,
// and which messages the step added.
func TestChatShowsConversation(t *testing.T) {
	s := onGraph(t, 1)
	act(func() { s.startThread("c-1", s.m.graph().Example) })
	idle(t, s)
	step(t, s) // agent: asks for two tools
	act(func() { s.insp.tabs.Select(s.insp.chatTab) })
	b := bubbleLines(s.insp.chat)
	if len(b) != 2 || !strings.HasPrefix(b[0], "user: Check my balance") || strings.Contains(b[0], "[new]") {
		t.Fatalf("bubbles %q", b)
	}
	if !strings.Contains(b[1], "[new]") || !strings.Contains(b[1], "{call get_balance {}}") ||
		!strings.Contains(b[1], `{call transfer_money {"amount":250,"to":"Alice"}}`) {
		t.Errorf("assistant bubble %q", b[1])
	}
	act(func() { test.Tap(s.tb.run) }) // tools: balance, then the transfer waits for approval
	idle(t, s)
	act(func() { test.Tap(s.ip.items[0].choices[0]) })
	idle(t, s)
	act(func() { s.insp.tabs.Select(s.insp.chatTab) })
	b = bubbleLines(s.insp.chat)
	joined := strings.Join(b, "\n")
	if !strings.Contains(joined, "{call get_balance {} → Balance: 1000.}") || !strings.Contains(joined, "→ Sent 250 to Alice.}") {
		t.Errorf("tool results not under their calls:\n%s", joined)
	}
	if strings.Contains(joined, "\ntool: ") {
		t.Errorf("a tool result shown apart from its call:\n%s", joined)
	}
	if last := b[len(b)-1]; !strings.HasPrefix(last, "assistant: Done.") {
		t.Errorf("last bubble %q", last)
	}
}

// Streamed tokens go into the message they belong to: the Events tab has
// one row per message and task (not one per word), and the chat shows the
// message growing while the run goes.
func TestStreamedTokensGrouped(t *testing.T) {
	s := newThread(t, "s-1")
	step(t, s) // plan
	step(t, s) // research ×3 streams its notes word by word
	var rows []evRow
	for _, r := range s.m.scope().events {
		if r.Mode == "messages" {
			rows = append(rows, r)
		}
	}
	if len(rows) != 3 {
		t.Fatalf("%d message rows, want one per research task", len(rows))
	}
	for _, r := range rows {
		if r.Chunks < 5 || !strings.Contains(r.Text, " — ") {
			t.Errorf("row %+v is not the whole streamed note", r)
		}
	}
	// While a run goes, chunks grow the live message in the chat.
	sc := s.m.scope()
	now := time.Now()
	chunk := func(text string) engine.Event {
		return engine.Event{Mode: engine.ModeMessages, Time: now, Message: &engine.MessageChunk{
			Message: engine.Message{ID: "m-live", Role: engine.RoleAssistant, Content: text}, Node: "write", TaskID: "t1"}}
	}
	obs := &runObserver{s: s, sc: sc}
	act(func() {
		s.m.startRun(kindRun, sc.thread)
		obs.observe(chunk("Tide "))
		obs.observe(chunk("pools "))
		s.m.update(obs.flush)
		s.insp.tabs.Select(s.insp.chatTab)
	})
	b := bubbleLines(s.insp.chat)
	if last := b[len(b)-1]; !strings.HasPrefix(last, "assistant: Tide pools") || !strings.Contains(last, "[streaming]") {
		t.Errorf("live bubble %q", last)
	}
	act(func() { s.m.endRun(0); sc.stream = nil })
}

// bubbleLines is the chat as text, one line per message shown: "role:
// text" with "[new]" or "[streaming]" marks and its tool calls, each with
// its result when there is one.
func bubbleLines(c *chatView) []string {
	var lines []string
	for _, b := range c.bubbles {
		line := b.msg.Role + ": " + oneLine(b.msg.Content, 200)
		if b.isNew {
			line += " [new]"
		}
		if b.streamed {
			line += " [streaming]"
		}
		for _, tc := range b.msg.ToolCalls {
			line += " {call " + tc.Name + " " + oneLine(tc.Args, 60)
			if r, ok := b.results[tc.ID]; ok {
				line += " → " + oneLine(r.Content, 100)
			}
			line += "}"
		}
		lines = append(lines, line)
	}
	return lines
}

// A run the window follows (one started elsewhere on a server) streams
// its tokens into the chat as the window's own runs do, and they are gone
// once the following ends.
func TestFollowedRunStreamsIntoTheChat(t *testing.T) {
	s := newThread(t, "f-1")
	step(t, s)
	sc := s.m.scope()
	obs := &runObserver{s: s, sc: sc, follow: true}
	act(func() {
		s.m.setFollowed(sc, true)
		obs.observe(engine.Event{Mode: engine.ModeMessages, Time: time.Now(), Message: &engine.MessageChunk{
			Message: engine.Message{ID: "m-far", Role: engine.RoleAssistant, Content: "Kelp forests "}, Node: "write", TaskID: "t9"}})
		s.m.update(obs.flush)
		s.insp.tabs.Select(s.insp.chatTab)
	})
	b := bubbleLines(s.insp.chat)
	if last := b[len(b)-1]; !strings.HasPrefix(last, "assistant: Kelp forests") || !strings.Contains(last, "[streaming]") {
		t.Errorf("the followed run's live bubble %q", last)
	}
	act(func() { s.m.update(func() { s.m.setFollowed(sc, false) }) })
	idle(t, s)
	if len(sc.stream) != 0 {
		t.Errorf("streamed tokens kept after the following ended: %+v", sc.stream)
	}
	for _, l := range bubbleLines(s.insp.chat) {
		if strings.Contains(l, "[streaming]") {
			t.Errorf("a live bubble after the following ended: %q", l)
		}
	}
}

// A tool's image shows under its call, fitted; one too large to decode
// quickly is named, not drawn; a call record's attachment (no bytes) is
// named with its size.
func TestChatShowsAttachments(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 640, 400))); err != nil {
		t.Fatal(err)
	}
	small := buf.Bytes()
	// The same PNG claiming 10000×10000 pixels in its header (CRC mended).
	huge := bytes.Clone(small)
	binary.BigEndian.PutUint32(huge[16:], 10000)
	binary.BigEndian.PutUint32(huge[20:], 10000)
	binary.BigEndian.PutUint32(huge[29:], crc32.ChecksumIEEE(huge[12:29]))
	msgs := []engine.Message{
		{ID: "a", Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "c1", Name: "shot"}, {ID: "c2", Name: "big"}}},
		{ID: "r1", Role: engine.RoleTool, ToolCallID: "c1", Content: "[attachment 1: image image/png]",
			Attachments: []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Data: small}}},
		{ID: "r2", Role: engine.RoleTool, ToolCallID: "c2", Content: "[attachment 1: image image/png]",
			Attachments: []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Data: huge}}},
		{ID: "u", Role: engine.RoleUser, Content: "as recorded",
			Attachments: []engine.Attachment{{Kind: engine.AttachResource, MIMEType: "application/pdf", URI: "file:///r.pdf", Size: 3 << 20}}},
	}
	c := newChatView()
	w := test.NewTempWindow(t, c)
	w.Resize(fyne.NewSize(600, 800))
	act(func() {
		c.set(msgs, nil, nil)
		walkObjects(c.box, func(o fyne.CanvasObject) bool {
			if a, ok := o.(*widget.Accordion); ok {
				a.MultiOpen = true
				a.OpenAll()
			}
			return false
		})
	})
	images := previewsShown(t, c.box, 1)
	var labels []string
	act(func() {
		walkObjects(c.box, func(o fyne.CanvasObject) bool {
			if l, ok := o.(*widget.Label); ok {
				labels = append(labels, l.Text)
			}
			return false
		})
	})
	if len(images) != 1 || images[0].MinSize() != fyne.NewSize(320, 200) {
		t.Errorf("images drawn: %d (want 1, fitted to 320×200)", len(images))
	}
	joined := strings.Join(labels, "\n")
	for _, want := range []string{"attachment 1 · image image/png · ", "not shown: 10000×10000 is too large to preview",
		"attachment 1 · resource application/pdf · 3.0 MB · file:///r.pdf"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no label %q in\n%s", want, joined)
		}
	}
}

// previewsShown waits (5 s at most) for at least want image previews in
// o, which are made off the UI goroutine, and returns those drawn.
func previewsShown(t *testing.T, o fyne.CanvasObject, want int) []*canvas.Image {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var images []*canvas.Image
		act(func() {
			walkObjects(o, func(x fyne.CanvasObject) bool {
				if img, ok := x.(*canvas.Image); ok && img.Image != nil && img.Resource == nil { // a preview, not an icon
					images = append(images, img)
				}
				return false
			})
		})
		if len(images) >= want || time.Now().After(deadline) {
			return images
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Previews are made once per image, off the UI goroutine: the chat built
// again (as at every step) shows the kept preview at once.
func TestChatPreviewsAreMadeOnce(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 64, 40))); err != nil {
		t.Fatal(err)
	}
	msgs := []engine.Message{{ID: "u", Role: engine.RoleUser, Content: "see",
		Attachments: []engine.Attachment{{Kind: engine.AttachImage, MIMEType: "image/png", Data: buf.Bytes()}}}}
	c := newChatView()
	test.NewTempWindow(t, c)
	act(func() { c.set(msgs, nil, nil) })
	if got := previewsShown(t, c.box, 1); len(got) != 1 || got[0].MinSize() != fyne.NewSize(64, 40) {
		t.Fatalf("previews %d, want the 64×40 image as it is", len(got))
	}
	var now []*canvas.Image
	act(func() {
		c.set(msgs, nil, nil)
		walkObjects(c.box, func(x fyne.CanvasObject) bool {
			if img, ok := x.(*canvas.Image); ok && img.Image != nil && img.Resource == nil {
				now = append(now, img)
			}
			return false
		})
	})
	if len(now) != 1 {
		t.Errorf("rebuilt, the chat shows %d previews at once, want the kept one", len(now))
	}
}
