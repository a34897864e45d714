package studio

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// interruptPanel shows the questions the thread's head waits on, one card
// per pending interrupt, with quick buttons for offered choices, a JSON
// answer field validated before anything is sent, and Resume. It follows
// the model: the cards are those of the current thread's head, and they are
// built again only when the questions change, so a half-typed answer
// survives unrelated updates.
type interruptPanel struct {
	m *model
	a *actions
	composite
	cards   *fyne.Container
	empty   *widget.Label
	resumeB *keyButton
	leaveB  *keyButton
	items   []*interruptCard
	shown   []engine.PendingInterrupt
	// sent is set once the answers went to a run: the cards are answered
	// and stay locked until the run ends (its result replaces them, or
	// gives them back when the thread still waits on them).
	sent bool
}

// interruptCard is one pending interrupt's question and answer field.
type interruptCard struct {
	it      engine.PendingInterrupt
	reason  *widget.Label // why the previous answer was refused; hidden when none
	sentLbl *widget.Label // the answer sent, while the run it resumes goes; hidden otherwise
	answer  *keyEntry
	errLbl  *widget.Label
	choices []*keyButton
}

func newInterruptPanel(m *model, a *actions) *interruptPanel {
	p := &interruptPanel{m: m, a: a}
	p.cards = container.NewVBox()
	p.empty = placeholder(noQuestions)
	p.resumeB = newKeyButton(a.key, "Resume", theme.MediaPlayIcon(), p.submit)
	p.resumeB.Importance = widget.HighImportance
	p.resumeB.Hide()
	// For stores shared with worker processes: store the answer and let a
	// worker resume the thread (weft worker) instead of running it here.
	p.leaveB = newKeyButton(a.key, "Leave for workers", theme.MailSendIcon(), p.leave)
	p.leaveB.Importance = widget.LowImportance
	p.leaveB.Hide()
	p.compose(p, container.NewBorder(nil, nil, nil, nil, container.NewStack(p.empty, container.NewVScroll(p.cards))))
	m.subscribe(chThread|chInterrupts|chView|chRun, func(c part) {
		ints := m.scope().pending()
		p.setEmptyText()
		if p.sent && !m.run.Going {
			p.sent = false
		}
		if c&chThread == 0 && sameInterrupts(ints, p.shown) {
			p.setBusy(m.run.Busy)
			return
		}
		p.show(ints)
		p.setBusy(m.run.Busy)
	})
	return p
}

const noQuestions = "No questions waiting. When a run stops at an interrupt, its question and answer buttons appear here."

// setEmptyText says why no question shows: none waits, or an answer is
// stored for a worker.
func (p *interruptPanel) setEmptyText() {
	text := noQuestions
	if v := p.m.scope().viewFor(); v != nil && v.Answered && p.m.scope().atHead() {
		text = "Your answer is stored: a worker process (weft worker) will resume this thread, and the window follows it."
	}
	if p.empty.Text != text {
		p.empty.SetText(text)
	}
}

// sameInterrupts reports whether two lists hold the same questions.
func sameInterrupts(a, b []engine.PendingInterrupt) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].NS != b[i].NS || !reflect.DeepEqual(toJSON(a[i].Value), toJSON(b[i].Value)) {
			return false
		}
	}
	return true
}

// setBusy disables answering while a run goes, and every field and
// button of the cards once their answers are sent.
func (p *interruptPanel) setBusy(busy bool) {
	off := busy || p.sent || p.m.readOnly() // a view's questions are answered where they were asked
	setEnabled(p.resumeB, !off)
	setEnabled(p.leaveB, !off && !p.m.isView()) // workers share a Weft store
	for _, c := range p.items {
		for _, b := range c.choices {
			setEnabled(b, !p.sent && !p.m.readOnly())
		}
		setEnabled(c.answer, !p.sent && !p.m.readOnly())
		if p.sent {
			c.sentLbl.SetText("Answered " + strings.TrimSpace(c.answer.Text) + " · resuming…")
			c.sentLbl.Show()
		} else if c.sentLbl.Visible() {
			c.sentLbl.Hide()
		}
	}
}

