// The long-term store's items: the store command (ls, get, search, put,
// delete).

package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
)

func init() {
	builtins["store"] = Command{
		Summary: "the long-term store's items (namespaces as a.b.c): store ls [PREFIX] [-suffix S] [-depth N] | store get NS KEY | " +
			"store search [PREFIX] [-filter JSON] | store put NS KEY JSON [-ttl D] | store delete NS KEY | store sweep",
		Run: cmdStore,
		ReadOnlyFor: func(args []string) bool {
			return len(args) == 0 || (args[0] != "put" && args[0] != "delete" && args[0] != "sweep")
		},
	}
}

// withKept gives g the long-term store and the node cache kept in s, for
// those g was compiled without: graphs the commands run (run, resume,
// worker, serve) find their memories and cached writes in the same file or
// database as their checkpoints.
func withKept(g *engine.Graph, s checkpoint.Saver) *engine.Graph {
	if g.Store() == nil {
		if lt, err := store.LongTerm(s); err == nil { // an encrypted store, or one that keeps none: nodes see no store, as compiled
			g = g.WithStore(lt)
		}
	}
	if c := store.NodeCache(s); c != nil && g.Cache() == nil {
		g = g.WithCache(c)
	}
	return g
}

// storeItem is an item as the command prints it.
type storeItem struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	ExpiresAt *time.Time     `json:"expires_at,omitempty"`
	TTL       string         `json:"ttl,omitempty"`
}

func printable(it longterm.Item) storeItem {
	out := storeItem{Namespace: it.Namespace, Key: it.Key, Value: it.Value, CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt}
	if !it.ExpiresAt.IsZero() {
		out.ExpiresAt = &it.ExpiresAt
		out.TTL = it.TTL.String()
	}
	return out
}

func cmdStore(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	const usage = "usage: store ls|get|search|put|delete|sweep … (store -h)"
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("store "+sub, flag.ContinueOnError)
	var (
		suffix, filter *string
		depth, limit   *int
		offset         *int
		ttl            *time.Duration
	)
	switch sub {
	case "ls":
		suffix = fs.String("suffix", "", "only namespaces ending with these labels (a.b; * matches any label)")
		depth = fs.Int("depth", 0, "cut namespaces to this many labels (0: whole)")
		limit = fs.Int("limit", longterm.DefaultNamespaceLimit, "most namespaces listed")
		offset = fs.Int("offset", 0, "namespaces skipped first")
	case "search":
		filter = fs.String("filter", "", `keep items whose values match this JSON filter, as {"kind": "note", "n": {"$gt": 2}}`)
		limit = fs.Int("limit", longterm.DefaultSearchLimit, "most items listed")
		offset = fs.Int("offset", 0, "items skipped first")
	case "put":
		ttl = fs.Duration("ttl", 0, "the item expires this long after its last write or read (0: never)")
	case "get", "delete", "sweep":
	case "-h", "-help", "--help":
		return usagef("%s", usage)
	default:
		return usagef("unknown store subcommand %q: %s", sub, usage)
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	lt, err := store.LongTerm(s)
	if err != nil {
		return err
	}
	want := func(n int, form string) error {
		if len(pos) != n {
			return usagef("usage: store %s %s", sub, form)
		}
		return nil
	}
	switch sub {
	case "ls":
		if len(pos) > 1 {
			return usagef("usage: store ls [PREFIX] [-suffix S] [-depth N]")
		}
		q := longterm.NamespaceQuery{Suffix: longterm.ParseNamespace(*suffix), MaxDepth: *depth, Limit: *limit, Offset: *offset}
		if len(pos) == 1 {
			q.Prefix = longterm.ParseNamespace(pos[0])
		}
		nss, err := lt.ListNamespaces(ctx, q)
		if err != nil {
			return err
		}
		out := make([][]string, 0, len(nss))
		for _, ns := range nss {
			out = append(out, ns)
		}
		return printJSON(w, map[string]any{"namespaces": out})
	case "get":
		if err := want(2, "NS KEY"); err != nil {
			return err
		}
		// Reading from the command line is inspection: it leaves TTLs be.
		it, err := lt.Get(ctx, longterm.ParseNamespace(pos[0]), pos[1], longterm.NoRefresh())
		if err != nil {
			return err
		}
		if it == nil {
			return fmt.Errorf("no item %q in namespace %q", pos[1], pos[0])
		}
		return printJSON(w, printable(*it))
	case "search":
		if len(pos) > 1 {
			return usagef("usage: store search [PREFIX] [-filter JSON] [-limit N] [-offset N]")
		}
		q := longterm.SearchQuery{Limit: *limit, Offset: *offset, NoRefresh: true}
		if len(pos) == 1 {
			q.Prefix = longterm.ParseNamespace(pos[0])
		}
		if *filter != "" {
			if err := json.Unmarshal([]byte(*filter), &q.Filter); err != nil || q.Filter == nil {
				return usagef("-filter wants a JSON object, not %q", *filter)
			}
		}
		items, err := lt.Search(ctx, q)
		if err != nil {
			return err
		}
		out := make([]storeItem, 0, len(items))
		for _, it := range items {
			out = append(out, printable(it))
		}
		return printJSON(w, map[string]any{"items": out})
	case "put":
		if err := want(3, "NS KEY JSON [-ttl D]"); err != nil {
			return err
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(pos[2]), &v); err != nil || v == nil {
			return usagef("the value must be a JSON object, not %q", pos[2])
		}
		var opts []longterm.PutOption
		if *ttl < 0 {
			return usagef("-ttl must not be negative")
		}
		if *ttl > 0 {
			opts = append(opts, longterm.WithTTL(*ttl))
		}
		ns := longterm.ParseNamespace(pos[0])
		if err := lt.Put(ctx, ns, pos[1], v, opts...); err != nil {
			return err
		}
		it, err := lt.Get(ctx, ns, pos[1], longterm.NoRefresh())
		if err != nil {
			return err
		}
		if it == nil { // a TTL shorter than the way back
			return printJSON(w, map[string]any{"namespace": ns, "key": pos[1], "value": v, "expired": true})
		}
		return printJSON(w, printable(*it))
	case "delete":
		if err := want(2, "NS KEY"); err != nil {
			return err
		}
		ns := longterm.ParseNamespace(pos[0])
		it, err := lt.Get(ctx, ns, pos[1], longterm.NoRefresh())
		if err != nil {
			return err
		}
		if err := lt.Delete(ctx, ns, pos[1]); err != nil {
			return err
		}
		return printJSON(w, map[string]any{"deleted": it != nil, "namespace": ns, "key": pos[1]})
	case "sweep":
		if err := want(0, ""); err != nil {
			return err
		}
		sw, ok := lt.(longterm.Sweeper)
		if !ok {
			return errors.New("this store's long-term items cannot be swept")
		}
		n, err := sw.Sweep(ctx)
		if err != nil {
			return err
		}
		return printJSON(w, map[string]any{"swept": n})
	}
	return nil
}
