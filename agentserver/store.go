package agentserver

// The long-term store's endpoints (PUT|GET|DELETE /store/items, POST
// /store/items/search, POST /store/namespaces), as LangGraph's server
// answers them: an item is {"namespace", "key", "value", "created_at",
// "updated_at"} (and "score" from a semantic search), a missing item is
// null, a TTL is in minutes, and namespaces are lists of labels on the
// wire and dotted in a GET's query.

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// WithLongTerm serves lt on the /store endpoints and gives it to the
// graphs compiled without a store (engine.WithStore), so their nodes and
// LangGraph's clients share one memory. Without it those endpoints answer
// 501, saying so.
func WithLongTerm(lt longterm.Store) Option { return func(h *Handler) { h.lt = lt } }

// storeRoutes adds the store's endpoints to m.
func (h *Handler) storeRoutes(m *http.ServeMux) {
	for pattern, fn := range map[string]func(longterm.Store, http.ResponseWriter, *http.Request){
		"PUT /store/items":         putItem,
		"GET /store/items":         getItem,
		"DELETE /store/items":      deleteItem,
		"POST /store/items/search": searchItems,
		"POST /store/namespaces":   listNamespaces,
	} {
		m.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			if h.lt == nil {
				fail(w, http.StatusNotImplemented, "this Weft server has no long-term store: serve a SQLite or PostgreSQL checkpoint store (they keep one), or pass agentserver.WithLongTerm")
				return
			}
			fn(h.lt, w, r)
		})
	}
}

// wireItem is an item as LangGraph's server sends it.
func wireItem(it longterm.Item) map[string]any {
	out := map[string]any{"namespace": []string(it.Namespace), "key": it.Key, "value": it.Value,
		"created_at": it.CreatedAt.UTC().Format(time.RFC3339Nano), "updated_at": it.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	if out["namespace"] == nil {
		out["namespace"] = []string{}
	}
	if it.Score != nil {
		out["score"] = *it.Score
	}
	return out
}

// storeError answers a store's refusal: the caller's mistake (a bad
// namespace, filter or value) is 422, as LangGraph's server answers one,
// anything else 500.
func storeError(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, longterm.ErrInvalid) || errors.Is(err, longterm.ErrNoEmbedder) {
		code = http.StatusUnprocessableEntity
	}
	fail(w, code, "%s: %v", what, err)
}

func putItem(lt longterm.Store, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Namespace []string        `json:"namespace"`
		Key       *string         `json:"key"`
		Value     json.RawMessage `json:"value"`
		Index     any             `json:"index"`
		TTL       *float64        `json:"ttl"`
	}
	if !decode(w, r, &body) {
		return
	}
	// A request that does not fit the endpoint's schema is 400, as
	// LangGraph's validator answers; what the store refuses (a label with
	// a ".") is 422.
	var value map[string]any
	switch {
	case body.Key == nil:
		fail(w, http.StatusBadRequest, "an item needs a key")
		return
	case json.Unmarshal(body.Value, &value) != nil || value == nil:
		fail(w, http.StatusBadRequest, "an item's value must be a JSON object, not %s", oneLineJSON(body.Value))
		return
	}
	var opts []longterm.PutOption
	if body.TTL != nil && *body.TTL > 0 {
		opts = append(opts, longterm.WithTTL(time.Duration(*body.TTL*float64(time.Minute))))
	}
	if b, ok := body.Index.(bool); ok && !b {
		opts = append(opts, longterm.NoIndex())
	}
	if err := lt.Put(r.Context(), body.Namespace, *body.Key, value, opts...); err != nil {
		storeError(w, "putting the item", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func getItem(lt longterm.Store, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !q.Has("key") {
		fail(w, http.StatusBadRequest, "GET /store/items needs ?namespace=a.b&key=K")
		return
	}
	var opts []longterm.ReadOption
	if v := q.Get("refresh_ttl"); v != "" {
		refresh, err := strconv.ParseBool(v)
		if err != nil {
			fail(w, http.StatusBadRequest, "refresh_ttl=%q: want true or false", v)
			return
		}
		if !refresh {
			opts = append(opts, longterm.NoRefresh())
		}
	}
	it, err := lt.Get(r.Context(), longterm.ParseNamespace(q.Get("namespace")), q.Get("key"), opts...)
	if err != nil {
		storeError(w, "reading the item", err)
		return
	}
	if it == nil {
		writeJSON(w, http.StatusOK, nil)
		return
	}
	writeJSON(w, http.StatusOK, wireItem(*it))
}

func deleteItem(lt longterm.Store, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Namespace []string `json:"namespace"`
		Key       *string  `json:"key"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.Key == nil {
		fail(w, http.StatusBadRequest, "deleting an item needs its namespace and key")
		return
	}
	if err := lt.Delete(r.Context(), body.Namespace, *body.Key); err != nil {
		storeError(w, "deleting the item", err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func searchItems(lt longterm.Store, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prefix     *[]string       `json:"namespace_prefix"`
		Filter     longterm.Filter `json:"filter"`
		Limit      *int            `json:"limit"`
		Offset     int             `json:"offset"`
		Query      string          `json:"query"`
		RefreshTTL *bool           `json:"refresh_ttl"`
	}
	if !decode(w, r, &body) {
		return
	}
	if body.Prefix == nil {
		fail(w, http.StatusBadRequest, "a search needs namespace_prefix (a list of labels; [] for every namespace)")
		return
	}
	q := longterm.SearchQuery{Prefix: *body.Prefix, Filter: body.Filter, Limit: 10, Offset: body.Offset, Query: body.Query,
		NoRefresh: body.RefreshTTL != nil && !*body.RefreshTTL}
	if body.Limit != nil {
		q.Limit = *body.Limit
	}
	items, err := lt.Search(r.Context(), q)
	if errors.Is(err, longterm.ErrNoEmbedder) {
		// LangGraph's server without an index ignores the query and
		// filters: so does this one, rather than fail its clients.
		q.Query = ""
		items, err = lt.Search(r.Context(), q)
	}
	if err != nil {
		storeError(w, "searching the store", err)
		return
	}
	out := make([]map[string]any, len(items))
	for i, it := range items {
		out[i] = wireItem(it)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out})
}

func listNamespaces(lt longterm.Store, w http.ResponseWriter, r *http.Request) {
	var body struct {
		Prefix   []string `json:"prefix"`
		Suffix   []string `json:"suffix"`
		MaxDepth int      `json:"max_depth"`
		Limit    int      `json:"limit"`
		Offset   int      `json:"offset"`
	}
	if !decode(w, r, &body) {
		return
	}
	spaces, err := lt.ListNamespaces(r.Context(), longterm.NamespaceQuery{Prefix: body.Prefix, Suffix: body.Suffix,
		MaxDepth: body.MaxDepth, Limit: body.Limit, Offset: body.Offset})
	if err != nil {
		storeError(w, "listing the namespaces", err)
		return
	}
	out := make([][]string, len(spaces))
	for i, ns := range spaces {
		out[i] = ns
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
}

// oneLineJSON shows a refused value briefly.
func oneLineJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "nothing"
	}
	if len(b) > 80 {
		return string(b[:80]) + "…"
	}
	return string(b)
}
