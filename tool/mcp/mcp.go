// Package mcp makes the tools of Model Context Protocol servers Weft tools,
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Connect starts a server's command and talks to it over stdio, or opens a
// streamable HTTP session with a server at a URL, and lists its tools; each
// is a tool.Tool, so the tool node (tool.Node), the ReAct agent
// (agent.New) and approval before chosen tools (agent.WithApproval) take
// them like tools written in Go:
//
//	fs, err := mcp.Connect(ctx, mcp.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir}})
//	if err != nil {
//		return err
//	}
//	defer fs.Close()
//	g, err := agent.New(m, fs.Tools(), agent.WithApproval("write_file"))
//
// A call's arguments are validated against the server's input schema
// before they are sent; invalid ones are a *tool.ArgumentError, which the
// tool node gives back to the model to correct. A result's text goes to
// the model; its structured content too, as JSON, when no text already
// carries it; images, audio and embedded files are named in the text
// ("[attachment 1: image image/png, 1.2 kB]") and, whole, are the tool
// message's Attachments (tool.Attacher), which the model adapters send
// where their APIs take them. A result the server marks as an error is an
// error of the call.
//
// Nothing a server does hangs a run: every call has a timeout
// (WithCallTimeout), the run's cancellation cancels the call on the server
// too, and a server that exits or drops its connection during a call
// fails that call with an error that says so (with the end of its stderr
// and its exit status, for a command). The next call reconnects — starts
// the command again or opens a new HTTP session — rather than retrying the
// failed one, whose effects are unknown. A server that times a call out
// and then answers no ping is replaced the same way.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weftstudio/weft/tool"
)

// Server says how to reach an MCP server: Command (with Args, Env and Dir)
// runs a server over stdio, URL talks to one over streamable HTTP (with
// Header on every request). Exactly one of Command and URL is set.
type Server struct {
	// Name names the server in errors; "" uses the command or the URL.
	Name string

	// Command is the program of a server over stdio, looked up in PATH
	// like exec.Command does; Args are its arguments.
	Command string
	Args    []string
	// Env is added to Weft's environment for the command ("KEY=value"
	// entries; later ones win); nil passes Weft's environment as it is.
	Env []string
	// Dir is the command's working directory; "" is Weft's.
	Dir string

	// URL is the endpoint of a server over streamable HTTP.
	URL string
	// Header is sent with every HTTP request (an Authorization header, an
	// API key); nil sends none.
	Header http.Header
	// HTTPClient makes the requests; nil is http.DefaultClient's transport.
	HTTPClient *http.Client
}

// label is how errors name the server.
func (s Server) label() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.URL != "":
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

func (s Server) check() error {
	switch {
	case s.Command == "" && s.URL == "":
		return errors.New("mcp: Server has neither a Command nor a URL")
	case s.Command != "" && s.URL != "":
		return fmt.Errorf("mcp: Server has both a Command (%q) and a URL (%q); set one", s.Command, s.URL)
	case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
		return fmt.Errorf("mcp: Server URL %q is not an http:// or https:// URL", s.URL)
	case s.URL == "" && (s.Header != nil || s.HTTPClient != nil):
		return fmt.Errorf("mcp: Server %q runs a command: Header and HTTPClient are for a URL", s.Command)
	case s.URL != "" && (s.Args != nil || s.Env != nil || s.Dir != ""):
		return fmt.Errorf("mcp: Server %q is a URL: Args, Env and Dir are for a command", s.URL)
	}
	return nil
}

// Option configures Connect.
type Option func(*config)

type config struct {
	callTimeout    time.Duration
	connectTimeout time.Duration
	prefix         string
	only           []string
	stderr         io.Writer
	changed        func([]tool.Tool, error)
}

// Defaults of the options.
const (
	DefaultCallTimeout    = 2 * time.Minute
	DefaultConnectTimeout = 30 * time.Second
)

// WithCallTimeout bounds each tool call (default DefaultCallTimeout); a
// call that takes longer is cancelled on the server and fails with an
// error saying it timed out. d <= 0 means no bound of Weft's own (the
// run's context still applies).
func WithCallTimeout(d time.Duration) Option { return func(c *config) { c.callTimeout = d } }

