// The serve command: every graph over AG-UI.

package cli

import (
	"context"
	"flag"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

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
	root, err := agentServerOption(s, graphs, *ttl, longTermConfig(ctx))
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
