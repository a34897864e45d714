package cli_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
)

// The bank graph: node "approve" asks for approval (an interrupt), then
// moves money, a side effect outside the store: one line appended to the
// file named by ledgerFileVar. Running it twice for one answer is the bug
// leases prevent. "audit" runs after it.
var (
	bankLedger = engine.List[string]("ledger")
	bankAmount = engine.LastValue[int]("amount")
)

// Environment of the bank graph's side effect.
const (
	ledgerFileVar = "WEFT_TEST_LEDGER_FILE" // append a line per transfer here; unset: no side effect
	slowVar       = "WEFT_TEST_SLOW"        // a duration the transfer takes (default 0)
)

func bankGraph(t testing.TB) *engine.Graph {
	g, err := engine.NewGraph("bank", bankLedger, bankAmount).
		AddNode("approve", func(ctx context.Context, s engine.State) (engine.Output, error) {
			if bankAmount.Get(s) < 0 {
				return nil, fmt.Errorf("cannot move %d", bankAmount.Get(s))
			}
			v, err := engine.Interrupt(ctx, map[string]any{"question": fmt.Sprintf("move %d?", bankAmount.Get(s))})
			if err != nil {
				return nil, err
			}
			if v != "approve" {
				return engine.Updates(bankLedger.Add(fmt.Sprintf("refused: %v", v))), nil
			}
			if err := transfer(ctx); err != nil {
				return nil, err
			}
			return engine.Updates(bankLedger.Add(fmt.Sprintf("moved %d", bankAmount.Get(s)))), nil
		}).
		AddNode("audit", func(_ context.Context, s engine.State) (engine.Output, error) {
			return engine.Updates(bankLedger.Add(fmt.Sprintf("audited %d entries", len(bankLedger.Get(s))))), nil
		}).
		AddEdge(engine.START, "approve").AddEdge("approve", "audit").
		Compile()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// transfer is the side effect: one line in the ledger file, then the time
// a real transfer takes.
func transfer(ctx context.Context) error {
	if path := os.Getenv(ledgerFileVar); path != "" {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(f, "transfer by pid %d\n", os.Getpid())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if d, err := time.ParseDuration(os.Getenv(slowVar)); err == nil {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
