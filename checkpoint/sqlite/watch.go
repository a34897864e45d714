package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/weftstudio/weft/checkpoint"
)

var _ checkpoint.Watcher = (*Saver)(nil)

// watchEvery is how often Watch asks SQLite whether the file changed.
var watchEvery = 200 * time.Millisecond

// Watch implements checkpoint.Watcher. It holds a read connection of its
// own and asks it for PRAGMA data_version every 200 ms: SQLite changes that
// number whenever another connection (of this process or any other)
// commits to the file, so the check reads no table and takes microseconds.
// The channel is closed when ctx ends or the connection fails.
func (s *Saver) Watch(ctx context.Context) (<-chan struct{}, error) {
	db, err := sql.Open("sqlite", dsn(s.path, readOnlyParams))
	if err != nil {
		return nil, fmt.Errorf("watch checkpoint store %s: %w", s.path, err)
	}
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("watch checkpoint store %s: %w", s.path, s.mapErr(err))
	}
	version := func() (int64, error) {
		var v int64
		err := conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v)
		return v, err
	}
	last, err := version()
	if err != nil {
		conn.Close()
		db.Close()
		return nil, fmt.Errorf("watch checkpoint store %s: %w", s.path, s.mapErr(err))
	}
	ch := make(chan struct{}, 1)
	go func() {
		defer func() {
			conn.Close()
			db.Close()
			close(ch)
		}()
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			v, err := version()
			if err != nil {
				return
			}
			if v == last {
				continue
			}
			last = v
			select {
			case ch <- struct{}{}:
			default: // a value is waiting already
			}
		}
	}()
	return ch, nil
}
