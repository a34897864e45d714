package eino_test

import (
	"context"
	"testing"

	einoopenai "github.com/cloudwego/eino-ext/components/model/openai"

	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/eino"
	"github.com/weftstudio/weft/model/modeltest"
)

// Eino's OpenAI model (eino-ext) against the fake OpenAI server: the
// adapter passes the conformance suite on a real Eino model speaking the
// real wire.
func TestConformance(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Wire:              modeltest.OpenAI{},
		NoFileAttachments: true,
		New: func(url string) model.ChatModel {
			cm, err := einoopenai.NewChatModel(context.Background(), &einoopenai.ChatModelConfig{APIKey: "test-key", BaseURL: url, Model: "fake-model-1"})
			if err != nil {
				t.Fatal(err)
			}
			return eino.New(cm, eino.WithModelName("fake-model-1"))
		},
		NoResponseID:     true,
		NoResponseFormat: true,
		NoRetryAfter:     true,
	})
}
