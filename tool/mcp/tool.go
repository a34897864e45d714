package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/tool"
)

// Tool is one tool of an MCP server, as a tool.Tool. When the server
// says its tools changed, the Tool takes the server's new definition
// (description, schema) in place; a tool the server no longer lists fails
// its calls with a *ToolError saying so.
type Tool struct {
	c    *Client
	name string // the server's name of the tool
	def  atomic.Pointer[toolDef]
	gone atomic.Bool // the server's last listing left it out
}

// toolDef is a tool as the server last listed it.
type toolDef struct {
	spec   model.ToolSpec
	schema *tool.Schema
	raw    *sdk.Tool
}

var _ tool.Tool = (*Tool)(nil)

func newTool(c *Client, t *sdk.Tool) (*Tool, error) {
	d, err := newDef(c, t)
	if err != nil {
		return nil, err
	}
	tt := &Tool{c: c, name: t.Name}
	tt.def.Store(d)
	return tt, nil
}

func newDef(c *Client, t *sdk.Tool) (*toolDef, error) {
	params, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %s: tool %q: cannot encode its input schema: %w", c.srv.label(), t.Name, err)
	}
	if t.InputSchema == nil {
		params = json.RawMessage(`{"type":"object"}`)
	}
	compiled, err := tool.CompileSchema(params)
	if err != nil {
		return nil, fmt.Errorf("mcp: server %s: tool %q: its input schema is not valid JSON Schema: %w", c.srv.label(), t.Name, err)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &toolDef{schema: compiled, raw: t,
		spec: model.ToolSpec{Name: c.cfg.prefix + t.Name, Description: desc, Parameters: params}}, nil
}

// Spec returns the tool's name (with the client's prefix), description and
// the server's input schema.
func (t *Tool) Spec() model.ToolSpec { return t.def.Load().spec }

// Name returns the tool's name on its server (without a prefix).
func (t *Tool) Name() string { return t.name }

// Origin says where the tool runs (tool.Origin), for the call records:
// "mcp", the server's name (Server.Name, else its command or URL) and the
// tool's name there.
func (t *Tool) Origin() string { return "mcp " + t.c.srv.label() + " · " + t.name }

var (
	_ tool.Origin   = (*Tool)(nil)
	_ tool.Attacher = (*Tool)(nil)
)

// Definition returns the tool as the server listed it: its title,
// annotations (read-only, destructive hints) and output schema too.
func (t *Tool) Definition() *sdk.Tool { return t.def.Load().raw }

// Result is what a tool call returned.
type Result struct {
	// Text is the result's text blocks, one per line, with the text of
	// embedded text resources and a line naming each link and attachment.
	Text string
	// Structured is the result's structured content (JSON); nil when it
	// has none.
	Structured json.RawMessage
	// Attachments are the images, audio and binary resources of the
	// result, whole, in the order the text numbers them.
	Attachments []engine.Attachment
	// IsError says the server reported the call as failed; Text says why.
	IsError bool

	blocks json.RawMessage // the result's content blocks as JSON, to spot structured content that repeats them
}

// ToolError is the error of a call the server reported as failed (a result
// with isError), or of a call that did not complete: timed out, or the
// server stopped or dropped the connection during it. Its message is what
// the model reads.
type ToolError struct {
	// Server names the server (Server.Name, or its command or URL); Tool
	// is the tool's name on it.
	Server, Tool string
	// Timeout says the server did not answer within the call timeout;
	// Lost that the connection ended during the call.
	Timeout, Lost bool
	Message       string
}

// Error returns the message.
func (e *ToolError) Error() string { return e.Message }

// Call validates args against the server's input schema, calls the tool
// and returns the result's text (see Invoke), with its structured content
// as JSON when no text carries it; the text names each attachment, which
// CallAttached returns too. A result the server marks as an error, a
// timeout and a lost server are *ToolErrors; invalid arguments a
// *tool.ArgumentError.
func (t *Tool) Call(ctx context.Context, args string) (string, error) {
	out, _, err := t.CallAttached(ctx, args)
	return out, err
}

// CallAttached is Call with the result's attachments (tool.Attacher): the
// tool node puts them on the tool message, so the model sees the images a
// server returns.
func (t *Tool) CallAttached(ctx context.Context, args string) (string, []engine.Attachment, error) {
	r, err := t.Invoke(ctx, args)
	if err != nil {
		return "", nil, err
	}
	out := r.Text
	if r.Structured != nil && !carries(r.Text, r.Structured) && !mirrors(r.blocks, r.Structured) {
		if out != "" {
			out += "\n"
		}
		out += string(withoutData(r.Structured, r.Attachments))
	}
	if r.IsError {
		if out == "" {
			out = "the tool failed and said nothing more"
		}
		return "", nil, &ToolError{Server: t.c.srv.label(), Tool: t.name, Message: out}
	}
	return out, r.Attachments, nil
}

