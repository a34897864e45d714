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
		host := os.Getenv("OLLAMA_HOST")
		if host == "" {
			host = "localhost:11434"
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		return openai.New(openai.WithBaseURL(strings.TrimSuffix(host, "/")+"/v1"), openai.WithModel(name), openai.WithCallOptions(defaults...)), nil
	case "http", "https":
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("model %q: not a URL", spec)
		}
		name := u.Fragment
		u.Fragment = ""
		if name == "" {
			return nil, fmt.Errorf("model %q: name the model after '#', as in http://localhost:8000/v1#qwen2.5", spec)
		}
		return openai.New(openai.WithBaseURL(u.String()), openai.WithModel(name), openai.WithCallOptions(defaults...)), nil
	}
	return nil, fmt.Errorf("model %q: want openai:NAME, anthropic:NAME, ollama:NAME or an OpenAI-compatible URL with #NAME", spec)
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
