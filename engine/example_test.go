package engine_test

import (
	"context"
	"fmt"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
)

// A quick start: a graph with a typed state, a join of two parallel nodes,
// and a human approval, run on a thread with an in-memory saver.
func Example() {
	// The state: each channel is declared once, with its type and how writes
	// combine.
	topic := engine.LastValue[string]("topic")
	notes := engine.List[string]("notes")
	verdict := engine.LastValue[string]("verdict")

	research := func(angle string) engine.NodeFunc {
		return func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(notes.Add(angle + " of " + topic.Get(s))), nil
		}
	}
	g, err := engine.NewGraph("quick start", topic, notes, verdict).
		AddNode("history", research("history")).
		AddNode("ecology", research("ecology")).
		AddNode("review", func(ctx context.Context, s engine.State) (engine.Output, error) {
			// Stops the run until someone answers; returns the answer on resume.
			answer, err := engine.InterruptAs[string](ctx, fmt.Sprintf("publish %d notes?", len(notes.Get(s))))
			if err != nil {
				return nil, err
			}
			return engine.Updates(verdict.Set(answer)), nil
		}).
		AddEdge(engine.START, "history").
		AddEdge(engine.START, "ecology").
		AddJoin([]string{"history", "ecology"}, "review"). // waits for both
		AddEdge("review", engine.END).
		Compile(engine.WithSaver(memory.New()))
	if err != nil {
		fmt.Println(err)
		return
	}

	ctx := context.Background()
	res, _ := g.Invoke(ctx, engine.Values{"topic": "kelp"}, engine.WithThread("t1"))
	fmt.Println("asked:", res.Interrupts[0].Value)

	res, _ = g.Invoke(ctx, engine.Command{Resume: "yes"}, engine.WithThread("t1"))
	fmt.Println("notes:", res.Values["notes"])
	fmt.Println("verdict:", res.Values["verdict"], "done:", res.Done)

	history, _ := g.History(ctx, checkpointListAll, engine.WithThread("t1"))
	fmt.Println("checkpoints:", len(history))
	// Output:
	// asked: publish 2 notes?
	// notes: [ecology of kelp history of kelp]
	// verdict: yes done: true
	// checkpoints: 4
}
