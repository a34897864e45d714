// Package provider opens a chat model named by a one-line spec, as the
// WEFT_MODEL environment variable gives it:
//
//	openai:gpt-4.1-mini                 OpenAI ($OPENAI_API_KEY)
//	anthropic:claude-sonnet-4-6         Anthropic ($ANTHROPIC_API_KEY)
//	ollama:llama3.2                     a local Ollama ($OLLAMA_HOST, else localhost:11434)
//	http://localhost:8000/v1#qwen2.5    any OpenAI-compatible server, model after '#'
//
// Keys come from the providers' usual environment variables; an
// OpenAI-compatible URL uses $OPENAI_API_KEY when set and no key otherwise.
package provider

import (
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/anthropic"
	"github.com/weftstudio/weft/model/openai"
)

// EnvVar is the environment variable FromEnv reads.
const EnvVar = "WEFT_MODEL"

// Open returns the model spec names, with defaults applied to every call.
func Open(spec string, defaults ...model.Option) (*model.Model, error) {
	spec = strings.TrimSpace(spec)
	kind, name, _ := strings.Cut(spec, ":")
	switch kind {
	case "openai":
		if name == "" {
			return nil, fmt.Errorf("model %q: name the model, as in openai:gpt-4.1-mini", spec)
		}
		return openai.New(openai.WithModel(name), openai.WithCallOptions(defaults...)), nil
	case "anthropic":
		if name == "" {
			return nil, fmt.Errorf("model %q: name the model, as in anthropic:%s", spec, anthropic.DefaultModel)
		}
		return anthropic.New(anthropic.WithModel(name), anthropic.WithCallOptions(defaults...)), nil
	case "ollama":
		if name == "" {
			return nil, fmt.Errorf("model %q: name the model, as in ollama:llama3.2", spec)
		}
		return openai.New(openai.WithBaseURL(ollamaURL()), openai.WithModel(name), openai.WithCallOptions(defaults...)), nil
	case "http", "https":
		base, name, err := urlSpec("model", spec, "qwen2.5")
		if err != nil {
			return nil, err
		}
		return openai.New(openai.WithBaseURL(base), openai.WithModel(name), openai.WithCallOptions(defaults...)), nil
	}
	return nil, fmt.Errorf("model %q: want openai:NAME, anthropic:NAME, ollama:NAME or an OpenAI-compatible URL with #NAME", spec)
}

// ollamaURL is the OpenAI-compatible API of the Ollama $OLLAMA_HOST names
// (localhost:11434 by default).
func ollamaURL() string {
	host := os.Getenv("OLLAMA_HOST")
	if host == "" {
		host = "localhost:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return strings.TrimSuffix(host, "/") + "/v1"
}

// FromEnv opens the model $WEFT_MODEL names; nil (and no error) when it is
// unset or empty.
func FromEnv(defaults ...model.Option) (*model.Model, error) {
	spec := os.Getenv(EnvVar)
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	m, err := Open(spec, defaults...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvVar, err)
	}
	return m, nil
}

// EmbeddingsVar is the environment variable EmbedderFromEnv reads.
const EmbeddingsVar = "WEFT_EMBEDDINGS"

// OpenEmbedder returns the embeddings model spec names, for the long-term
// store's semantic search, in WEFT_MODEL's forms: openai:NAME (OpenAI,
// $OPENAI_API_KEY), ollama:NAME (a local Ollama, $OLLAMA_HOST) or an
// OpenAI-compatible URL with #NAME. Anthropic has no embeddings API.
func OpenEmbedder(spec string) (longterm.Embedder, error) {
	spec = strings.TrimSpace(spec)
	kind, name, _ := strings.Cut(spec, ":")
	switch kind {
	case "openai":
		if name == "" {
			return nil, fmt.Errorf("embeddings %q: name the model, as in openai:%s", spec, openai.DefaultEmbeddingModel)
		}
		return openai.NewEmbedder(name, nil), nil
	case "ollama":
		if name == "" {
			return nil, fmt.Errorf("embeddings %q: name the model, as in ollama:nomic-embed-text", spec)
		}
		return openai.NewEmbedder(name, []openai.Option{openai.WithBaseURL(ollamaURL())}), nil
	case "anthropic":
		return nil, fmt.Errorf("embeddings %q: Anthropic has no embeddings API; name an OpenAI, Ollama or OpenAI-compatible model", spec)
	case "http", "https":
		base, name, err := urlSpec("embeddings", spec, "bge-m3")
		if err != nil {
			return nil, err
		}
		return openai.NewEmbedder(name, []openai.Option{openai.WithBaseURL(base)}), nil
	}
	return nil, fmt.Errorf("embeddings %q: want openai:NAME, ollama:NAME or an OpenAI-compatible URL with #NAME", spec)
}

// EmbedderFromEnv opens the embeddings model $WEFT_EMBEDDINGS names; nil
// (and no error) when it is unset or empty.
func EmbedderFromEnv() (longterm.Embedder, error) {
	spec := os.Getenv(EmbeddingsVar)
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	e, err := OpenEmbedder(spec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EmbeddingsVar, err)
	}
	return e, nil
}

// urlSpec splits an OpenAI-compatible server's spec, a URL with the model
// after '#', into the base URL and the model's name; what ("model",
// "embeddings") and example (a model name) word its errors.
func urlSpec(what, spec, example string) (base, name string, err error) {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("%s %q: not a URL", what, spec)
	}
	name, u.Fragment = u.Fragment, ""
	if name == "" {
		return "", "", fmt.Errorf("%s %q: name the model after '#', as in http://localhost:8000/v1#%s", what, spec, example)
	}
	return u.String(), name, nil
}
