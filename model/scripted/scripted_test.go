package scripted_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
)

func TestTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"Hello, wonderful world": {"Hell", "o,", " wond", "erfu", "l", " worl", "d"},
		"  a b\nc":               {"  a", " b", "\nc"},
		`{"amount":250}`:         {`{"am`, `ount`, `":25`, `0}`},
		"":                       nil,
		"héllo":                  {"héll", "o"},
	} {
		got := scripted.Tokens(in)
		if !reflect.DeepEqual(got, want) || strings.Join(got, "") != in {
			t.Errorf("Tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStreamsTheScript(t *testing.T) {
	m := scripted.New(scripted.Replies(
		scripted.Turn{Text: "Let me look that up.", Calls: []engine.ToolCall{{ID: "c1", Name: "search", Args: `{"query":"weft looms"}`}}},
		scripted.Turn{Text: "Found it."}))
	ctx := context.Background()
	var pieces []engine.Message
	var reply *model.Reply
	for c, err := range m.Stream(ctx, []engine.Message{{Role: engine.RoleUser, Content: "What is a weft?"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Reply != nil {
			reply = c.Reply
		} else {
			pieces = append(pieces, c.Piece)
		}
	}
	want := engine.Message{ID: reply.Message.ID, Role: engine.RoleAssistant, Content: "Let me look that up.",
		ToolCalls: []engine.ToolCall{{ID: "c1", Name: "search", Args: `{"query":"weft looms"}`}}}
	if !reflect.DeepEqual(reply.Message, want) || !reflect.DeepEqual(model.Join(pieces), want) {
		t.Errorf("reply %+v\njoined %+v", reply.Message, model.Join(pieces))
	}
	if reply.FinishReason != model.FinishToolCalls || reply.Usage.OutputTokens != len(pieces) || reply.Usage.InputTokens != 5 || reply.Model != "scripted" {
		t.Errorf("reply %+v after %d pieces", reply, len(pieces))
	}
	r2, err := m.Generate(ctx, nil)
	if err != nil || r2.Message.Content != "Found it." || r2.FinishReason != model.FinishStop {
		t.Errorf("second turn %+v, %v", r2, err)
	}
	if _, err := m.Generate(ctx, nil); err == nil || !strings.Contains(err.Error(), "no reply left") {
		t.Errorf("past the script: %v", err)
	}
}

// A paced reply can be cancelled between tokens.
func TestPaceAndCancel(t *testing.T) {
	m := scripted.New(func(*model.Request) (scripted.Turn, error) {
		return scripted.Turn{Text: strings.Repeat("word ", 100)}, nil
	}, scripted.WithPace(1000))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var err error
	for c, e := range m.Stream(ctx, nil) {
		if e != nil {
			err = e
			break
		}
		if c.Reply == nil {
			if n++; n == 3 {
				cancel()
			}
		}
	}
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Errorf("after %d pieces: %v", n, err)
	}
	start := time.Now()
	if _, err := m.Generate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	// 100 tokens at 1,000 a second take at least the 99 gaps between them.
	if d := time.Since(start); d < 99*time.Millisecond {
		t.Errorf("100 tokens at 1000/s took %s", d)
	}
}