// show replaces the cards with ints (nil clears them).
func (p *interruptPanel) show(ints []engine.PendingInterrupt) {
	p.items = nil
	p.shown = ints
	p.sent = false
	p.cards.RemoveAll()
	if len(ints) == 0 {
		p.empty.Show()
		p.resumeB.Hide()
		p.leaveB.Hide()
		p.cards.Refresh()
		return
	}
	p.empty.Hide()
	for _, it := range ints {
		c := p.newCard(it, len(ints) > 1)
		p.items = append(p.items, c)
	}
	if len(ints) > 1 {
		p.resumeB.SetText(fmt.Sprintf("Resume with %d answers", len(ints)))
		p.cards.Add(container.NewHBox(layoutSpacer(), p.leaveB, p.resumeB))
	} else {
		p.resumeB.SetText("Resume")
	}
	p.resumeB.Show()
	p.leaveB.Show()
	p.cards.Refresh()
}

func (p *interruptPanel) newCard(it engine.PendingInterrupt, several bool) *interruptCard {
	c := &interruptCard{it: it}
	pl := splitPayloadFull(it.Value)
	who := it.Node + " asks"
	if it.NS != "" {
		who = nsLabel(it.NS) + " › " + who
	}
	if several {
		who += fmt.Sprintf(" (interrupt %s)", shortID(it.ID))
	}
	head := widget.NewLabelWithStyle(who, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	head.Importance = widget.WarningImportance
	q := newValueView("question", pl.question, false)
	q.label.TextStyle.Bold = true
	// Who asks and the question share the first line, so that the answer
	// buttons are in sight in the third of the column the tab has.
	body := container.NewVBox(container.NewBorder(nil, nil, container.NewHBox(widget.NewIcon(theme.QuestionIcon()), head), nil, q))
	// An answer the node refused comes back as the question again, with
	// the reason: it goes first, where the eye lands.
	c.reason = widget.NewLabel("")
	c.reason.Importance = widget.DangerImportance
	c.reason.Wrapping = fyne.TextWrapWord
	c.reason.Hide()
	if pl.refused != "" {
		c.reason.SetText("The last answer was refused: " + pl.refused)
		c.reason.Show()
		body.Objects = append([]fyne.CanvasObject{c.reason}, body.Objects...)
	}
	c.answer = newKeyEntry(p.a.key, false)
	c.answer.SetPlaceHolder(answerPlaceholder(pl))
	c.answer.OnSubmitted = func(string) { p.submit() }
	c.sentLbl = widget.NewLabel("")
	c.sentLbl.Importance = widget.SuccessImportance
	c.sentLbl.Wrapping = fyne.TextWrapWord
	c.sentLbl.Hide()
	c.errLbl = widget.NewLabel("")
	c.errLbl.Importance = widget.DangerImportance
	c.errLbl.Wrapping = fyne.TextWrapWord
	c.errLbl.Hide()
	var btns []fyne.CanvasObject
	for i, opt := range pl.options {
		b := newKeyButton(p.a.key, titleCase(fmt.Sprint(opt)), nil, func() { p.choose(c, opt) })
		if i == 0 {
			b.Importance = widget.HighImportance
		}
		c.choices = append(c.choices, b)
		btns = append(btns, b)
	}
	var resume fyne.CanvasObject
	if !several {
		resume = p.resumeB
	}
	body.Add(container.NewBorder(nil, nil, container.NewHBox(btns...), resume, c.answer))
	body.Add(c.errLbl)
	body.Add(c.sentLbl)
	if !several {
		body.Add(container.NewHBox(layoutSpacer(), p.leaveB))
	}
	for _, f := range pl.fields {
		key := widget.NewLabelWithStyle(f.key, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
		val := newValueView(f.key, f.value, false)
		if f.long {
			box := container.NewVScroll(val)
			min := canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
			min.SetMinSize(fyne.NewSize(0, 120))
			min.CornerRadius = theme.InputRadiusSize()
			body.Add(key)
			body.Add(container.NewStack(min, box))
		} else {
			body.Add(container.NewBorder(nil, nil, key, nil, val))
		}
	}
	card := widget.NewCard("", "", body)
	p.cards.Add(card)
	return c
}

// choose answers with a quick button: at once when it is the only
// question, otherwise it fills the card's answer.
func (p *interruptPanel) choose(c *interruptCard, opt any) {
	b, _ := json.Marshal(opt)
	c.answer.SetText(string(b))
	if len(p.items) == 1 {
		p.submit()
	}
}

// submit validates every answer and resumes the run; once the run
// starts the cards are answered (locked, the answer said).
func (p *interruptPanel) submit() {
	if p.sent {
		return
	}
	if one, byID, ok := p.collect(); ok && p.a.resume != nil {
		p.a.resume(one, byID)
		if p.m.run.Going {
			p.sent = true
			p.setBusy(p.m.run.Busy)
		}
	}
}

// leave validates every answer and stores them for a worker process.
func (p *interruptPanel) leave() {
	if one, byID, ok := p.collect(); ok && p.a.leave != nil {
		p.a.leave(one, byID)
	}
}

// collect validates the answers, marking bad ones next to their field: the
// single answer, or the answers by id when several are pending.
func (p *interruptPanel) collect() (any, map[string]any, bool) {
	answers := map[string]any{}
	ok := true
	for _, c := range p.items {
		text := strings.TrimSpace(c.answer.Text)
		var v any
		var err error
		switch {
		case text == "":
			err = fmt.Errorf("an answer is needed: click a choice or type JSON")
		default:
			if json.Unmarshal([]byte(text), &v) != nil {
				err = errors.New(jsonHint(text))
			}
		}
		if err != nil {
			c.errLbl.SetText(err.Error())
			c.errLbl.Show()
			ok = false
			continue
		}
		c.errLbl.Hide()
		answers[c.it.ID] = v
	}
	if !ok || len(p.items) == 0 {
		return nil, nil, false
	}
	if len(p.items) == 1 {
		return answers[p.items[0].it.ID], nil, true
	}
	return nil, answers, true
}

// jsonHint explains why text is not valid JSON in words that lead to the
// fix: an unclosed or extra brace or bracket, text without quotes, or the
// parser's complaint with the line and column.
func jsonHint(text string) string {
	t := strings.TrimSpace(text)
	if t == "" {
		return "empty: type a JSON value"
	}
	var v any
	err := json.Unmarshal([]byte(t), &v)
	if err == nil {
		return ""
	}
	if b := braceBalance(t); b != "" {
		return "not valid JSON: " + b
	}
	if c := t[0]; c != '{' && c != '[' && c != '"' && c != '-' && (c < '0' || c > '9') &&
		!strings.HasPrefix(t, "true") && !strings.HasPrefix(t, "false") && !strings.HasPrefix(t, "null") {
		q, _ := json.Marshal(t)
		return fmt.Sprintf("not valid JSON: text needs quotes, e.g. %s", q)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := lineCol(t, int(se.Offset))
		return fmt.Sprintf("not valid JSON at line %d, column %d: %v", line, col, err)
	}
	return "not valid JSON: " + err.Error()
}

// braceBalance names the first brace or bracket that does not match, ""
// when they balance (strings are skipped).
func braceBalance(t string) string {
	var stack []rune
	inStr, esc := false, false
	for _, r := range t {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case r == '\\':
				esc = true
			case r == '"':
				inStr = false
			}
		case r == '"':
			inStr = true
		case r == '{' || r == '[':
			stack = append(stack, r)
		case r == '}' || r == ']':
			open := map[rune]rune{'}': '{', ']': '['}[r]
			if len(stack) == 0 {
				return fmt.Sprintf("there is a %c with no %c before it", r, open)
			}
			if stack[len(stack)-1] != open {
				return fmt.Sprintf("a %c is closed by %c", stack[len(stack)-1], r)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if inStr {
		return `a string is not closed: add "`
	}
	if len(stack) > 0 {
		closeBy := map[rune]rune{'{': '}', '[': ']'}[stack[len(stack)-1]]
		return fmt.Sprintf("a %c is not closed: add %c at the end", stack[len(stack)-1], closeBy)
	}
	return ""
}

func lineCol(s string, off int) (int, int) {
	line, col := 1, 1
	for i, r := range s {
		if i >= off {
			break
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

type payloadField struct {
	key, value string
	long       bool
}

// payload is an interrupt's value read for a form.
type payload struct {
	question string
	refused  string // the "error" field: why the previous answer was refused
	fields   []payloadField
	options  []any
	schema   map[string]any // a JSON schema for the answer, when given
}

// splitPayload picks a payload's question, other fields and offered
// choices ("options" or "choices").
func splitPayload(v any) (question string, fields []payloadField, options []any) {
	p := splitPayloadFull(v)
	return p.question, p.fields, p.options
}

func splitPayloadFull(v any) payload {
	var p payload
	m, ok := toJSON(v).(map[string]any)
	if !ok {
		if s, ok := v.(string); ok {
			p.question = s
			return p
		}
		p.question = prettyJSON(toJSON(v))
		return p
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "question", "message", "prompt":
			if p.question == "" {
				p.question = fmt.Sprint(m[k])
				continue
			}
		case "options", "choices":
			if l, ok := m[k].([]any); ok {
				p.options = l
				continue
			}
		case "error":
			if s, ok := m[k].(string); ok {
				p.refused = s
				continue
			}
		case "schema", "answer_schema", "response_schema":
			if s, ok := m[k].(map[string]any); ok {
				p.schema = s
				continue
			}
		}
		var text string
		if s, ok := m[k].(string); ok {
			text = s
		} else {
			text = prettyJSON(m[k])
		}
		p.fields = append(p.fields, payloadField{key: k, value: text, long: len(text) > 90 || strings.Contains(text, "\n")})
	}
	if p.question == "" {
		p.question = "Waiting for an answer"
	}
	return p
}

// answerPlaceholder suggests an answer from what this interrupt offers:
// its choices, the properties of its schema, or any JSON value.
func answerPlaceholder(p payload) string {
	if len(p.options) > 0 {
		var parts []string
		for _, o := range p.options[:min(3, len(p.options))] {
			b, _ := json.Marshal(o)
			parts = append(parts, string(b))
		}
		return "or a JSON answer, e.g. " + strings.Join(parts, " or ")
	}
	if props, ok := p.schema["properties"].(map[string]any); ok && len(props) > 0 {
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var parts []string
		for _, k := range keys {
			ex := "…"
			if d, ok := props[k].(map[string]any); ok {
				switch d["type"] {
				case "string":
					ex = `"…"`
				case "number", "integer":
					ex = "0"
				case "boolean":
					ex = "true"
				}
			}
			parts = append(parts, fmt.Sprintf("%q: %s", k, ex))
		}
		return "a JSON answer, e.g. {" + strings.Join(parts, ", ") + "}"
	}
	return `a JSON answer, e.g. "yes", 42 or {"key": "value"}`
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// nsLabel names a subgraph namespace by its nodes: "summarize:0a1b…|x:…"
// reads "summarize › x".
func nsLabel(ns string) string {
	var parts []string
	for _, p := range strings.Split(ns, "|") {
		name, _, _ := strings.Cut(p, ":")
		parts = append(parts, name)
	}
	return strings.Join(parts, " › ")
}
