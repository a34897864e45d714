package agui_test

import (
	"context"
	"log"
	"net/http"
	"os"
	"os/signal"

	"github.com/weftstudio/weft/agui"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/examples"
)

// Mount a graph in your own server: each thread a client starts is stored
// in weft.db under its threadId, where the studio can open it.
func ExampleNewHandler() {
	st, err := store.Open(context.Background(), "weft.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	demo, err := examples.Agent(nil)
	if err != nil {
		log.Fatal(err)
	}
	h, err := agui.NewHandler(map[string]*engine.Graph{"/ag-ui/agent": demo.Graph}, agui.WithSaver(st))
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/ag-ui/", h)
	log.Fatal(http.ListenAndServe("127.0.0.1:8123", nil))
}

// Serve every demo graph at /agents/<slug> until interrupted, as
// `weft serve` does.
func ExampleServe() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	st, err := store.Open(ctx, "weft.db")
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	demos, err := examples.All(nil)
	if err != nil {
		log.Fatal(err)
	}
	var graphs []*engine.Graph
	for _, d := range demos {
		graphs = append(graphs, d.Graph)
	}
	if err := agui.Serve(ctx, "127.0.0.1:8123", st, graphs); err != nil {
		log.Fatal(err)
	}
}