// WithConnectTimeout bounds starting or reaching the server and its
// handshake, at Connect and at every reconnection, and listing its tools
// at Connect (default DefaultConnectTimeout).
func WithConnectTimeout(d time.Duration) Option { return func(c *config) { c.connectTimeout = d } }

// WithPrefix prefixes the name of every tool the model sees ("fs_" makes
// the server's read_file fs_read_file), to keep two servers' tools apart.
// The server is still called by its own name.
func WithPrefix(p string) Option { return func(c *config) { c.prefix = p } }

// WithTools keeps only the named tools of the server (its own names,
// without a prefix); Connect fails when the server has no tool of one of
// the names. Without it every tool is kept.
func WithTools(names ...string) Option {
	return func(c *config) { c.only = append(c.only, names...) }
}

// WithToolsChanged calls fn after the server said its tools changed and
// the Client listed them again, with the new list (Tools), or with the
// error of a listing that failed (the tools then stay as they were). A
// graph built from the old list keeps it: fn is where a program builds
// its agent again. fn runs on a goroutine of its own; nil calls nothing.
func WithToolsChanged(fn func(tools []tool.Tool, err error)) Option {
	return func(c *config) { c.changed = fn }
}

// WithStderr copies a command's stderr (its logs) to w as well; the end of
// it is kept either way, for the error of a server that exits.
func WithStderr(w io.Writer) Option { return func(c *config) { c.stderr = w } }

// Client is a connection to one MCP server and the tools it offers. Its
// methods are safe for concurrent use.
type Client struct {
	srv Server
	cfg config
	sdk *sdk.Client

	toolsMu sync.Mutex  // guards tools; held through a listing, so listings apply in order
	tools   []*Tool     // as the server last listed them (those WithTools keeps)
	stale   atomic.Bool // the server changed its tools and listing them again failed: the next call lists first

	mu     sync.Mutex
	sess   *session // nil after the connection was lost, until the next call
	closed bool
}

// session is one connection: an SDK session and, for a command, its
// process.
type session struct {
	cs   *sdk.ClientSession
	proc *process // nil over HTTP
	gone chan struct{}
}

