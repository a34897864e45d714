package openai

import (
	"context"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/model"
)

// DefaultEmbeddingModel is the model an Embedder calls when none is named.
const DefaultEmbeddingModel = "text-embedding-3-small"

// Embedder is a longterm.Embedder on the embeddings endpoint of OpenAI's
// API, or of a server speaking it (Ollama, vLLM, LM Studio: WithBaseURL),
// through OpenAI's SDK: the long-term store's semantic search on a real
// model. Make one with NewEmbedder; the zero value is not usable.
type Embedder struct {
	p     *Provider
	model string
	dims  int
	retry model.Retry
}

var _ longterm.Embedder = (*Embedder)(nil)

// EmbedderOption configures an Embedder.
type EmbedderOption func(*Embedder)

// WithDimensions asks the model for vectors of n dimensions (models from
// text-embedding-3 on shorten theirs); 0, the default, takes the model's.
func WithDimensions(n int) EmbedderOption { return func(e *Embedder) { e.dims = n } }

// WithEmbedRetry sets how a failed request is retried (default
// model.DefaultRetry: a rate limit or server error is tried three times,
// waiting what the server asks).
func WithEmbedRetry(r model.Retry) EmbedderOption { return func(e *Embedder) { e.retry = r } }

// NewEmbedder returns an Embedder calling name ("" for
// DefaultEmbeddingModel) with the connection options opts (WithAPIKey,
// WithBaseURL, WithHTTPClient, …; the key from $OPENAI_API_KEY otherwise)
// and eopts.
func NewEmbedder(name string, opts []Option, eopts ...EmbedderOption) *Embedder {
	if name == "" {
		name = DefaultEmbeddingModel
	}
	e := &Embedder{p: NewProvider(opts...), model: name, retry: model.DefaultRetry}
	for _, o := range eopts {
		o(e)
	}
	return e
}

// maxBatch is how many texts one request carries (the API takes at most
// 2,048 inputs).
const maxBatch = 2048

// Embed returns one vector per text, in order: a request per 2,048 texts,
// each retried as the Embedder's Retry says. An answer that does not give
// every text exactly one vector, or vectors of different lengths, is an
// error naming the model.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	dims := -1
	for lo := 0; lo < len(texts); lo += maxBatch {
		batch := texts[lo:min(lo+maxBatch, len(texts))]
		params := openai.EmbeddingNewParams{
			Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: batch},
			Model:          openai.EmbeddingModel(e.model),
			EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
		}
		if e.dims > 0 {
			params.Dimensions = param.NewOpt(int64(e.dims))
		}
		var res *openai.CreateEmbeddingResponse
		err := e.retry.Do(ctx, func() error {
			var err error
			res, err = e.p.client.Embeddings.New(ctx, params)
			if err != nil {
				return e.p.wrap(ctx, err, 0)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("embeddings of %d texts with %s: %w", len(batch), e.model, err)
		}
		seen := make([]bool, len(batch))
		for _, d := range res.Data {
			i := int(d.Index)
			if i < 0 || i >= len(batch) || seen[i] {
				return nil, fmt.Errorf("embeddings with %s: the answer has a vector for text %d of %d, or two", e.model, i, len(batch))
			}
			if dims < 0 {
				dims = len(d.Embedding)
			}
			if len(d.Embedding) != dims || dims == 0 {
				return nil, fmt.Errorf("embeddings with %s: vectors of %d and %d dimensions in one answer", e.model, dims, len(d.Embedding))
			}
			seen[i] = true
			v := make([]float32, len(d.Embedding))
			for j, x := range d.Embedding {
				v[j] = float32(x)
			}
			out[lo+i] = v
		}
		for i, ok := range seen {
			if !ok {
				return nil, fmt.Errorf("embeddings with %s: the answer has no vector for text %d of %d", e.model, i, len(batch))
			}
		}
	}
	return out, nil
}
