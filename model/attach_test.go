package model_test

import (
	"reflect"
	"testing"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

func TestLiftAttachments(t *testing.T) {
	png := engine.Attachment{Kind: engine.AttachImage, MIMEType: "image/png", Data: []byte("png")}
	pdf := engine.Attachment{Kind: engine.AttachResource, MIMEType: "application/pdf", URI: "file:///a.pdf", Data: []byte("pdf")}
	user := engine.Message{Role: engine.RoleUser, Content: "look"}
	ask := engine.Message{Role: engine.RoleAssistant, ToolCalls: []engine.ToolCall{{ID: "a"}, {ID: "b"}}}
	tool := func(id, name string, as ...engine.Attachment) engine.Message {
		return engine.Message{Role: engine.RoleTool, ToolCallID: id, Name: name, Content: "done " + id, Attachments: as}
	}
	cases := []struct {
		name string
		in   []engine.Message
		want []engine.Message
	}{
		{"no attachments: as it is", []engine.Message{user, ask, tool("a", "x"), tool("b", "y")}, []engine.Message{user, ask, tool("a", "x"), tool("b", "y")}},
		{"a user's own attachments stay", []engine.Message{{Role: engine.RoleUser, Attachments: []engine.Attachment{png}}},
			[]engine.Message{{Role: engine.RoleUser, Attachments: []engine.Attachment{png}}}},
		{"after the turn's last tool message, in order", []engine.Message{user, ask, tool("a", "shot", png), tool("b", "fetch", pdf, png), user},
			[]engine.Message{user, ask, tool("a", "shot"), tool("b", "fetch"),
				{Role: engine.RoleUser, Content: "Attachments of the tool results above, in order: 1 from call a (shot); 2 from call b (fetch).", Attachments: []engine.Attachment{png, pdf, png}},
				user}},
		{"at the end of the conversation", []engine.Message{user, ask, tool("a", "x"), tool("b", "shot", png)},
			[]engine.Message{user, ask, tool("a", "x"), tool("b", "shot"),
				{Role: engine.RoleUser, Content: "Attachments of the tool results above, in order: 1 from call b (shot).", Attachments: []engine.Attachment{png}}}},
		{"two turns, each its own", []engine.Message{ask, tool("a", "shot", png), ask, tool("b", "shot", pdf)},
			[]engine.Message{ask, tool("a", "shot"), {Role: engine.RoleUser, Content: "Attachments of the tool results above, in order: 1 from call a (shot).", Attachments: []engine.Attachment{png}},
				ask, tool("b", "shot"), {Role: engine.RoleUser, Content: "Attachments of the tool results above, in order: 1 from call b (shot).", Attachments: []engine.Attachment{pdf}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := reflect.ValueOf(c.in).Index(0).Interface()
			got := model.LiftAttachments(c.in)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, c.want)
			}
			if !reflect.DeepEqual(c.in[0], before) {
				t.Error("the input was modified")
			}
			for _, m := range c.in {
				if m.Role == engine.RoleTool && m.Name == "shot" && len(m.Attachments) == 0 {
					t.Error("the input's tool message lost its attachments")
				}
			}
		})
	}
}
