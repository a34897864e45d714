package replay_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/scripted"
	"github.com/weftstudio/weft/replay"
)

var said = engine.LastValue[string]("said")

// talker asks m once with the conversation conv and keeps what it read of
// the reply: all of it, or only its first piece when firstPiece.
func talker(t *testing.T, m model.ChatModel, conv []engine.Message, firstPiece bool) *engine.Graph {
	t.Helper()
	g, err := engine.NewGraph("talker", said).
		AddNode("talk", func(ctx context.Context, _ engine.State) (engine.Output, error) {
			var got strings.Builder
			for c, err := range m.Stream(ctx, conv, model.WithMessageID("reply")) {
				if err != nil {
					return nil, err
				}
				if c.Reply != nil {
					got.Reset()
					got.WriteString(c.Reply.Message.Content)
					break
				}
				got.WriteString(c.Piece.Content)
				if firstPiece {
					break
				}
			}
			return engine.Updates(said.Set(got.String())), nil
		}).
		AddEdge(engine.START, "talk").AddEdge("talk", engine.END).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func saying(text string, calls *atomic.Int32) model.ChatModel {
	return scripted.New(func(*model.Request) (scripted.Turn, error) {
		calls.Add(1)
		return scripted.Turn{Text: text}, nil
	})
}

func recordTalk(t *testing.T, g *engine.Graph) {
	t.Helper()
	if res := invoke(t, g, engine.Values{"said": ""}, "t"); !res.Done {
		t.Fatalf("recorded: %+v", res)
	}
}

func TestLongConversationIsServedWithinTheRecordBounds(t *testing.T) {
	// Ten messages of 5 KiB: the record keeps each cut to 4 KiB, and only
	// the first and the newest that fit in 32 KiB.
	var conv []engine.Message
	for i := range 10 {
		conv = append(conv, engine.Message{Role: engine.RoleUser, Content: strings.Repeat(string(rune('a'+i)), 5<<10)})
	}
	var calls atomic.Int32
	g := talker(t, saying("short answer", &calls), conv, false)
	recordTalk(t, g)
	rep := replayOf(t, g, g.Saver(), "t", replay.Strict())
	mustMatch(t, rep)
	if calls.Load() != 1 || rep.Served.Model != 1 {
		t.Errorf("%d model calls, %d served", calls.Load(), rep.Served.Model)
	}
	// One character changed in a message the record kept only in part
	// (past its first 4 KiB) still matches; one in the kept part does not.
	kept := append([]engine.Message(nil), conv...)
	kept[9].Content = kept[9].Content[:5000] + "!" + kept[9].Content[5001:]
	mustMatch(t, replayOf(t, talker(t, saying("short answer", &calls), kept, false), g.Saver(), "t", replay.Strict()))
	changed := append([]engine.Message(nil), conv...)
	changed[9].Content = "!" + changed[9].Content[1:]
	rep = replayOf(t, talker(t, saying("short answer", &calls), changed, false), g.Saver(), "t", replay.Strict())
	if rep.Match || rep.Difference.Call == nil || rep.Difference.Call.What != "message 10 content" {
		t.Fatalf("a changed message: %+v", rep.Difference)
	}
}

func TestRepliesTheRecordCannotHoldWholeAreNotServed(t *testing.T) {
	for name, c := range map[string]struct {
		reply      string
		firstPiece bool
		why        string
	}{
		"a reply over 4 KiB":  {strings.Repeat("word ", 1000), false, "the recorded reply was cut to 4096 of its 5000 bytes"},
		"a stream left early": {"one two three", true, "the recorded call was stopped by its reader before the reply was complete"},
	} {
		var calls atomic.Int32
		g := talker(t, saying(c.reply, &calls), []engine.Message{{Role: engine.RoleUser, Content: "talk"}}, c.firstPiece)
		recordTalk(t, g)
		rep := replayOf(t, g, g.Saver(), "t", replay.Strict())
		if rep.Match || rep.Difference.Kind != replay.KindCall || rep.Difference.Call.What != c.why {
			t.Errorf("%s, strict: %+v", name, rep.Difference)
		}
		// Lenient, the call is made again, with the same reply.
		rep = replayOf(t, g, g.Saver(), "t")
		mustMatch(t, rep)
		if len(rep.Live) != 1 || rep.Live[0].What != c.why || calls.Load() != 2 {
			t.Errorf("%s, lenient: live %+v, %d model calls", name, rep.Live, calls.Load())
		}
	}
}