// Connect connects to srv, lists its tools (every page) and returns the
// client; Close it when done. It fails when srv is not a valid Server,
// the server cannot be started or reached, or its tools cannot be listed
// or their input schemas are not valid JSON Schema.
func Connect(ctx context.Context, srv Server, opts ...Option) (*Client, error) {
	if err := srv.check(); err != nil {
		return nil, err
	}
	cfg := config{callTimeout: DefaultCallTimeout, connectTimeout: DefaultConnectTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	c := &Client{srv: srv, cfg: cfg}
	c.sdk = sdk.NewClient(&sdk.Implementation{Name: "weft", Version: "1"}, &sdk.ClientOptions{
		// No capabilities: Weft offers no roots, sampling or elicitation,
		// and the SDK would announce roots by default.
		Capabilities: &sdk.ClientCapabilities{},
		// Off the SDK's goroutine: a listing is a request on the same
		// session, which the handler must not wait for.
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { go c.relist() },
	})
	s, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.sess = s
	lctx := ctx
	if cfg.connectTimeout > 0 {
		var cancel context.CancelFunc
		lctx, cancel = context.WithTimeout(ctx, cfg.connectTimeout)
		defer cancel()
	}
	if err := c.listTools(lctx, s); err != nil {
		c.Close()
		if ctx.Err() == nil && lctx.Err() != nil {
			err = fmt.Errorf("%w (no answer within %v)", err, cfg.connectTimeout)
		}
		return nil, err
	}
	return c, nil
}

// Tools returns the server's tools (those WithTools kept), in the order
// the server last listed them, for tool.Node or agent.New; each is a
// *Tool. When the server says its tools changed (notifications/tools/
// list_changed), the Client lists them again: Tools then returns the new
// list, the Tools it returned before take their new definitions, and
// WithToolsChanged tells the program, whose graph holds the old list.
func (c *Client) Tools() []tool.Tool {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	out := make([]tool.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// Tool returns the tool the server names name (its own name, without a
// prefix); nil when there is none, or WithTools left it out.
func (c *Client) Tool(name string) *Tool {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	for _, t := range c.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// names lists the server's tools for an error, as the model calls them.
func (c *Client) names() string {
	var out []string
	for _, t := range c.Tools() {
		out = append(out, t.Spec().Name)
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, ", ")
}

// relist lists the server's tools again after it said they changed, and
// tells WithToolsChanged's function. A listing that fails keeps the tools
// as they were and is reported to that function too.
func (c *Client) relist() {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	ctx := context.Background()
	if d := c.cfg.connectTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	err := c.listAgain(ctx)
	if c.cfg.changed != nil {
		c.cfg.changed(c.Tools(), err)
	}
}

// listAgain lists the tools on the current session. A failure marks the
// list stale, so the next call lists again before it runs (and fails
// saying why, if it cannot) rather than call a tool the server changed.
func (c *Client) listAgain(ctx context.Context) error {
	s, err := c.current(ctx)
	if err == nil {
		err = c.listTools(ctx, s)
	}
	if err != nil {
		c.stale.Store(true)
		return fmt.Errorf("mcp: server %s changed its tools, and listing them again failed: %w", c.srv.label(), err)
	}
	c.stale.Store(false)
	return nil
}

// Close ends the session and, for a command, the server's process: its
// stdin is closed, and it is killed if it has not exited a few seconds
// later. Calls made after Close fail.
func (c *Client) Close() error {
	c.mu.Lock()
	s := c.sess
	c.sess, c.closed = nil, true
	c.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.close()
}

// connect starts or reaches the server and makes the handshake, within the
// connect timeout.
func (c *Client) connect(ctx context.Context) (*session, error) {
	if c.cfg.connectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.connectTimeout)
		defer cancel()
	}
	s := &session{gone: make(chan struct{})}
	var t sdk.Transport
	if c.srv.URL != "" {
		hc := c.srv.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		if len(c.srv.Header) > 0 {
			hc2 := *hc
			base := hc2.Transport
			if base == nil {
				base = http.DefaultTransport
			}
			hc2.Transport = headerTransport{header: c.srv.Header, base: base}
			hc = &hc2
		}
		t = &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: hc, MaxRetries: 1}
	} else {
		p, err := startProcess(c.srv, c.cfg.stderr)
		if err != nil {
			return nil, fmt.Errorf("mcp: starting server %s: %w", c.srv.label(), err)
		}
		s.proc = p
		t = &sdk.IOTransport{Reader: p.stdout, Writer: p.stdin}
	}
	cs, err := c.sdk.Connect(ctx, t, nil)
	if err != nil {
		if s.proc != nil {
			s.proc.stop()
			return nil, fmt.Errorf("mcp: connecting to server %s: %w%s", c.srv.label(), err, s.proc.describe())
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %v: %w", c.cfg.connectTimeout, err)
		}
		return nil, fmt.Errorf("mcp: connecting to server %s: %w", c.srv.label(), err)
	}
	s.cs = cs
	go func() {
		cs.Wait()
		close(s.gone)
	}()
	return s, nil
}

// current returns the session, connecting again when the last one was
// lost; concurrent callers share one reconnection.
func (c *Client) current(ctx context.Context) (*session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("mcp: the client of server %s is closed", c.srv.label())
	}
	if c.sess != nil {
		select {
		case <-c.sess.gone:
			go c.sess.close()
			c.sess = nil
		default:
			return c.sess, nil
		}
	}
	s, err := c.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnecting: %w", err)
	}
	c.sess = s
	return s, nil
}

// drop forgets s, if it is still the current session, and closes it: the
// next call reconnects.
func (c *Client) drop(s *session) {
	c.mu.Lock()
	if c.sess == s {
		c.sess = nil
	}
	c.mu.Unlock()
	go s.close()
}

