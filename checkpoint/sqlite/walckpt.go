package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// SQLite folds its write-ahead log into the database file in a checkpoint,
// and by default the commit that takes the log past 1,000 pages runs one
// itself: it copies the pages and syncs the file, and the run waiting for
// that commit waits for the disk. Here a goroutine with a connection of its
// own runs a PASSIVE checkpoint (one that never blocks the writer or
// readers) shortly after writes, so commits only append. A PASSIVE
// checkpoint cannot fold in pages appended while it runs, and the log
// starts over only once everything in it was folded in; under writes that
// never pause, the writer's own checkpoint at 4,000 pages (writerParams'
// wal_autocheckpoint, four times SQLite's default) bounds the log. SQLite
// refuses a checkpoint while another runs (busy), so Vacuum, whose
// checkpoint must empty the log, tries again while one of these runs.
const (
	// walDelay gathers the commits of a burst into one checkpoint.
	walDelay = 20 * time.Millisecond
	// walParams are the checkpointer's: synchronous NORMAL makes a
	// checkpoint sync the log before copying it and the file after, as the
	// writer's own checkpoints do, so nothing committed is lost to a crash.
	walParams = "_pragma=busy_timeout(0)&_pragma=trusted_schema(0)&_pragma=synchronous(NORMAL)"
)

// walCheckpointer runs the background checkpoints of one store. The zero
// value is unusable; see startWAL.
type walCheckpointer struct {
	db   *sql.DB
	kick chan struct{} // capacity 1: a commit happened since the last look
	stop chan struct{}
	done chan struct{}
	once sync.Once
	err  error // run's failure, read once done is closed; close reports it
}

// startWAL starts the checkpointer of the store at path.
func startWAL(path string) (*walCheckpointer, error) {
	db, err := sql.Open("sqlite", dsn(path, walParams))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	c := &walCheckpointer{db: db, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c, nil
}

// committed tells the checkpointer the writer committed. It never blocks.
func (c *walCheckpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *walCheckpointer) run() {
	defer close(c.done)
	t := time.NewTimer(walDelay)
	t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		t.Reset(walDelay)
		select {
		case <-c.stop:
			t.Stop()
			return
		case <-t.C:
		}
		var busy, logged, moved int
		if err := c.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logged, &moved); err != nil {
			// The writer's own checkpoints still bound the log.
			c.err = fmt.Errorf("background WAL checkpoint: %w", err)
			return
		}
	}
}

// close stops the checkpointer and returns its failure, if any; later
// calls return nil (Saver.Close may run twice).
func (c *walCheckpointer) close() error {
	if c == nil {
		return nil
	}
	var err error
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		err = errors.Join(c.err, c.db.Close())
	})
	return err
}
