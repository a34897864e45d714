// Package agentclient is a client for LangGraph's Agent Server API: the
// HTTP API of `langgraph dev`, LangGraph Platform deployments and Weft's
// own agentserver. It covers assistants, threads, state, history, forks
// and runs (background, waited, streamed over Server-Sent Events, joined
// and cancelled), with typed requests and responses for those calls.
//
// Every failure is a value a program can test: an *Error carries the
// method, path, status and the server's own message, and errors.Is finds
// ErrNotFound, ErrConflict, ErrUnauthorized, ErrInvalid, ErrUnreachable
// and ErrTimeout in it. A stream cut mid-run is resumed from the last
// event's id through the run's stream endpoint (Last-Event-ID) when the
// server can; otherwise it ends in a *StreamCutError saying after which
// event it was cut. Resume answers an interrupt only if the thread is
// still at the checkpoint the caller saw.
//
// The package is headless and needs only the standard library.
package agentclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds a call that answers at once when no WithTimeout
// is given. Schemas are the slow exception: LangGraph.js extracts them
// from TypeScript on the first call, which takes minutes on a loaded
// machine, so GetSchemas is not bounded by it (see GetSchemas).
const DefaultTimeout = 30 * time.Second

// DefaultReconnects is how many times in a row a cut stream is resumed
// when no WithReconnects is given.
const DefaultReconnects = 3

// Client talks to one Agent Server. It is safe for concurrent use. The
// zero Client is not usable: make one with New.
type Client struct {
	base       *url.URL
	hc         *http.Client
	apiKey     string
	timeout    time.Duration
	reconnects int
	header     http.Header
}

// Option configures a Client.
type Option func(*Client)

// WithAPIKey sends key in the x-api-key header of every request, as
// LangGraph Platform deployments require. An empty key sends none.
func WithAPIKey(key string) Option { return func(c *Client) { c.apiKey = key } }

// APIKeyEnv are the environment variables whose first non-empty value
// WithAPIKeyFromEnv sends, as LangGraph's own SDKs read them. A key is
// never a flag: flags show in process lists.
var APIKeyEnv = []string{"LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"}

// WithAPIKeyFromEnv is WithAPIKey of the first APIKeyEnv variable set;
// none set sends no key.
func WithAPIKeyFromEnv() Option {
	return func(c *Client) {
		for _, k := range APIKeyEnv {
			if v := os.Getenv(k); v != "" {
				c.apiKey = v
				return
			}
		}
	}
}

// WithHTTPClient makes requests with hc instead of a new http.Client (for
// a proxy, TLS settings or a test transport). nil keeps the default.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout bounds each call that answers at once (everything but Wait,
// JoinRun, a cancel that waits and the streams) to d; a stream's wait for
// its response headers is bounded too, not the stream itself, which runs
// as long as the run does and stops with the context. 0 or less removes
// the bound (the context alone decides). Default DefaultTimeout.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithReconnects sets how many times in a row a stream cut mid-run is
// resumed from its last event id before the stream fails with a
// *StreamCutError; 0 never resumes. Default DefaultReconnects.
func WithReconnects(n int) Option { return func(c *Client) { c.reconnects = max(n, 0) } }

// WithHeader adds a header to every request (for instance an
// Authorization header a proxy in front of the server wants).
func WithHeader(name, value string) Option {
	return func(c *Client) { c.header.Add(name, value) }
}

// New returns a client of the server at baseURL, an http or https URL
// such as http://127.0.0.1:2024 (a path prefix is kept: requests go
// under it).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("agentclient: server address %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("agentclient: server address %q must start with http:// or https://", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("agentclient: server address %q names no host", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("agentclient: server address %q must not carry a query or fragment", baseURL)
	}
	c := &Client{base: u, hc: &http.Client{}, timeout: DefaultTimeout, reconnects: DefaultReconnects, header: http.Header{}}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL is the server address the client was made with.
func (c *Client) BaseURL() string { return c.base.String() }

