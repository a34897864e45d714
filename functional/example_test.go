package functional_test

import (
	"context"
	"fmt"

	"github.com/weftstudio/weft/checkpoint/memory"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// An entrypoint calling two tasks concurrently, stopping in one of them
// for a human, and resuming without running the finished one again.
func Example() {
	ctx := context.Background()
	research := functional.NewTask("research", func(_ context.Context, topic string) (string, error) {
		return "notes on " + topic, nil
	})
	approve := functional.NewTask("approve", func(ctx context.Context, topic string) (bool, error) {
		return engine.InterruptAs[bool](ctx, "publish "+topic+"?") // stops here until answered
	})
	wf, err := functional.Entrypoint("writer", func(ctx context.Context, topic string, prev *string) (string, error) {
		notes, ok := research.Call(ctx, topic), approve.Call(ctx, topic) // both start now
		text, err := notes.Get(ctx)
		if err != nil {
			return "", err
		}
		yes, err := ok.Get(ctx)
		if err != nil || !yes {
			return "", err
		}
		if prev != nil { // the last run's result on this thread
			text = *prev + "; " + text
		}
		return text, nil
	}, functional.WithCompile(engine.WithSaver(memory.New())))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, res, _ := wf.Invoke(ctx, "kelp", engine.WithThread("t1"))
	fmt.Println("asked:", res.Interrupts[0].Value)
	out, _, _ := wf.Resume(ctx, true, engine.WithThread("t1")) // research is not run again
	fmt.Println(out)
	_, _, _ = wf.Invoke(ctx, "otters", engine.WithThread("t1"))
	out, _, _ = wf.Resume(ctx, true, engine.WithThread("t1"))
	fmt.Println(out)
	// Output:
	// asked: publish kelp?
	// notes on kelp
	// notes on kelp; notes on otters
}
