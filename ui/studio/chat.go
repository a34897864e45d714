package studio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // attachments' previews
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/zeebo/xxh3"
	"golang.org/x/image/draw"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/render"
)

// messagesChannel returns the name of the graph's Messages channel (the
// first channel with the add_messages reducer), "" when it has none.
func messagesChannel(chans []engine.ChannelInfo) string {
	for _, ch := range chans {
		if ch.Reducer == "add_messages" || ch.Type == "[]engine.Message" {
			return ch.Name
		}
	}
	return ""
}

// chatView shows a Messages channel as a conversation: one bubble per
// message with its role and text, tool calls as collapsible cards with
// their arguments and the tool's result, messages the step added marked
// new, and messages still streaming (tokens arriving) at the end.
type chatView struct {
	widget.BaseWidget
	box     *fyne.Container
	scroll  *container.Scroll
	empty   *widget.Label
	bubbles []bubble // the messages shown, in order

	previews previews // its images' previews, made once each
}

// bubble is one message the chat shows and how: marked new in the step,
// or still streaming from node; its tool calls' results, by call id, are
// drawn under the calls.
type bubble struct {
	msg             engine.Message
	isNew, streamed bool
	node            string
	results         map[string]engine.Message
}

func newChatView() *chatView {
	c := &chatView{box: container.NewVBox()}
	c.scroll = container.NewVScroll(c.box)
	c.empty = placeholder("No messages at this checkpoint.")
	c.ExtendBaseWidget(c)
	return c
}

// composed is what the widget draws (holds looks through it for the focus).
func (c *chatView) composed() fyne.CanvasObject { return container.NewStack(c.empty, c.scroll) }

// CreateRenderer is part of fyne.Widget.
func (c *chatView) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(c.empty, c.scroll))
}

// set shows msgs; those whose id is not in before are marked new; live are
// messages streaming in the run in progress (those already in msgs are
// not repeated).
func (c *chatView) set(msgs, before []engine.Message, live []streamMsg) {
	c.box.RemoveAll()
	c.bubbles = nil
	old := map[string]bool{}
	for _, m := range before {
		old[m.ID] = true
	}
	results := map[string]engine.Message{}
	shown := map[string]bool{}
	for _, m := range msgs {
		if m.Role == engine.RoleTool && m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
		shown[m.ID] = true
	}
	attached := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if _, ok := results[tc.ID]; ok {
				attached[tc.ID] = true
			}
		}
	}
	for _, m := range msgs {
		if m.Role == engine.RoleTool && attached[m.ToolCallID] {
			continue // shown under its call
		}
		c.add(bubble{msg: m, isNew: !old[m.ID] && before != nil, results: results})
	}
	for _, s := range live {
		if shown[s.ID] {
			continue
		}
		role := s.Role
		if role == "" {
			role = engine.RoleAssistant
		}
		c.add(bubble{msg: engine.Message{ID: s.ID, Role: role, Content: s.Text}, streamed: true, node: s.Node})
	}
	if len(c.bubbles) == 0 {
		c.empty.Show()
		c.scroll.Hide()
	} else {
		c.empty.Hide()
		c.scroll.Show()
	}
	c.box.Refresh()
	if len(live) > 0 {
		c.scroll.ScrollToBottom()
	}
}

