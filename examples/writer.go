package examples

import (
	"context"
	"fmt"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Channels of the writing assistant.
var (
	WriterTopic     = engine.LastValue[string]("topic")
	WriterMessages  = engine.Messages("messages")
	WriterNotes     = engine.List[string]("notes")
	WriterOutline   = engine.LastValue[string]("outline")
	WriterDraft     = engine.LastValue[string]("draft")
	WriterFeedback  = engine.LastValue[string]("feedback")
	WriterRevisions = engine.LastValue[int]("revisions")
	WriterPublished = engine.LastValue[string]("published")
)

// ReviewAnswer is what a reviewer answers at the review interrupt: "approve"
// or "revise" with optional feedback. A bare string "approve"/"revise" is
// accepted too.
type ReviewAnswer struct {
	Action   string `json:"action"`
	Feedback string `json:"feedback,omitempty"`
}

// Writer builds the writing assistant: plan splits the topic into angles,
// research runs once per angle in parallel (Send), structure writes the
// outline and write the draft,
// and review asks a human to approve or send the draft back for revision
// before publish.
func Writer(saver checkpoint.Saver) (Demo, error) {
	b := engine.NewGraph("writing assistant", WriterTopic, WriterMessages, WriterNotes, WriterOutline,
		WriterDraft, WriterFeedback, WriterRevisions, WriterPublished).
		AddNode("plan", writerPlan).
		// Research on an angle it has researched before (in any thread) is
		// served from the node cache, where the store keeps one (SQLite,
		// PostgreSQL): a second article on a topic skips it.
		AddNode("research", writerResearch, engine.WithCachePolicy(engine.CachePolicy{})).
		AddNode("structure", writerOutline).
		AddNode("write", writerDraft).
		AddNode("review", writerReview).
		AddNode("publish", writerPublish).
		AddEdge(engine.START, "plan").
		AddConditionalEdges("plan", func(_ context.Context, s engine.State) (engine.Route, error) {
			var r engine.Route
			for _, angle := range angles(WriterTopic.Get(s)) {
				r.Sends = append(r.Sends, engine.Send{Node: "research", Arg: angle})
			}
			return r, nil
		}, engine.SendsTo("research")).
		AddEdge("research", "structure").
		AddEdge("structure", "write").
		AddEdge("write", "review").
		AddConditionalEdges("review", func(_ context.Context, s engine.State) (engine.Route, error) {
			if WriterFeedback.Get(s) != "" {
				return engine.To("revise"), nil
			}
			return engine.To("approve"), nil
		}, engine.PathMap(map[string]string{"approve": "publish", "revise": "write"})).
		AddEdge("publish", engine.END)
	g, err := compileWith(b, saver)
	if err != nil {
		return Demo{}, err
	}
	return Demo{Graph: g, Description: "Parallel research with Send, an outline and a draft, and a human review that can send the draft back.",
		Example: engine.Values{"topic": "tide pools"}}, nil
}

func angles(topic string) []string {
	return []string{topic + ": history", topic + ": ecology", topic + ": how to visit"}
}

func writerPlan(_ context.Context, s engine.State) (engine.Output, error) {
	topic := WriterTopic.Get(s)
	if strings.TrimSpace(topic) == "" {
		return nil, engine.Permanent(fmt.Errorf("the topic is empty: start the thread with {\"topic\": \"…\"}"))
	}
	return engine.Updates(WriterMessages.Add(
		engine.Message{ID: "user-topic", Role: engine.RoleUser, Content: "Write a short article about " + topic + "."},
		engine.Message{ID: "plan", Role: engine.RoleAssistant, Content: "I will research " + strings.Join(angles(topic), "; ") + "."},
	)), nil
}

func writerResearch(ctx context.Context, s engine.State) (engine.Output, error) {
	angle, _ := engine.ArgAs[string](s)
	note := scriptedNote(angle)
	// Stream the note word by word, as a model's tokens would arrive.
	id := "research-" + slug(angle)
	for _, w := range strings.Fields(note) {
		engine.EmitMessage(ctx, engine.Message{ID: id, Role: engine.RoleAssistant, Content: w + " "})
	}
	return engine.Updates(WriterNotes.Add(note)), nil
}

func scriptedNote(angle string) string {
	switch {
	case strings.HasSuffix(angle, "history"):
		return angle + " — naturalists have catalogued these shores since the 1800s."
	case strings.HasSuffix(angle, "ecology"):
		return angle + " — anemones, crabs and snails share a world that floods twice a day."
	default:
		return angle + " — go at low tide, step on bare rock, and put every stone back."
	}
}

func writerOutline(_ context.Context, s engine.State) (engine.Output, error) {
	var b strings.Builder
	for i, n := range WriterNotes.Get(s) {
		head, _, _ := strings.Cut(n, " — ")
		fmt.Fprintf(&b, "%d. %s\n", i+1, head)
	}
	return engine.Updates(WriterOutline.Set(strings.TrimSpace(b.String()))), nil
}

func writerDraft(_ context.Context, s engine.State) (engine.Output, error) {
	rev := WriterRevisions.Get(s)
	var b strings.Builder
	fmt.Fprintf(&b, "%s (draft %d)\n\n", strings.ToUpper(WriterTopic.Get(s)), rev+1)
	for _, n := range WriterNotes.Get(s) {
		_, body, _ := strings.Cut(n, " — ")
		b.WriteString(strings.ToUpper(body[:1]) + body[1:] + " ")
	}
	if fb := WriterFeedback.Get(s); fb != "" {
		b.WriteString("\n\nRevised after review: " + fb)
	}
	text := strings.TrimSpace(b.String())
	return engine.Updates(WriterDraft.Set(text), WriterRevisions.Set(rev+1), WriterFeedback.Set(""),
		WriterMessages.Add(engine.Message{ID: fmt.Sprintf("draft-%d", rev+1), Role: engine.RoleAssistant, Content: text})), nil
}

func writerReview(ctx context.Context, s engine.State) (engine.Output, error) {
	payload := map[string]any{
		"question": "Approve this draft, or send it back for revision?",
		"draft":    WriterDraft.Get(s),
		"options":  []string{"approve", "revise"},
	}
	// An answer that is neither is asked again, with the reason: a second
	// Interrupt call of the same task, matched by its index on resume.
	for {
		raw, err := engine.Interrupt(ctx, payload)
		if err != nil {
			return nil, err
		}
		ans, err := parseReview(raw)
		if err != nil {
			payload["error"] = err.Error()
			continue
		}
		if ans.Action == "approve" {
			return engine.Updates(WriterFeedback.Set("")), nil
		}
		fb := ans.Feedback
		if fb == "" {
			fb = "tighten the wording"
		}
		return engine.Updates(WriterFeedback.Set(fb)), nil
	}
}

func parseReview(raw any) (ReviewAnswer, error) {
	var ans ReviewAnswer
	switch v := raw.(type) {
	case string:
		ans.Action = v
	case map[string]any:
		ans.Action, _ = v["action"].(string)
		ans.Feedback, _ = v["feedback"].(string)
	case ReviewAnswer:
		ans = v
	}
	switch ans.Action {
	case "approve", "revise":
		return ans, nil
	}
	return ans, fmt.Errorf(`review answer %v: want "approve", "revise" or {"action": "revise", "feedback": "…"}`, raw)
}

func writerPublish(_ context.Context, s engine.State) (engine.Output, error) {
	return engine.Updates(WriterPublished.Set(WriterDraft.Get(s)),
		WriterMessages.Add(engine.Message{ID: "published", Role: engine.RoleAssistant, Content: "Published."})), nil
}

// slug makes an id-friendly form of s: lower-case letters and digits, other
// runs as one '-'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