// Invoke validates args against the server's input schema and calls the
// tool, returning the whole result; a result marked as an error is a
// Result with IsError, not an error. It fails with a *tool.ArgumentError
// for invalid arguments, a *ToolError when the call timed out or the
// server was lost during it, the context's error when ctx ended, and an
// error naming the server otherwise (a protocol error it answered with,
// or a failed reconnection).
func (t *Tool) Invoke(ctx context.Context, args string) (*Result, error) {
	if t.c.stale.Load() {
		if err := t.c.listAgain(ctx); err != nil {
			return nil, err
		}
	}
	if t.gone.Load() {
		return nil, &ToolError{Server: t.c.srv.label(), Tool: t.name,
			Message: fmt.Sprintf("MCP server %s no longer offers the tool %s (it changed its list of tools); its tools are: %s", t.c.srv.label(), t.name, t.c.names())}
	}
	raw, err := t.validate(args)
	if err != nil {
		return nil, err
	}
	s, err := t.c.current(ctx)
	if err != nil {
		return nil, err
	}
	callCtx := ctx
	if d := t.c.cfg.callTimeout; d > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	res, err := s.cs.CallTool(callCtx, &sdk.CallToolParams{Name: t.name, Arguments: raw})
	if err != nil {
		return nil, t.callError(ctx, callCtx, s, err)
	}
	return convert(res)
}

// callError turns a failed call into an error that says what happened.
func (t *Tool) callError(ctx, callCtx context.Context, s *session, err error) error {
	label := t.c.srv.label()
	if ctx.Err() != nil {
		return ctx.Err() // the run was cancelled: not the tool's failure
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code != codeRejected {
		return fmt.Errorf("MCP server %s refused the call of %s: %s", label, t.name, we.Message)
	}
	select {
	case <-s.gone:
		return t.lost(s, err)
	default:
	}
	if callCtx.Err() != nil {
		// The server may be busy or stuck: a ping tells, without holding up
		// this result; a stuck one is dropped so the next call reconnects.
		go func() {
			pctx, cancel := context.WithTimeout(context.Background(), min(pingTimeout, t.c.cfg.callTimeout))
			defer cancel()
			if s.cs.Ping(pctx, nil) != nil {
				t.c.drop(s)
			}
		}()
		return &ToolError{Server: label, Tool: t.name, Timeout: true,
			Message: fmt.Sprintf("MCP server %s did not answer the call of %s within %v; the call was cancelled", label, t.name, t.c.cfg.callTimeout)}
	}
	return t.lost(s, err)
}

// codeRejected is the code of the SDK's error for a request its transport
// could not deliver (an HTTP request that failed): not the server's answer.
const codeRejected = -32005

// pingTimeout is how long, at most, a server that timed out a call has to
// answer a ping before it counts as stuck; no longer than the call timeout.
const pingTimeout = 5 * time.Second

func (t *Tool) lost(s *session, err error) error {
	t.c.drop(s)
	label := t.c.srv.label()
	how := "dropped the connection"
	detail := ": " + err.Error()
	if s.proc != nil {
		how = "stopped"
		detail = s.proc.describe()
	}
	return &ToolError{Server: label, Tool: t.name, Lost: true,
		Message: fmt.Sprintf("MCP server %s %s during the call of %s%s; the call may or may not have taken effect, and the next call reconnects", label, how, t.name, detail)}
}

// validate checks args against the input schema and returns them as the
// JSON object to send.
func (t *Tool) validate(args string) (json.RawMessage, error) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	d := t.def.Load()
	inst, err := d.schema.Check(d.spec.Name, args)
	if err != nil {
		return nil, err
	}
	if _, ok := inst.(map[string]any); !ok {
		return nil, &tool.ArgumentError{Tool: d.spec.Name, Args: args, Problems: []string{"at /: want a JSON object of arguments"}}
	}
	return json.RawMessage(args), nil
}

