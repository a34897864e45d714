package agentserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/weftstudio/weft/engine"
)

// A message's attachments go to LangGraph's clients as LangChain data
// blocks and come back from them as attachments.
func TestMessageAttachmentsAsContentBlocks(t *testing.T) {
	m := engine.Message{ID: "r", Role: engine.RoleTool, ToolCallID: "c", Name: "shot", Content: "[attachment 1: image image/png]",
		Attachments: []engine.Attachment{
			{Kind: engine.AttachImage, MIMEType: "image/png", Data: []byte("\x89PNG")},
			{Kind: engine.AttachResource, MIMEType: "application/pdf", URI: "file:///r.pdf", Data: []byte("%PDF")},
		}}
	wire, err := json.Marshal(lcMessage(m, false))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(wire), `{"data":"iVBORw==","mime_type":"image/png","source_type":"base64","type":"image"}`) {
		t.Errorf("the image is not a LangChain image block: %s", wire)
	}
	var raw map[string]any
	if err := json.Unmarshal(wire, &raw); err != nil {
		t.Fatal(err)
	}
	if back := fromLC(raw); !reflect.DeepEqual(back, m) {
		t.Errorf("round trip:\n%+v\nwant\n%+v", back, m)
	}
	// langchain-core 1.x's form, and a block Weft cannot read.
	back := fromLC(map[string]any{"type": "human", "content": []any{
		map[string]any{"type": "text", "text": "see "},
		map[string]any{"type": "image", "base64": "iVBORw==", "mime_type": "image/png"},
		map[string]any{"type": "image", "url": "https://example.com/a.png"},
	}})
	if len(back.Attachments) != 1 || string(back.Attachments[0].Data) != "\x89PNG" || back.Content != "see [image block not read: it carries no base64 data]" {
		t.Errorf("read %+v", back)
	}
	if plain := lcMessage(engine.Message{Role: engine.RoleUser, Content: "hi"}, false); plain["content"] != "hi" {
		t.Errorf("a text-only message's content is %v, want the string", plain["content"])
	}
}