// add appends one bubble.
func (c *chatView) add(b bubble) {
	m := b.msg
	head := widget.NewLabelWithStyle(roleName(m.Role), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	tags := container.NewHBox(head)
	if m.Name != "" {
		tags.Add(mutedLabel(m.Name))
	}
	if b.isNew {
		n := widget.NewLabel("new in this step")
		n.Importance = widget.SuccessImportance
		n.SizeName = theme.SizeNameCaptionText
		tags.Add(n)
	}
	if b.streamed {
		tags.Add(mutedLabel("streaming · " + b.node))
	}
	body := container.NewVBox(tags)
	if m.Content != "" {
		body.Add(newValueView(roleName(m.Role)+" message", m.Content, false))
	}
	if len(m.Attachments) > 0 {
		body.Add(c.attachmentsView(m.Attachments))
	}
	if len(m.ToolCalls) > 0 {
		acc := widget.NewAccordion()
		for _, tc := range m.ToolCalls {
			detail := container.NewVBox()
			detail.Add(mutedLabel("arguments"))
			detail.Add(newValueView(tc.Name+" arguments", prettyArgs(tc.Args), true))
			// Titles stay short (an accordion's title does not wrap, and
			// a wide one would push the panel's divider); the details
			// wrap.
			title := tc.Name + "(" + oneLine(tc.Args, 16) + ")"
			if r, ok := b.results[tc.ID]; ok {
				detail.Add(mutedLabel("result"))
				detail.Add(newValueView(tc.Name+" result", r.Content, false))
				if len(r.Attachments) > 0 {
					detail.Add(c.attachmentsView(r.Attachments))
				}
				title += " → " + oneLine(r.Content, 24)
			} else {
				detail.Add(mutedLabel("no result yet"))
			}
			acc.Append(widget.NewAccordionItem(oneLine(title, 44), detail))
		}
		body.Add(acc)
	}
	bg := canvas.NewRectangle(bubbleColor(m.Role))
	bg.CornerRadius = theme.InputRadiusSize() * 2
	bubble := container.NewStack(bg, container.NewPadded(body))
	var row fyne.CanvasObject = bubble
	if m.Role == engine.RoleUser {
		// The user's messages sit to the right, as in a chat.
		indent := canvas.NewRectangle(color.Transparent)
		indent.SetMinSize(fyne.NewSize(36, 0))
		row = container.NewBorder(nil, nil, indent, nil, bubble)
	}
	c.box.Add(row)
	c.bubbles = append(c.bubbles, b)
}

func mutedLabel(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Importance = widget.LowImportance
	l.SizeName = theme.SizeNameCaptionText
	return l
}

func roleName(role string) string {
	switch role {
	case engine.RoleUser:
		return "You"
	case engine.RoleAssistant:
		return "Assistant"
	case engine.RoleTool:
		return "Tool"
	case engine.RoleSystem:
		return "System"
	}
	return titleCase(role)
}

// bubbleColor tints a bubble by role, lightly enough that text keeps its
// contrast.
func bubbleColor(role string) color.Color {
	bg := theme.Color(theme.ColorNameBackground)
	tint := theme.Color(theme.ColorNameForeground)
	a := 0.06
	switch role {
	case engine.RoleUser:
		tint, a = theme.Color(theme.ColorNamePrimary), 0.12
	case engine.RoleTool:
		tint, a = theme.Color(theme.ColorNameWarning), 0.08
	}
	return render.Blend(tint, bg, a)
}

// prettyArgs indents a tool call's JSON arguments (as they are when not
// JSON).
func prettyArgs(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		return args
	}
	return strings.TrimSpace(prettyJSON(v))
}

// Bounds of an attachment's preview: a larger image is named, not drawn,
// so a 50-megapixel screenshot cannot stall the window decoding it.
const (
	previewMaxBytes  = 8 << 20
	previewMaxPixels = 4096 * 4096
)

// attachmentLine names the i-th (0-based) attachment: kind, type, size
// (Size when a record left the bytes out) and where from.
func attachmentLine(i int, a engine.Attachment) string {
	n := len(a.Data)
	if a.Data == nil {
		n = a.Size
	}
	line := fmt.Sprintf("attachment %d · %s %s · %s", i+1, a.Kind, a.MIMEType, byteSize(n))
	if a.URI != "" {
		line += " · " + a.URI
	}
	return line
}

