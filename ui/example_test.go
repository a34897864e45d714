package ui_test

import (
	"context"
	"log"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

// The channels of a tiny graph: a name in, a greeting out.
var (
	Name     = engine.LastValue[string]("name")
	Greeting = engine.LastValue[string]("greeting")
)

// A complete main package that opens the studio on your own graph. Put
// this body in func main and run it with `go run .` (state goes to weft.db
// in the working directory; `go run . -db other.db` picks another file).
func Example() {
	g, err := engine.NewGraph("greeter", Name, Greeting).
		AddNode("greet", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(Greeting.Set("Hello, " + Name.Get(s) + "!")), nil
		}).
		AddEdge(engine.START, "greet").
		AddEdge("greet", engine.END).
		Compile()
	if err != nil {
		log.Fatal(err)
	}
	err = ui.Run(studio.Graph{
		Graph:       g,
		Description: "Says hello.",
		Example:     engine.Values{"name": "Ada"},
	})
	if err != nil {
		log.Fatal(err)
	}
}
