package provider_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model/modeltest"
	"github.com/weftstudio/weft/model/provider"
)

func TestOpen(t *testing.T) {
	for spec, want := range map[string]string{
		"openai:gpt-4.1-mini":         "openai",
		"anthropic:claude-sonnet-4-6": "anthropic",
		"ollama:llama3.2":             "openai",
		"http://localhost:8000/v1#q":  "openai",
	} {
		m, err := provider.Open(spec)
		if err != nil || m.Provider().Name() != want {
			t.Errorf("%s: %v", spec, err)
		}
	}
	for _, bad := range []string{"", "openai:", "gemini:x", "http://localhost:8000/v1", "anthropic"} {
		if _, err := provider.Open(bad); err == nil {
			t.Errorf("%q opened", bad)
		}
	}
	t.Setenv(provider.EnvVar, "")
	if m, err := provider.FromEnv(); m != nil || err != nil {
		t.Errorf("unset: %v, %v", m, err)
	}
	t.Setenv(provider.EnvVar, "nonsense")
	if _, err := provider.FromEnv(); err == nil || !strings.Contains(err.Error(), "WEFT_MODEL") {
		t.Errorf("bad spec: %v", err)
	}
}

// An OpenAI-compatible URL reaches that server with the model named after '#'.
func TestCompatibleURL(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.OpenAI{}, modeltest.Response{Reply: modeltest.TextReply})
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv(provider.EnvVar, srv.URL+"/v1#llama3.2")
	m, err := provider.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Generate(context.Background(), []engine.Message{{Role: engine.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	seen, _ := modeltest.OpenAI{}.Decode(r.Body)
	if r.Path != "/v1/chat/completions" || seen.Model != "llama3.2" || r.Header.Get("Authorization") != "" {
		t.Errorf("path %s, model %s, auth %q", r.Path, seen.Model, r.Header.Get("Authorization"))
	}
}

// An embeddings spec opens OpenAI's, Ollama's or a compatible server's
// embeddings: an Ollama one reaches $OLLAMA_HOST's /v1/embeddings with the
// model named; bad specs (Anthropic has no embeddings API) are refused,
// and $WEFT_EMBEDDINGS unset opens none.
func TestOpenEmbedder(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&got) != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"data": [{"index": 0, "embedding": [0.6, 0.8]}]}`)
	}))
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL)
	t.Setenv("OPENAI_API_KEY", "")
	e, err := provider.OpenEmbedder("ollama:nomic-embed-text")
	if err != nil {
		t.Fatal(err)
	}
	vecs, err := e.Embed(context.Background(), []string{"kelp"})
	if err != nil || len(vecs) != 1 || vecs[0][1] != 0.8 || got["model"] != "nomic-embed-text" {
		t.Errorf("ollama embeddings: %v, %v (request %v)", vecs, err, got)
	}
	for _, ok := range []string{"openai:text-embedding-3-small", "http://localhost:8000/v1#bge-m3"} {
		if _, err := provider.OpenEmbedder(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "openai:", "anthropic:claude-sonnet-4-6", "http://localhost:8000/v1", "gemini:x"} {
		if _, err := provider.OpenEmbedder(bad); err == nil {
			t.Errorf("%q opened", bad)
		}
	}
	t.Setenv(provider.EmbeddingsVar, "")
	if e, err := provider.EmbedderFromEnv(); e != nil || err != nil {
		t.Errorf("unset: %v, %v", e, err)
	}
	t.Setenv(provider.EmbeddingsVar, "anthropic:x")
	if _, err := provider.EmbedderFromEnv(); err == nil || !strings.Contains(err.Error(), "WEFT_EMBEDDINGS") || !strings.Contains(err.Error(), "no embeddings API") {
		t.Errorf("bad spec: %v", err)
	}
}