// attachmentsView lists a message's attachments: a line for each (kind,
// type, size, where from) and, for an image small enough, the image
// itself, fitted in 320×200. Images are decoded and scaled off the UI
// goroutine, once each (previews): the chat is rebuilt at every step, and
// decoding a large PNG there each time would stall the window.
func (c *chatView) attachmentsView(as []engine.Attachment) fyne.CanvasObject {
	box := container.NewVBox()
	for i, a := range as {
		n := len(a.Data)
		box.Add(mutedLabel(attachmentLine(i, a)))
		if a.Kind != engine.AttachImage || a.Data == nil {
			continue
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(a.Data))
		switch {
		case err != nil:
			box.Add(mutedLabel("not shown: " + a.MIMEType + " is not an image Weft can decode (" + err.Error() + ")"))
		case n > previewMaxBytes || cfg.Width*cfg.Height > previewMaxPixels:
			box.Add(mutedLabel(fmt.Sprintf("not shown: %d×%d is too large to preview", cfg.Width, cfg.Height)))
		default:
			box.Add(c.previews.show(a.Data))
		}
	}
	return box
}

// previewWidth and previewHeight bound an image's preview.
const previewWidth, previewHeight = 320, 200

// previews are the chat's image previews, scaled once each and kept by
// the image's hash; only the UI goroutine touches it. The zero value is
// empty and ready.
type previews struct {
	done    map[xxh3.Uint128]fyne.CanvasObject // the finished preview, an image or a note why not
	waiting map[xxh3.Uint128][]*fyne.Container // where a preview being made goes
}

// maxPreviews bounds the previews kept: past it they are made again.
const maxPreviews = 64

// show returns where the preview of the image data goes: the preview
// itself once made, a placeholder filled when it is.
func (p *previews) show(data []byte) fyne.CanvasObject {
	k := xxh3.Hash128(data)
	if o, ok := p.done[k]; ok {
		return container.NewHBox(p.copyOf(o))
	}
	slot := container.NewHBox(mutedLabel("preparing the preview…"))
	if p.waiting == nil {
		p.waiting = map[xxh3.Uint128][]*fyne.Container{}
	}
	first := len(p.waiting[k]) == 0
	p.waiting[k] = append(p.waiting[k], slot)
	if first {
		go func() {
			thumb, err := scaledImage(data, previewWidth, previewHeight)
			uiDo(func() { p.finish(k, thumb, err) })
		}()
	}
	return slot
}

// finish puts a made preview in its slots and keeps it.
func (p *previews) finish(k xxh3.Uint128, thumb image.Image, err error) {
	var o fyne.CanvasObject
	if err != nil {
		o = mutedLabel("not shown: " + err.Error())
	} else {
		img := canvas.NewImageFromImage(thumb)
		img.FillMode = canvas.ImageFillContain
		b := thumb.Bounds()
		img.SetMinSize(fyne.NewSize(float32(b.Dx()), float32(b.Dy())))
		o = img
	}
	if p.done == nil || len(p.done) >= maxPreviews {
		p.done = map[xxh3.Uint128]fyne.CanvasObject{}
	}
	p.done[k] = o
	for _, slot := range p.waiting[k] {
		slot.Objects = []fyne.CanvasObject{p.copyOf(o)}
		slot.Refresh()
	}
	delete(p.waiting, k)
}

// copyOf is a new object showing what o shows: one canvas object cannot
// be drawn in two places.
func (p *previews) copyOf(o fyne.CanvasObject) fyne.CanvasObject {
	switch x := o.(type) {
	case *canvas.Image:
		img := canvas.NewImageFromImage(x.Image)
		img.FillMode = x.FillMode
		img.SetMinSize(x.MinSize())
		return img
	case *widget.Label:
		return mutedLabel(x.Text)
	}
	return o
}

// scaledImage decodes data and scales it to fit in w×h (never up).
func scaledImage(data []byte, w, h int) (image.Image, error) {
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("the image cannot be decoded: %w", err)
	}
	b := src.Bounds()
	s := min(float64(w)/float64(b.Dx()), float64(h)/float64(b.Dy()), 1)
	if s == 1 {
		return src, nil
	}
	dst := image.NewRGBA(image.Rect(0, 0, max(1, int(float64(b.Dx())*s)), max(1, int(float64(b.Dy())*s))))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return dst, nil
}