// readContent reads content blocks: their text, one block a line, with a
// line naming each link and each attachment (the images, audio and
// binary resources, which it returns whole).
func readContent(blocks []sdk.Content) (string, []engine.Attachment, error) {
	var lines []string
	var atts []engine.Attachment
	attach := func(a engine.Attachment) {
		atts = append(atts, a)
		desc := a.MIMEType
		if a.URI != "" {
			desc = a.URI + ", " + desc
		}
		lines = append(lines, fmt.Sprintf("[attachment %d: %s %s, %s]", len(atts), a.Kind, strings.TrimSuffix(desc, ", "), size(len(a.Data))))
	}
	for _, c := range blocks {
		switch c := c.(type) {
		case *sdk.TextContent:
			lines = append(lines, c.Text)
		case *sdk.ImageContent:
			attach(engine.Attachment{Kind: engine.AttachImage, MIMEType: c.MIMEType, Data: c.Data})
		case *sdk.AudioContent:
			attach(engine.Attachment{Kind: engine.AttachAudio, MIMEType: c.MIMEType, Data: c.Data})
		case *sdk.ResourceLink:
			l := "[resource " + c.URI
			if c.Name != "" {
				l += " (" + c.Name + ")"
			}
			if c.Description != "" {
				l += ": " + c.Description
			}
			lines = append(lines, l+"]")
		case *sdk.EmbeddedResource:
			if c.Resource == nil {
				continue
			}
			if c.Resource.Blob == nil {
				lines = append(lines, c.Resource.Text)
				continue
			}
			attach(engine.Attachment{Kind: engine.AttachResource, MIMEType: c.Resource.MIMEType, URI: c.Resource.URI, Data: c.Resource.Blob})
		default:
			b, err := json.Marshal(c)
			if err != nil {
				return "", nil, fmt.Errorf("mcp: a content block of type %T cannot be read: %w", c, err)
			}
			lines = append(lines, string(b))
		}
	}
	return strings.Join(lines, "\n"), atts, nil
}

// convert reads a result's content blocks.
func convert(res *sdk.CallToolResult) (*Result, error) {
	r := &Result{IsError: res.IsError}
	var err error
	if r.Text, r.Attachments, err = readContent(res.Content); err != nil {
		return nil, err
	}
	if res.StructuredContent != nil && len(res.Content) > 0 {
		b, err := json.Marshal(res.Content)
		if err != nil {
			return nil, fmt.Errorf("mcp: a result's content cannot be encoded: %w", err)
		}
		r.blocks = b
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("mcp: a result's structured content cannot be encoded: %w", err)
		}
		r.Structured = b
	}
	return r, nil
}

// carries reports whether text already says what the structured content v
// does: text (or one of its lines) is v as JSON, as servers are asked to
// repeat it, or v only wraps text in an object of one field (the
// filesystem server's {"content": text}). The model need not read it twice.
func carries(text string, v json.RawMessage) bool {
	var want any
	if json.Unmarshal(v, &want) != nil {
		return false
	}
	if obj, ok := want.(map[string]any); ok && len(obj) == 1 {
		for _, f := range obj {
			if f == text {
				return true
			}
		}
	}
	same := func(s string) bool {
		var got any
		return json.Unmarshal([]byte(s), &got) == nil && reflect.DeepEqual(got, want)
	}
	if same(text) {
		return true
	}
	for l := range strings.SplitSeq(text, "\n") {
		if same(l) {
			return true
		}
	}
	return false
}

// mirrors reports whether structured content v only repeats the result's
// content blocks, as {"content": [blocks]} (the filesystem server's
// read_media_file does): the text already names them, and their base64
// is not for the model to read.
func mirrors(blocks, v json.RawMessage) bool {
	if blocks == nil {
		return false
	}
	var obj map[string]any
	var want any
	if json.Unmarshal(v, &obj) != nil || len(obj) != 1 || json.Unmarshal(blocks, &want) != nil {
		return false
	}
	for _, f := range obj {
		return reflect.DeepEqual(f, want)
	}
	return false
}

// withoutData is structured content v with every string that is an
// attachment's data (base64) replaced by "[attachment N]": the model gets
// the bytes as the attachment, not as text.
func withoutData(v json.RawMessage, as []engine.Attachment) json.RawMessage {
	if len(as) == 0 {
		return v
	}
	data := map[string]int{}
	for i, a := range as {
		data[base64.StdEncoding.EncodeToString(a.Data)] = i + 1
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return v
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case string:
			if n, ok := data[x]; ok {
				return fmt.Sprintf("[attachment %d]", n)
			}
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
		}
		return x
	}
	b, err := json.Marshal(walk(x))
	if err != nil {
		return v
	}
	return b
}

func size(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