// Sentinel errors, found with errors.Is in what the client returns.
var (
	// ErrNotFound: the server answered 404 (no such thread, run,
	// assistant or checkpoint).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the server refused because of the thread's state:
	// a 409, or a 422 saying the thread is busy with another run (what
	// LangGraph.js answers under multitask_strategy reject).
	ErrConflict = errors.New("conflict")
	// ErrUnauthorized: the server answered 401 or 403 (a missing or
	// wrong API key, or no right to the resource).
	ErrUnauthorized = errors.New("unauthorized")
	// ErrInvalid: the server rejected the request's content: a 400, or
	// a 422 that is not about a busy thread.
	ErrInvalid = errors.New("invalid request")
	// ErrUnreachable: no answer at all: the connection was refused, the
	// host is unknown, TLS failed, or the connection dropped before a
	// status arrived.
	ErrUnreachable = errors.New("server unreachable")
	// ErrTimeout: the call took longer than WithTimeout allows.
	ErrTimeout = errors.New("timed out")
	// ErrStreamCut: a stream ended mid-run and could not be resumed
	// (see StreamCutError).
	ErrStreamCut = errors.New("stream cut")
	// ErrThreadMoved: Resume found the thread at another checkpoint
	// than the one it was asked to act on (see ThreadMovedError).
	ErrThreadMoved = errors.New("thread moved")
)

// Error is a failed call: either the server answered with an error status
// (Status is set, Message holds what the server said) or no answer came
// (Status is 0 and Err says why: ErrUnreachable, ErrTimeout or the
// context's error, with the transport's cause).
type Error struct {
	// Method and Path are the request's, Path without the server's
	// address (for example "/threads/T/state").
	Method, Path string
	// Status is the HTTP status, 0 when the server did not answer.
	Status int
	// Message is the server's message: the text of a text/plain body,
	// a JSON body's detail, message or error, or a validation error's
	// issues; the status text when the body said nothing.
	Message string
	// Body is the error response's body as sent (at most 64 KiB).
	Body []byte
	// Err is the cause when the server did not answer.
	Err error
}

// Error says what was asked, of what, and what came back.
func (e *Error) Error() string {
	if e.Status == 0 {
		return fmt.Sprintf("agentclient: %s %s: %v", e.Method, e.Path, e.Err)
	}
	return fmt.Sprintf("agentclient: %s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap gives the transport's cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinel that the status stands for.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden
	case ErrConflict:
		return e.Status == http.StatusConflict || (e.Status == http.StatusUnprocessableEntity && saysBusy(e.Message))
	case ErrInvalid:
		return e.Status == http.StatusBadRequest || (e.Status == http.StatusUnprocessableEntity && !saysBusy(e.Message))
	}
	return false
}

// saysBusy tells a busy-thread 422 (LangGraph.js: "Thread is already
// running a task"; Weft: "Thread … is busy") from a validation 422
// (Python servers answer 422 to a malformed body).
func saysBusy(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "busy") || strings.Contains(m, "already running") || strings.Contains(m, "in progress")
}

// errTimeout is the cause of a context the client bounded itself, to tell
// its own timeout from the caller's deadline.
var errTimeout = errors.New("agentclient timeout")

// call is one request: its method, path (with query), JSON body (nil for
// none) and whether WithTimeout bounds it.
type call struct {
	method, path string
	body         any
	bounded      bool
	header       http.Header
}

// send makes the request and returns the response when its status is
// 2xx; any other status is read into an *Error. The returned cancel ends
// the request's context; call it once done with the body.
func (c *Client) send(ctx context.Context, cl call) (*http.Response, context.CancelFunc, error) {
	var cancel context.CancelFunc = func() {}
	if cl.bounded && c.timeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	}
	resp, err := c.do(ctx, cl)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return resp, cancel, nil
}

