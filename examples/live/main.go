// Command live is weft with the demos' tool agent on a real chat model:
// the one $WEFT_MODEL names (package model/provider lists the forms).
// Everything else is the weft command's: the window, or a headless command
// as first argument.
//
//	WEFT_MODEL=openai:gpt-4.1-mini go run ./examples/live
//	WEFT_MODEL=ollama:llama3.2 go run ./examples/live serve
//
// $WEFT_EMBEDDINGS (openai:text-embedding-3-small, ollama:nomic-embed-text,
// an OpenAI-compatible URL#MODEL) gives the store's long-term items
// semantic search: weft store search -query, the long-term store window,
// the Agent Server's store search with a query.
//
// It is a program of its own so that the weft binary links no provider
// SDK: those are what make this one twice its size.
package main

import (
	"fmt"
	"os"

	"github.com/weftstudio/weft/cli"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
	_ "github.com/weftstudio/weft/internal/early" // before Graphviz and Fyne initialise: see its doc
	"github.com/weftstudio/weft/model/provider"
	"github.com/weftstudio/weft/ui"
	"github.com/weftstudio/weft/ui/studio"
)

func main() {
	m, err := provider.FromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(2)
	}
	if m == nil {
		fmt.Fprintf(os.Stderr, "live: set %s to the model the agent runs on, as in %s=openai:gpt-4.1-mini (plain weft runs it on its scripted model)\n", provider.EnvVar, provider.EnvVar)
		os.Exit(2)
	}
	emb, err := provider.EmbedderFromEnv() // the long-term store's semantic search, when set
	if err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(2)
	}
	demos, err := examples.AllFromEnv(nil, examples.WithAgentModel(m))
	if err != nil {
		fmt.Fprintln(os.Stderr, "live:", err)
		os.Exit(1)
	}
	var graphs []*engine.Graph
	var shown []studio.Graph
	for _, d := range demos {
		graphs = append(graphs, d.Graph)
		shown = append(shown, studio.Graph{Graph: d.Graph, Description: d.Description, Example: d.Example})
	}
	os.Exit(cli.Main(cli.Env{Graphs: graphs, Embedder: emb}, func() error { return ui.RunFrom(ui.Options{Embedder: emb}, shown...) }))
}
