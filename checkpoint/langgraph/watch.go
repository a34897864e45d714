package langgraph

import (
	"context"
	"database/sql"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
)

// watchEvery is how often Watch looks for a change LangGraph made.
var watchEvery = 500 * time.Millisecond

// Watch tells of changes a LangGraph process makes to the store
// (checkpoint.Watcher), by polling a cheap change counter: SQLite's
// data_version on a connection of its own, PostgreSQL's row statistics of
// the saver's tables (updated by the server within about a second).
func (r *Reader) Watch(ctx context.Context) (<-chan struct{}, error) {
	probe, closeProbe, err := r.b.changeProbe(ctx)
	if err != nil {
		return nil, err
	}
	last, err := probe(ctx)
	if err != nil {
		closeProbe()
		return nil, err
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer close(ch)
		defer closeProbe()
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		failures := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			n, err := probe(ctx)
			if err != nil {
				if failures++; failures > 10 {
					return // the store went away
				}
				continue
			}
			failures = 0
			if n != last {
				last = n
				select {
				case ch <- struct{}{}:
				default: // coalesce
				}
			}
		}
	}()
	return ch, nil
}

func (s *sqliteBackend) changeProbe(ctx context.Context) (func(context.Context) (int64, error), func(), error) {
	conn, err := s.db.Conn(ctx) // data_version is per connection
	if err != nil {
		return nil, nil, err
	}
	return func(ctx context.Context) (int64, error) {
		var n int64
		err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&n)
		return n, err
	}, func() { conn.Close() }, nil
}

func (p *pgBackend) changeProbe(context.Context) (func(context.Context) (int64, error), func(), error) {
	return func(ctx context.Context) (int64, error) {
		var n sql.NullInt64
		err := p.read(ctx, func(tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT sum(n_tup_ins + n_tup_upd + n_tup_del) FROM pg_stat_user_tables
				WHERE schemaname = current_schema() AND relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes')`).Scan(&n)
		})
		return n.Int64, err
	}, func() {}, nil
}

var _ checkpoint.Watcher = (*Reader)(nil)
