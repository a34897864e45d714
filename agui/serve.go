package agui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// AgentsPrefix is the path under which Serve mounts each graph.
const AgentsPrefix = "/agents/"

// Slug turns a graph name into a path segment: lower-case letters and
// digits, other runs of characters replaced by one "-" ("writing
// assistant" → "writing-assistant"). An empty result becomes "graph".
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "graph"
	}
	return b.String()
}

// Mount returns the graphs keyed by their Serve paths, AgentsPrefix + the
// Slug of each graph's name; two graphs with the same slug are an error.
func Mount(graphs []*engine.Graph) (map[string]*engine.Graph, error) {
	out := make(map[string]*engine.Graph, len(graphs))
	for _, g := range graphs {
		if g == nil {
			return nil, errors.New("agui: a graph to serve is nil")
		}
		p := AgentsPrefix + Slug(g.Name())
		if prev, dup := out[p]; dup {
			return nil, fmt.Errorf("agui: graphs %q and %q would both be served at %s: rename one", prev.Name(), g.Name(), p)
		}
		out[p] = g
	}
	return out, nil
}

// WithRoot serves h at the root of Serve's address, beside the agents,
// behind the same guard and connection limits: weft serve mounts the
// Agent Server API there. When Serve's context ends it calls h's
// StopRuns method, if h has one, before shutting down. nil serves nothing
// more.
func WithRoot(h http.Handler) Option { return func(c *config) { c.root = h } }

// Serve runs an AG-UI server on addr (host:port; port 0 picks a free one)
// until ctx ends. Each graph is served at /agents/<slug of its name>, runs
// with saver as its checkpoint store (so threads land in the store under
// the client's threadId), and GET /agents lists the agents as JSON. The
// URLs are printed when the server is listening (to os.Stdout, or the
// WithOutput writer). When ctx ends, runs in progress pause at their next
// step boundary and the server shuts down; Serve then returns nil. Any
// other failure (a bad address, no graphs) is returned.
//
// Every request goes through Guard: by default only loopback host names and
// pages served from loopback are answered, other sites' pages are refused
// (WithAllowedOrigins adds origins, WithAllowedHosts host names), and
// WithToken requires a bearer token. Serve refuses to listen on an address
// other machines can reach without a token.
func Serve(ctx context.Context, addr string, saver checkpoint.Saver, graphs []*engine.Graph, opts ...Option) error {
	if saver == nil {
		return errors.New("agui: Serve needs a checkpoint store")
	}
	mounted, err := Mount(graphs)
	if err != nil {
		return err
	}
	cfg := config{out: os.Stdout}
	for _, o := range opts {
		o(&cfg)
	}
	if err := checkExposure(addr, cfg.token); err != nil {
		return err
	}
	h, err := NewHandler(mounted, append([]Option{WithSaver(saver)}, opts...)...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agui: listening on %s: %w", addr, err)
	}
	base := "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle(AgentsPrefix, h)
	mux.HandleFunc("GET /agents", func(w http.ResponseWriter, r *http.Request) {
		type agent struct {
			Name string `json:"name"`
			Path string `json:"path"`
			URL  string `json:"url"`
		}
		list := []agent{}
		for _, p := range h.Paths() {
			list = append(list, agent{Name: h.Graph(p).Name(), Path: p, URL: base + p})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(list)
	})
	if cfg.root != nil {
		mux.Handle("/", cfg.root)
	}
	if cfg.out != nil {
		fmt.Fprintf(cfg.out, "AG-UI server listening on %s\n", base)
		for _, p := range h.Paths() {
			fmt.Fprintf(cfg.out, "  %-24s POST %s%s\n", h.Graph(p).Name(), base, p)
		}
		if cfg.root != nil {
			fmt.Fprintf(cfg.out, "  %-24s %s/\n", "LangGraph Agent Server API", base)
		}
	}
	// The guard answers first: a client it refuses gets no body read.
	lim := cfg.limits.withDefaults()
	srv, ln := lim.server(Guard(readBodyFirst(mux, lim.BodyTimeout, h.cfg.maxBody), opts...), ln)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("agui: serving on %s: %w", base, err)
	case <-ctx.Done():
	}
	h.StopRuns()
	if s, ok := cfg.root.(interface{ StopRuns() }); ok {
		s.StopRuns()
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("agui: shutting down: %w", err)
	}
	return nil
}
