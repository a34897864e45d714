package agent_test

import (
	"context"
	"log"

	"github.com/weftstudio/weft/agent"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model/openai"
	"github.com/weftstudio/weft/tool"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

// WeatherArgs are the get_weather tool's arguments: its JSON Schema comes
// from this struct.
type WeatherArgs struct {
	City  string `json:"city" jsonschema:"description=City name"`
	Units string `json:"units,omitempty" jsonschema:"enum=metric,enum=imperial"`
}

// A complete main package: a tool-calling agent on OpenAI (OPENAI_API_KEY),
// opened in the studio, where its tokens stream as it runs and every model
// and tool call stays with its checkpoint.
func Example() {
	weather := tool.Must(tool.New("get_weather", "Current weather in a city.",
		func(ctx context.Context, a WeatherArgs) (string, error) {
			return "18°C and sunny in " + a.City, nil // call a real weather API here
		}))
	transfer := tool.Must(tool.New("send_money", "Sends money to someone.",
		func(ctx context.Context, a struct {
			To     string `json:"to"`
			Amount int    `json:"amount" jsonschema:"minimum=1"`
		}) (string, error) {
			return "sent", nil
		}))
	m := openai.New(openai.WithModel("gpt-4.1-mini"))
	g, err := agent.New(m, []tool.Tool{weather, transfer},
		agent.WithSystemPrompt("You are a helpful assistant."),
		agent.WithApproval("send_money")) // asks a human before each transfer
	if err != nil {
		log.Fatal(err)
	}
	err = ui.Run(studio.Graph{Graph: g, Description: "A weather agent.",
		Example: engine.Values{"messages": []engine.Message{{Role: engine.RoleUser, Content: "Weather in Paris?"}}}})
	if err != nil {
		log.Fatal(err)
	}
}
