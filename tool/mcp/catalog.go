package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftstudio/weft/engine"
)

// This file reads what a server offers beside tools: resources (files,
// records, anything with a URI) and prompts (conversation templates). A
// program reads them to give an agent its context or its first messages;
// the model does not call them.

// Resources lists the resources the server lists (every page; resource
// templates are not expanded). A server that offers none answers with an
// error naming it.
func (c *Client) Resources(ctx context.Context) ([]*sdk.Resource, error) {
	var out []*sdk.Resource
	err := c.request(ctx, "listing the resources", func(ctx context.Context, s *session) error {
		out = nil
		for r, err := range s.cs.Resources(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// ReadResource reads the resource at uri: Text is its text contents, one
// per line, with a line naming each binary content, which is in
// Attachments whole (Structured is nil and IsError false for a resource).
func (c *Client) ReadResource(ctx context.Context, uri string) (*Result, error) {
	var res *sdk.ReadResourceResult
	err := c.request(ctx, "reading the resource "+uri, func(ctx context.Context, s *session) (err error) {
		res, err = s.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		return nil, err
	}
	var blocks []sdk.Content
	for _, rc := range res.Contents {
		if rc != nil {
			blocks = append(blocks, &sdk.EmbeddedResource{Resource: rc})
		}
	}
	text, atts, err := readContent(blocks)
	if err != nil {
		return nil, err
	}
	return &Result{Text: text, Attachments: atts}, nil
}

// Prompts lists the server's prompts (every page), with their arguments.
// A server that offers none answers with an error naming it.
func (c *Client) Prompts(ctx context.Context) ([]*sdk.Prompt, error) {
	var out []*sdk.Prompt
	err := c.request(ctx, "listing the prompts", func(ctx context.Context, s *session) error {
		out = nil
		for p, err := range s.cs.Prompts(ctx, nil) {
			if err != nil {
				return err
			}
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// Prompt gets the prompt name filled with args, as the messages of a
// conversation: each of its messages with its role (user or assistant),
// its text as Content and its images, audio and embedded files as
// Attachments. The server checks args; its refusal is the error.
func (c *Client) Prompt(ctx context.Context, name string, args map[string]string) ([]engine.Message, error) {
	var res *sdk.GetPromptResult
	err := c.request(ctx, "getting the prompt "+name, func(ctx context.Context, s *session) (err error) {
		res, err = s.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]engine.Message, 0, len(res.Messages))
	for i, pm := range res.Messages {
		if pm == nil {
			continue
		}
		role := engine.RoleUser
		switch pm.Role {
		case "user":
		case "assistant":
			role = engine.RoleAssistant
		default:
			return nil, fmt.Errorf("mcp: server %s: prompt %s: message %d has role %q, which is neither user nor assistant", c.srv.label(), name, i+1, pm.Role)
		}
		text, atts, err := readContent([]sdk.Content{pm.Content})
		if err != nil {
			return nil, fmt.Errorf("mcp: server %s: prompt %s: message %d: %w", c.srv.label(), name, i+1, err)
		}
		out = append(out, engine.Message{Role: role, Content: text, Attachments: atts})
	}
	return out, nil
}

// request makes one request of the server within the call timeout, on the
// current session (reconnecting when it was lost), and names the server
// and what was asked in its error.
func (c *Client) request(ctx context.Context, what string, do func(context.Context, *session) error) error {
	s, err := c.current(ctx)
	if err != nil {
		return err
	}
	if d := c.cfg.callTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	if err := do(ctx, s); err != nil {
		return fmt.Errorf("mcp: server %s: %s: %w", c.srv.label(), what, err)
	}
	return nil
}
