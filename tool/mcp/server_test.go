package mcp_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftstudio/weft/tool/mcp"
)

// serverEnv makes the test binary an MCP server over stdio (testServer)
// instead of running the tests: the server a test runs as a real
// subprocess, which can exit or hang in the middle of a call.
const serverEnv = "WEFT_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		s := testServer(nil)
		if mode == "hang-list" { // answers the handshake, never tools/list
			s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
				return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
					if method == "tools/list" {
						select {}
					}
					return next(ctx, method, req)
				}
			})
		}
		if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// freezeSelf stops the calling process (SIGSTOP), where the system can.
var freezeSelf func()

// goServer is the test binary as a server over stdio.
func goServer(t testing.TB) mcp.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return mcp.Server{Name: "go-test", Command: exe, Env: []string{serverEnv + "=1"}}
}

// A PNG's first bytes: enough for an image the client must pass on whole.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")

type echoArgs struct {
	Text string `json:"text" jsonschema:"what to echo"`
}

type addArgs struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sum struct {
	Sum int `json:"sum"`
}

type sleepArgs struct {
	MS int `json:"ms"`
}

// testServer is a server with a tool for each behaviour the client must
// handle; calls counts the calls that reached it (in process only).
func testServer(calls *atomic.Int32) *sdk.Server {
	count := func() {
		if calls != nil {
			calls.Add(1)
		}
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "weft-test", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echoes text."}, func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
		count()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text}}}, nil, nil
	})
	// The SDK's typed tools validate their input on the server too; this one
	// takes a hand-written schema and checks nothing, so only the client's
	// validation stands between a bad argument and the tool.
	s.AddTool(&sdk.Tool{Name: "shout", Description: "Shouts a word.", InputSchema: map[string]any{
		"type": "object", "required": []string{"word"},
		"properties": map[string]any{"word": map[string]any{"type": "string", "minLength": 2}},
	}}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		count()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(req.Params.Arguments) + "!"}}}, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two numbers."}, func(_ context.Context, _ *sdk.CallToolRequest, a addArgs) (*sdk.CallToolResult, sum, error) {
		count()
		return nil, sum{a.A + a.B}, nil // the SDK repeats it as text
	})
	s.AddTool(&sdk.Tool{Name: "report", Description: "Structured content and text that differ.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "three items"}}, StructuredContent: map[string]any{"items": 3}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "wrap", Description: "Structured content that only wraps the text.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a\nb"}}, StructuredContent: map[string]any{"content": "a\nb"}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "picture", Description: "Returns an image.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			// Structured content carrying the image's base64 too: the model
			// must get it as the attachment, not as text.
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "a dot"}, &sdk.ImageContent{MIMEType: "image/png", Data: pngBytes}},
				StructuredContent: map[string]any{"png": base64.StdEncoding.EncodeToString(pngBytes), "width": 1}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Fails as a tool does.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the disk is full"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "die", Description: "Exits in the middle of the call.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			fmt.Fprintln(os.Stderr, "dying on purpose")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "hang", Description: "Never answers, and ignores cancellation.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			select {}
		})
	if freezeSelf != nil {
		s.AddTool(&sdk.Tool{Name: "freeze", Description: "Stops the whole server process.", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				count()
				freezeSelf()
				return nil, nil
			})
	}
	// reshape changes the server's tools as a server may at any time:
	// fail goes, extra comes, echo gets a new description and schema.
	s.AddTool(&sdk.Tool{Name: "reshape", Description: "Changes the list of tools.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			count()
			s.RemoveTools("fail")
			s.AddTool(&sdk.Tool{Name: "extra", Description: "Came later.", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "extra!"}}}, nil
				})
			s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes text, loudly.", InputSchema: map[string]any{
				"type": "object", "required": []string{"loud"}, "properties": map[string]any{"loud": map[string]any{"type": "string"}}}},
				func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ECHO " + string(req.Params.Arguments)}}}, nil
				})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "reshaped"}}}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "sleep", Description: "Sleeps, unless cancelled."}, func(ctx context.Context, _ *sdk.CallToolRequest, a sleepArgs) (*sdk.CallToolResult, any, error) {
		count()
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slept"}}}, nil, nil
		case <-ctx.Done():
			fmt.Fprintln(os.Stderr, "sleep was cancelled")
			return nil, nil, ctx.Err()
		}
	})
	return s
}

// httpServer serves testServer over streamable HTTP, checking each
// request's Authorization header is auth.
func httpServer(t *testing.T, auth string, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer(calls) }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != auth {
			http.Error(w, "bad Authorization: "+got, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}