func (s *session) close() error {
	if s.proc != nil {
		// Stop the process first: the SDK's Close waits for calls in
		// flight, which a hung server never answers.
		s.proc.stop()
	}
	err := s.cs.Close()
	if s.proc != nil || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil // a process's connection ends with it; that is the point
	}
	return err
}

// listTools lists every page of the server's tools and makes them the
// client's: a tool listed before keeps its *Tool, with the new
// definition; one no longer listed is marked gone. Nothing changes when
// the listing fails.
func (c *Client) listTools(ctx context.Context, s *session) error {
	c.toolsMu.Lock()
	defer c.toolsMu.Unlock()
	var listed []*sdk.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: listing the tools of server %s: %w", c.srv.label(), err)
		}
		listed = append(listed, t)
	}
	keep := map[string]bool{}
	for _, n := range c.cfg.only {
		keep[n] = true
	}
	seen := map[string]bool{}
	before := map[string]*Tool{}
	for _, t := range c.tools {
		before[t.name] = t
	}
	var tools []*Tool
	defs := map[*Tool]*toolDef{}
	for _, t := range listed {
		seen[t.Name] = true
		if len(keep) > 0 && !keep[t.Name] {
			continue
		}
		if old, ok := before[t.Name]; ok {
			d, err := newDef(c, t)
			if err != nil {
				return err
			}
			defs[old] = d
			tools = append(tools, old)
			continue
		}
		tt, err := newTool(c, t)
		if err != nil {
			return err
		}
		tools = append(tools, tt)
	}
	var missing []string
	for _, n := range c.cfg.only {
		if !seen[n] {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		var names []string
		for _, t := range listed {
			names = append(names, t.Name)
		}
		return fmt.Errorf("mcp: WithTools names %s, which server %s does not have; it has: %s",
			strings.Join(missing, ", "), c.srv.label(), strings.Join(names, ", "))
	}
	// All checked: apply.
	for t, d := range defs {
		t.def.Store(d)
		t.gone.Store(false)
	}
	for name, t := range before {
		if !seen[name] {
			t.gone.Store(true)
		}
	}
	c.tools = tools
	return nil
}

// headerTransport adds fixed headers to every request.
type headerTransport struct {
	header http.Header
	base   http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range h.header {
		r.Header.Del(k)
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

// process is a server's command, its pipes, and how it ended.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	tail   *tail
	exited chan struct{}
	err    error // Wait's result, set before exited is closed
}

// startProcess starts srv's command with pipes of its own, so the
// process's Wait never races the SDK's reads.
func startProcess(srv Server, stderr io.Writer) (*process, error) {
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Dir = srv.Dir
	if srv.Env != nil {
		cmd.Env = append(os.Environ(), srv.Env...)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	p := &process{cmd: cmd, stdin: inW, stdout: outR, tail: &tail{max: 2048}, exited: make(chan struct{})}
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Stderr = p.tail
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(p.tail, stderr)
	}
	// A server's children may keep its stderr open after it exits.
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// stopGrace is how long a server has to exit once its stdin is closed.
const stopGrace = 2 * time.Second

// stop closes the server's stdin, as the protocol asks, and kills it if it
// has not exited within stopGrace.
func (p *process) stop() {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
		p.cmd.Process.Kill()
		<-p.exited
	}
	p.stdout.Close()
}

// maxStderr is how much of a server's stderr an error quotes: its last
// lines, not a log for the model to wade through.
const maxStderr = 400

// describe says how the process ended and what it last wrote to stderr,
// waiting briefly for it to end: "" when it still runs and wrote nothing.
func (p *process) describe() string {
	var parts []string
	select {
	case <-p.exited:
		if p.err != nil {
			parts = append(parts, p.err.Error())
		} else {
			parts = append(parts, "it exited")
		}
	case <-time.After(200 * time.Millisecond):
	}
	if t := strings.TrimSpace(p.tail.String()); t != "" {
		if len(t) > maxStderr {
			t = "…" + strings.ToValidUTF8(t[len(t)-maxStderr:], "")
		}
		parts = append(parts, fmt.Sprintf("its stderr ends: %q", t))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