func (c *Client) do(ctx context.Context, cl call) (*http.Response, error) {
	var body io.Reader
	if cl.body != nil {
		b, err := json.Marshal(cl.body)
		if err != nil {
			return nil, &Error{Method: cl.method, Path: cl.path, Err: fmt.Errorf("encoding the request body: %w", err)}
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.base.String()+cl.path, body)
	if err != nil {
		return nil, &Error{Method: cl.method, Path: cl.path, Err: err}
	}
	// No Content-Type on a bodiless request: LangGraph.js answers a GET
	// carrying application/json and no body with 400 Malformed JSON.
	if cl.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range c.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	for k, vs := range cl.header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if c.apiKey != "" {
		req.Header.Set("x-api-key", c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, &Error{Method: cl.method, Path: cl.path, Err: c.transportError(ctx, err)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		b, rerr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		e := &Error{Method: cl.method, Path: cl.path, Status: resp.StatusCode, Body: b, Message: serverMessage(b)}
		if rerr != nil && len(b) == 0 {
			e.Message = http.StatusText(resp.StatusCode) + " (reading the body failed: " + rerr.Error() + ")"
		}
		return nil, e
	}
	return resp, nil
}

// transportError names why no answer came: the client's own timeout, the
// caller's context, or the server not being reachable.
func (c *Client) transportError(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("%w: no answer from %s within %v", ErrTimeout, c.base.Host, c.timeout)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("%w: %s: %v", ErrUnreachable, c.base.Host, rootCause(err))
}

// rootCause strips url.Error's repetition of the method and address,
// which the *Error already says.
func rootCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// serverMessage finds what the server said in an error body: LangGraph.js
// answers text/plain, Weft and Python servers {"detail": …}, validation
// errors {"error": {"issues": […]}} (Zod) or {"detail": [{loc, msg}]}
// (FastAPI).
func serverMessage(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "(no message)"
	}
	var v any
	if json.Unmarshal(b, &v) == nil {
		if s := messageOf(v); s != "" {
			return s
		}
	}
	s := string(b)
	if len(s) > 2000 {
		s = s[:2000] + "…"
	}
	return s
}

func messageOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, it := range x {
			if s := messageOf(it); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, "; ")
	case map[string]any:
		if issues, ok := x["issues"].([]any); ok {
			return messageOf(issues)
		}
		msg, _ := x["message"].(string)
		if msg == "" {
			msg, _ = x["msg"].(string)
		}
		if msg != "" {
			if where := pathOf(x["path"], x["loc"]); where != "" {
				return where + ": " + msg
			}
			return msg
		}
		for _, k := range []string{"detail", "error", "message"} {
			if s := messageOf(x[k]); s != "" {
				return s
			}
		}
	}
	return ""
}

// pathOf joins a validation issue's path (Zod) or loc (FastAPI).
func pathOf(vs ...any) string {
	for _, v := range vs {
		p, ok := v.([]any)
		if !ok || len(p) == 0 {
			continue
		}
		var parts []string
		for _, e := range p {
			switch e := e.(type) {
			case string:
				parts = append(parts, e)
			case float64:
				parts = append(parts, strconv.Itoa(int(e)))
			}
		}
		return strings.Join(parts, ".")
	}
	return ""
}

// json makes a call and decodes its JSON answer into out (nil: the body
// is read and dropped).
func (c *Client) json(ctx context.Context, cl call, out any) error {
	resp, cancel, err := c.send(ctx, cl)
	if err != nil {
		return err
	}
	defer cancel()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return &Error{Method: cl.method, Path: cl.path, Err: c.bodyError(ctx, err)}
	}
	if out == nil {
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return &Error{Method: cl.method, Path: cl.path, Status: resp.StatusCode, Message: "the server answered with an empty body where JSON was expected"}
	}
	if err := json.Unmarshal(b, out); err != nil {
		snippet := string(b)
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		return &Error{Method: cl.method, Path: cl.path, Status: resp.StatusCode, Message: fmt.Sprintf("the answer is not the JSON expected (%v): %s", err, snippet)}
	}
	return nil
}

// bodyError names a failure while reading an answer's body.
func (c *Client) bodyError(ctx context.Context, err error) error {
	if errors.Is(context.Cause(ctx), errTimeout) {
		return fmt.Errorf("%w: the answer from %s did not finish within %v", ErrTimeout, c.base.Host, c.timeout)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("%w: the connection to %s dropped while reading the answer: %v", ErrUnreachable, c.base.Host, err)
}

// esc escapes one path segment (a thread, run or assistant id).
func esc(s string) string { return url.PathEscape(s) }

// needID checks that an id the path needs is given.
func needID(method, path, what, id string) error {
	if id == "" {
		return &Error{Method: method, Path: path, Err: fmt.Errorf("%w: %s is empty", ErrInvalid, what)}
	}
	return nil
}
