package openai_test

import (
	"testing"

	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/modeltest"
	"github.com/weftstudio/weft/model/openai"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Wire: modeltest.OpenAI{},
		New: func(url string) model.ChatModel {
			return openai.New(openai.WithBaseURL(url), openai.WithAPIKey("test-key"))
		},
	})
}
