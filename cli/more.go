package cli

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/bundle"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

func init() {
	builtins["export"] = Command{Summary: "write a thread as a JSON bundle: export THREAD [-o FILE]", Run: cmdExport, ReadOnly: true}
	builtins["import"] = Command{Summary: "read a thread bundle into the store: import FILE [-as THREAD]", Run: cmdImport}
	builtins["serve"] = Command{Summary: "serve every graph over AG-UI at http://ADDR/agents/<graph> and LangGraph's Agent Server API at http://ADDR/: serve [-addr 127.0.0.1:8123] [-allow-origin URL] [-allow-host NAME] [-token T]", Run: cmdServe}
}

func cmdExport(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	out := fs.String("o", "", "write to this file instead of standard output")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: export THREAD [-o FILE]")
	}
	if *out == "" {
		return bundle.Export(ctx, s, pos[0], w)
	}
	// Write beside the target and rename, so a failed export never leaves a
	// half-written file under the name asked for.
	tmp, err := os.CreateTemp(dirOf(*out), ".weft-export-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := bundle.Export(ctx, s, pos[0], tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	return printJSON(w, map[string]string{"thread_id": pos[0], "file": *out})
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[:i+1]
		}
	}
	return "."
}

func cmdImport(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	as := fs.String("as", "", "store the thread under this id")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: import FILE [-as THREAD]")
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return err
	}
	defer f.Close()
	id, err := bundle.Import(ctx, s, f, bundle.Rename(*as))
	if err != nil {
		return err
	}
	return printJSON(w, map[string]string{"thread_id": id})
}

// listFlag is a flag that may be repeated and takes comma-separated lists.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x != "" {
			*l = append(*l, x)
		}
	}
	return nil
}

// cmdServe runs the AG-UI server until SIGINT or SIGTERM, which stop runs
// at their next step boundary and end their streams cleanly.
func cmdServe(ctx context.Context, s checkpoint.Saver, graphs []*engine.Graph, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8123", "listen address")
	var origins, hosts listFlag
	fs.Var(&origins, "allow-origin", "let pages from this origin (scheme://host[:port]) call the server; repeat or separate with commas; loopback pages are always allowed")
	fs.Var(&hosts, "allow-host", "answer requests for this host name too (besides loopback names); repeat or separate with commas")
	token := fs.String("token", os.Getenv(agui.TokenEnv), "require Authorization: Bearer TOKEN on every request (default $"+agui.TokenEnv+"); needed to listen beyond loopback")
	ttl := fs.Duration("lease-ttl", checkpoint.DefaultLeaseTTL, "how long a thread stays claimed if this process dies")
	d := agui.DefaultConnLimits
	var lim agui.ConnLimits
	fs.IntVar(&lim.MaxConns, "max-conns", d.MaxConns, "connections open at once; more wait until one closes")
	fs.DurationVar(&lim.HeaderTimeout, "header-timeout", d.HeaderTimeout, "how long a client has to send a request's headers")
	fs.DurationVar(&lim.BodyTimeout, "body-timeout", d.BodyTimeout, "how long a client has to send a request's body (a run's stream has no limit)")
	fs.DurationVar(&lim.IdleTimeout, "idle-timeout", d.IdleTimeout, "how long a kept-alive connection may wait for its next request")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, lost := watchStore(ctx, s, storeCheckInterval)
	root, err := agentServerOption(s, graphs, *ttl)
	if err != nil {
		return err
	}
	err = agui.Serve(ctx, *addr, s, graphs, agui.WithOutput(w), agui.WithAllowedOrigins(origins...),
		agui.WithAllowedHosts(hosts...), agui.WithToken(*token), agui.WithLeaseTTL(*ttl), agui.WithConnLimits(lim), root)
	if cause := lost(); cause != nil {
		return cause
	}
	return err
}

// storeCheckInterval is how often serve and worker check, while idle, that
// their store is still there (every write checks too).
var storeCheckInterval = time.Second

// watchStore returns a context canceled once s reports it is no longer
// usable (store.Checker: the SQLite file deleted or replaced), and a
// function returning that error, or nil. Stores without Check are never
// canceled.
func watchStore(ctx context.Context, s checkpoint.Saver, every time.Duration) (context.Context, func() error) {
	c, ok := s.(store.Checker)
	if !ok {
		return ctx, func() error { return nil }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var mu sync.Mutex
	var lost error
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := c.Check(ctx); err != nil && ctx.Err() == nil {
					mu.Lock()
					lost = err
					mu.Unlock()
					cancel(err)
					return
				}
			}
		}
	}()
	return ctx, func() error {
		mu.Lock()
		defer mu.Unlock()
		return lost
	}
}
