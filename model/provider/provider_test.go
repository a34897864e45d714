package provider_test

import (
	"context"
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
