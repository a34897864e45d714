package langgraph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/checkpoint/store"
)

// store.Open recognises a PostgresSaver database by its tables and opens it
// read-only, without Weft's saver creating its schema there.
func TestStoreOpensPostgres(t *testing.T) {
	ctx := context.Background()
	for name, kind := range map[string]langgraph.Kind{"py-postgres": langgraph.PythonPostgres, "js-postgres": langgraph.JSPostgres} {
		dsn := langgraph.RestoreDump(t, name)
		s, err := store.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := store.Kind(s); got != string(kind) {
			t.Errorf("%s: kind %q", name, got)
		}
		if _, err := s.Get(ctx, checkpoint.Ref{ThreadID: "chain"}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := s.DeleteThread(ctx, "chain"); !errors.Is(err, checkpoint.ErrReadOnly) {
			t.Errorf("%s: DeleteThread = %v", name, err)
		}
		s.Close()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		var weft, total int
		err = conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE table_name LIKE 'weft%'), count(*) FROM information_schema.tables WHERE table_schema = 'public'`).Scan(&weft, &total)
		conn.Close(ctx)
		if err != nil || weft != 0 || total != 4 {
			t.Errorf("%s: after opening, %d Weft tables of %d (%v); want none of LangGraph's 4", name, weft, total, err)
		}
	}
}
