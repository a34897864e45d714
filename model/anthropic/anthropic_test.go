package anthropic_test

import (
	"testing"

	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/model/anthropic"
	"github.com/weftstudio/weft/model/modeltest"
)

func TestConformance(t *testing.T) {
	modeltest.Run(t, modeltest.Harness{
		Wire: modeltest.Anthropic{},
		New: func(url string) model.ChatModel {
			return anthropic.New(anthropic.WithBaseURL(url), anthropic.WithAPIKey("test-key"))
		},
	})
}
