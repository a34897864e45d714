// The long-term store's items: the store command (ls, get, search, put,
// delete, sweep, history).

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
			"store search [PREFIX] [-filter JSON] [-at TIME | -thread T -checkpoint ID] | store put NS KEY JSON [-ttl D] | store delete NS KEY | " +
			"store sweep | store history [PREFIX [KEY]] [-until TIME]",
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
func withKept(g *engine.Graph, s checkpoint.Saver, cfg longterm.Config) *engine.Graph {
	if g.Store() == nil {
		if lt, err := store.LongTerm(s, cfg); err == nil { // an encrypted store, or one that keeps none: nodes see no store, as compiled
			g = g.WithStore(lt)
		}
	}
	if c := store.NodeCache(s); c != nil && g.Cache() == nil {
		g = g.WithCache(c)
	}
	return g
}

// storeItem is an item as the command prints it. CreatedAt is absent for
// an item as at a past time (its history does not say).
type storeItem struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt *time.Time     `json:"created_at,omitempty"`
	UpdatedAt time.Time      `json:"updated_at"`
	ExpiresAt *time.Time     `json:"expires_at,omitempty"`
	TTL       string         `json:"ttl,omitempty"`
	WrittenBy *storeWriter   `json:"written_by,omitempty"`
}

// storeWriter is the task that wrote an item or made a change; absent
// for a change made outside a run.
type storeWriter struct {
	ThreadID     string `json:"thread_id"`
	NS           string `json:"checkpoint_ns"`
	CheckpointID string `json:"checkpoint_id"`
	Step         int    `json:"step"`
	TaskID       string `json:"task_id"`
	Node         string `json:"node"`
}

func printableWriter(w longterm.Writer) *storeWriter {
	if w.IsZero() {
		return nil
	}
	return &storeWriter{ThreadID: w.ThreadID, NS: w.NS, CheckpointID: w.CheckpointID, Step: w.Step, TaskID: w.TaskID, Node: w.Node}
}

func printable(it longterm.Item) storeItem {
	out := storeItem{Namespace: it.Namespace, Key: it.Key, Value: it.Value, UpdatedAt: it.UpdatedAt, WrittenBy: printableWriter(it.Writer)}
	if !it.CreatedAt.IsZero() {
		out.CreatedAt = &it.CreatedAt
	}
	if !it.ExpiresAt.IsZero() {
		out.ExpiresAt = &it.ExpiresAt
		out.TTL = it.TTL.String()
	}
	return out
}

// storeChange is a change as store history prints it.
type storeChange struct {
	Seq       int64          `json:"seq"`
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Op        string         `json:"op"` // "put" or "delete"
	Value     map[string]any `json:"value,omitempty"`
	At        time.Time      `json:"at"`
	TTL       string         `json:"ttl,omitempty"`
	WrittenBy *storeWriter   `json:"written_by,omitempty"`
}

func printableChange(c longterm.Change) storeChange {
	out := storeChange{Seq: c.Seq, Namespace: c.Namespace, Key: c.Key, Op: "put", Value: c.Value, At: c.At, WrittenBy: printableWriter(c.Writer)}
	if c.Deleted() {
		out.Op = "delete"
	}
	if c.TTL > 0 {
		out.TTL = c.TTL.String()
	}
	return out
}

// historyOf returns lt's history, or an error saying it keeps none.
func historyOf(lt longterm.Store) (longterm.History, error) {
	h, ok := lt.(longterm.History)
	if !ok {
		return nil, errors.New("this long-term store keeps no history of its items")
	}
	return h, nil
}

// flagTime reads the RFC 3339 time given to flag -name.
func flagTime(name, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, usagef("-%s wants a time as 2026-12-07T15:04:05Z, not %q", name, s)
	}
	return t, nil
}

// pastTime reads -at (RFC 3339), or -thread and -checkpoint (that
// checkpoint's time), for a search as at a past time; zero when none was
// given.
func pastTime(ctx context.Context, s checkpoint.Saver, at, thread, cpID string) (time.Time, error) {
	switch {
	case at != "" && (thread != "" || cpID != ""):
		return time.Time{}, usagef("give -at or -thread and -checkpoint, not both")
	case at != "":
		return flagTime("at", at)
	case thread == "" && cpID == "":
		return time.Time{}, nil
	case thread == "" || cpID == "":
		return time.Time{}, usagef("-thread and -checkpoint go together: the checkpoint of the thread to search as at")
	}
	tp, err := s.Get(ctx, checkpoint.Ref{ThreadID: thread, CheckpointID: cpID})
	if err != nil {
		return time.Time{}, err
	}
	if tp == nil {
		return time.Time{}, fmt.Errorf("thread %q has no checkpoint %q", thread, cpID)
	}
	return tp.Checkpoint.TS, nil
}

