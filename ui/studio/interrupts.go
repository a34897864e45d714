package studio

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// interruptPanel shows the questions a stopped run waits on, one card per
// pending interrupt, with quick buttons for offered choices, a JSON answer
// field validated before anything is sent, and Resume.
type interruptPanel struct {
	s       *Studio
	obj     fyne.CanvasObject
	cards   *fyne.Container
	empty   *widget.Label
	resumeB *widget.Button
	leaveB  *widget.Button
	items   []*interruptCard
}

// interruptCard is one pending interrupt's question and answer field.
type interruptCard struct {
	it      engine.PendingInterrupt
	answer  *widget.Entry
	errLbl  *widget.Label
	choices []*widget.Button
}

func newInterruptPanel(s *Studio) *interruptPanel {
	p := &interruptPanel{s: s}
	p.cards = container.NewVBox()
	p.empty = placeholder("No questions waiting. When a run stops at an interrupt, its question and answer buttons appear here.")
	p.resumeB = widget.NewButtonWithIcon("Resume", theme.MediaPlayIcon(), p.submit)
	p.resumeB.Importance = widget.HighImportance
	p.resumeB.Hide()
	// For stores shared with worker processes: store the answer and let a
	// worker resume the thread (weft worker) instead of running it here.
	p.leaveB = widget.NewButtonWithIcon("Leave for workers", theme.MailSendIcon(), p.leave)
	p.leaveB.Importance = widget.LowImportance
	p.leaveB.Hide()
	p.obj = container.NewBorder(nil, nil, nil, nil, container.NewStack(p.empty, container.NewVScroll(p.cards)))
	return p
}

// show replaces the cards with ints (nil clears them).
func (p *interruptPanel) show(ints []engine.PendingInterrupt) {
	p.items = nil
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
	question, fields, options := splitPayload(it.Value)
	who := fmt.Sprintf("%s asks", it.Node)
	if several {
		who += fmt.Sprintf(" (interrupt %s)", shortID(it.ID))
	}
	head := widget.NewLabelWithStyle(who, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	head.Importance = widget.WarningImportance
	q := widget.NewLabelWithStyle(question, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	q.Wrapping = fyne.TextWrapWord
	body := container.NewVBox(container.NewHBox(widget.NewIcon(theme.QuestionIcon()), head), q)
	c.answer = widget.NewEntry()
	c.answer.SetPlaceHolder(`or a JSON answer, e.g. {"action": "revise", "feedback": "…"}`)
	c.answer.OnSubmitted = func(string) { p.submit() }
	c.errLbl = widget.NewLabel("")
	c.errLbl.Importance = widget.DangerImportance
	c.errLbl.Wrapping = fyne.TextWrapWord
	c.errLbl.Hide()
	var btns []fyne.CanvasObject
	for i, opt := range options {
		b := widget.NewButton(titleCase(fmt.Sprint(opt)), func() { p.choose(c, opt) })
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
	if !several {
		body.Add(container.NewHBox(layoutSpacer(), p.leaveB))
	}
	for _, f := range fields {
		key := widget.NewLabelWithStyle(f.key, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
		val := widget.NewLabel(f.value)
		val.Wrapping = fyne.TextWrapWord
		if f.key == "error" {
			val.Importance = widget.DangerImportance
		}
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

// submit validates every answer and resumes the run.
func (p *interruptPanel) submit() {
	if one, byID, ok := p.collect(); ok {
		p.s.resume(one, byID)
	}
}

// leave validates every answer and stores them for a worker process.
func (p *interruptPanel) leave() {
	if one, byID, ok := p.collect(); ok {
		p.s.leaveForWorkers(one, byID)
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
			if e := json.Unmarshal([]byte(text), &v); e != nil {
				err = fmt.Errorf("not valid JSON (%v); a text answer needs quotes: %q", e, text)
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

type payloadField struct {
	key, value string
	long       bool
}

// splitPayload picks a payload's question, other fields and offered
// choices ("options" or "choices").
func splitPayload(v any) (question string, fields []payloadField, options []any) {
	m, ok := toJSON(v).(map[string]any)
	if !ok {
		if s, ok := v.(string); ok {
			return s, nil, nil
		}
		return prettyJSON(toJSON(v)), nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case "question", "message", "prompt":
			if question == "" {
				question = fmt.Sprint(m[k])
				continue
			}
		case "options", "choices":
			if l, ok := m[k].([]any); ok {
				options = l
				continue
			}
		}
		var text string
		if s, ok := m[k].(string); ok {
			text = s
		} else {
			text = prettyJSON(m[k])
		}
		fields = append(fields, payloadField{key: k, value: text, long: len(text) > 90 || strings.Contains(text, "\n")})
	}
	if question == "" {
		question = "Waiting for an answer"
	}
	return question, fields, options
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
