package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/openai"
)

// embedServer is a fake embeddings endpoint speaking OpenAI's wire format:
// it answers each text with HashEmbedder's vector, data in reverse order
// (the API gives indexes), after failing with fail's statuses first.
type embedServer struct {
	mu       sync.Mutex
	requests []map[string]any
	fail     []int
	reply    func(texts []string) any // replaces the answer when set
}

func (s *embedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if r.URL.Path != "/embeddings" || r.Header.Get("Authorization") != "Bearer test-key" || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, `{"error": {"message": "bad request"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, body)
	var status int
	if len(s.fail) > 0 {
		status, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if status != 0 {
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error": {"message": "status %d, as asked"}}`, status)
		return
	}
	var texts []string
	for _, x := range body["input"].([]any) {
		texts = append(texts, x.(string))
	}
	var answer any
	if s.reply != nil {
		answer = s.reply(texts)
	} else {
		vecs, _ := longterm.HashEmbedder{Dims: 32}.Embed(r.Context(), texts)
		var data []map[string]any
		for i := len(vecs) - 1; i >= 0; i-- {
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vecs[i]})
		}
		answer = map[string]any{"object": "list", "data": data, "model": body["model"]}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answer)
}

func newEmbedder(t *testing.T, s *embedServer, eopts ...openai.EmbedderOption) *openai.Embedder {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return openai.NewEmbedder("text-embedding-3-small", []openai.Option{openai.WithBaseURL(srv.URL), openai.WithAPIKey("test-key")}, eopts...)
}

// The embedder sends OpenAI's request (model, the texts, float encoding,
// dimensions when asked), maps the answer by index, splits more than
// 2,048 texts into requests, retries a rate limit, names the model in its
// errors, and refuses an answer that does not give every text one vector.
func TestEmbedderSpeaksOpenAI(t *testing.T) {
	ctx := context.Background()
	s := &embedServer{}
	e := newEmbedder(t, s, openai.WithDimensions(32), openai.WithEmbedRetry(model.Retry{MaxAttempts: 3, Backoff: time.Millisecond}))
	got, err := e.Embed(ctx, []string{"green tea", "black coffee"})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := longterm.HashEmbedder{Dims: 32}.Embed(ctx, []string{"green tea", "black coffee"})
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("vectors %v, want %v (in the texts' order)", got, want)
	}
	req := s.requests[0]
	if req["model"] != "text-embedding-3-small" || req["encoding_format"] != "float" || req["dimensions"] != 32.0 || fmt.Sprint(req["input"]) != "[green tea black coffee]" {
		t.Errorf("request %v", req)
	}

	many := make([]string, 2050)
	for i := range many {
		many[i] = fmt.Sprintf("note %d", i)
	}
	s.requests = nil
	if got, err := e.Embed(ctx, many); err != nil || len(got) != 2050 || len(s.requests) != 2 || len(s.requests[1]["input"].([]any)) != 2 {
		t.Errorf("2,050 texts: %d vectors, %v, %d requests", len(got), err, len(s.requests))
	}

	s.requests, s.fail = nil, []int{429, 503}
	if _, err := e.Embed(ctx, []string{"x"}); err != nil || len(s.requests) != 3 {
		t.Errorf("after a 429 and a 503: %v, %d requests, want success on the third", err, len(s.requests))
	}
	s.requests, s.fail = nil, []int{400}
	_, err = e.Embed(ctx, []string{"x"})
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(err.Error(), "text-embedding-3-small") || len(s.requests) != 1 {
		t.Errorf("a 400: %v (%d requests), want one request and an error naming the model", err, len(s.requests))
	}
	s.fail = []int{429, 429, 429}
	if _, err := newEmbedder(t, s, openai.WithEmbedRetry(model.Retry{MaxAttempts: 2, Backoff: time.Millisecond})).Embed(ctx, []string{"x"}); !errors.As(err, &ae) || ae.Status != 429 {
		t.Errorf("rate limited past the retries: %v", err)
	}
	s.fail = nil

	for name, reply := range map[string]func([]string) any{
		"a vector missing": func([]string) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float64{1, 0}}}}
		},
		"two for one text": func([]string) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float64{1}}, {"index": 0, "embedding": []float64{1}}}}
		},
		"lengths differ": func([]string) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float64{1}}, {"index": 1, "embedding": []float64{1, 2}}}}
		},
	} {
		s.reply = reply
		if _, err := e.Embed(ctx, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "text-embedding-3-small") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The long-term store's semantic search runs on the embedder: items put
// with their text embedded by the endpoint, a query ranked by it.
func TestEmbedderInTheLongTermStore(t *testing.T) {
	ctx := context.Background()
	saver, err := sqlite.Open(filepath.Join(t.TempDir(), "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer saver.Close()
	lt, err := saver.LongTerm(longterm.Config{Embedder: newEmbedder(t, &embedServer{}), Fields: []string{"text"}})
	if err != nil {
		t.Fatal(err)
	}
	ns := longterm.Namespace{"users", "ada"}
	for k, text := range map[string]string{"drink": "likes green tea", "pet": "has a cat named Kelp", "sport": "swims in the sea"} {
		if err := lt.Put(ctx, ns, k, map[string]any{"text": text}); err != nil {
			t.Fatal(err)
		}
	}
	found, err := lt.Search(ctx, longterm.SearchQuery{Prefix: ns, Query: "what tea does she like", Limit: 1})
	if err != nil || len(found) != 1 || found[0].Key != "drink" || found[0].Score == nil {
		t.Fatalf("search = %+v, %v; want the tea item first", found, err)
	}
}