func cmdStore(ctx context.Context, s checkpoint.Saver, _ []*engine.Graph, args []string, w io.Writer) error {
	const usage = "usage: store ls|get|search|put|delete|sweep|history … (store -h)"
	if len(args) == 0 {
		return usagef("%s", usage)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("store "+sub, flag.ContinueOnError)
	var (
		suffix, filter   *string
		query            *string
		at, thread, cpID *string
		depth, limit     *int
		offset           *int
		ttl              *time.Duration
	)
	switch sub {
	case "ls":
		suffix = fs.String("suffix", "", "only namespaces ending with these labels (a.b; * matches any label)")
		depth = fs.Int("depth", 0, "cut namespaces to this many labels (0: whole)")
		limit = fs.Int("limit", longterm.DefaultNamespaceLimit, "most namespaces listed")
		offset = fs.Int("offset", 0, "namespaces skipped first")
	case "search":
		filter = fs.String("filter", "", `keep items whose values match this JSON filter, as {"kind": "note", "n": {"$gt": 2}}`)
		query = fs.String("query", "", "rank the items by similarity to this text (needs an embedder: examples/live with $WEFT_EMBEDDINGS)")
		limit = fs.Int("limit", longterm.DefaultSearchLimit, "most items listed")
		offset = fs.Int("offset", 0, "items skipped first")
		at = fs.String("at", "", "search the items as they were at this time (RFC 3339), from the store's history")
		thread = fs.String("thread", "", "with -checkpoint: search the items as they were at that checkpoint of this thread")
		cpID = fs.String("checkpoint", "", "with -thread: the checkpoint to search as at")
	case "history":
		at = fs.String("until", "", "only the changes at or before this time (RFC 3339)")
		limit = fs.Int("limit", longterm.DefaultChangeLimit, "most changes listed")
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
	lt, err := store.LongTerm(s, longTermConfig(ctx))
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
		q := longterm.SearchQuery{Limit: *limit, Offset: *offset, NoRefresh: true, Query: *query}
		if len(pos) == 1 {
			q.Prefix = longterm.ParseNamespace(pos[0])
		}
		if *filter != "" {
			if err := json.Unmarshal([]byte(*filter), &q.Filter); err != nil || q.Filter == nil {
				return usagef("-filter wants a JSON object, not %q", *filter)
			}
		}
		past, err := pastTime(ctx, s, *at, *thread, *cpID)
		if err != nil {
			return err
		}
		var items []longterm.Item
		if past.IsZero() {
			items, err = lt.Search(ctx, q)
		} else {
			items, err = searchAt(ctx, lt, q, past)
		}
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
	case "history":
		if len(pos) > 2 {
			return usagef("usage: store history [PREFIX [KEY]] [-until TIME] [-limit N]")
		}
		h, err := historyOf(lt)
		if err != nil {
			return err
		}
		q := longterm.ChangeQuery{Limit: *limit}
		if len(pos) > 0 {
			q.Prefix = longterm.ParseNamespace(pos[0])
		}
		if len(pos) > 1 {
			q.Key = pos[1]
		}
		if *at != "" {
			if q.Until, err = flagTime("until", *at); err != nil {
				return err
			}
		}
		cs, err := h.Changes(ctx, q)
		if err != nil {
			return err
		}
		out := make([]storeChange, 0, len(cs))
		for _, c := range cs {
			out = append(out, printableChange(c))
		}
		res := map[string]any{"changes": out}
		if began, err := h.HistoryBegan(ctx); err != nil {
			return err
		} else if !began.IsZero() {
			res["history_began"] = began
		}
		return printJSON(w, res)
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

// searchAt searches lt's items as they were at t (longterm.SearchAt
// refuses a time its history does not reach).
func searchAt(ctx context.Context, lt longterm.Store, q longterm.SearchQuery, t time.Time) ([]longterm.Item, error) {
	h, err := historyOf(lt)
	if err != nil {
		return nil, err
	}
	return longterm.SearchAt(ctx, h, q, t)
}
