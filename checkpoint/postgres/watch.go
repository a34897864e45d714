package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weftstudio/weft/checkpoint"
)

var _ checkpoint.Watcher = (*Saver)(nil)

// notifyChannel is the PostgreSQL notification channel a Saver tells of its
// writes on; the payload is the schema written to, so watchers of other
// schemas ignore it.
const notifyChannel = "weft_changes"

// notifyEvery bounds how often one Saver notifies: writes in between share
// one notification, so a busy worker does not make every commit take
// PostgreSQL's notification lock.
var notifyEvery = 50 * time.Millisecond

// notifier sends the notifications of one Saver from a goroutine of its
// own, started by the first write.
type notifier struct {
	mu      sync.Mutex
	started bool
	closed  bool
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// changed tells watchers, soon, that s wrote something. It never blocks
// the write and never fails it.
func (s *Saver) changed() {
	n := &s.notify
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	if !n.started {
		n.started = true
		n.kick, n.stop, n.done = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
		go s.notifyLoop()
	}
	select {
	case n.kick <- struct{}{}:
	default: // one is pending already
	}
}

func (s *Saver) notifyLoop() {
	n := &s.notify
	defer close(n.done)
	for {
		select {
		case <-n.kick:
		case <-n.stop:
			select {
			case <-n.kick: // a write just before Close is still told
				s.sendNotify()
			default:
			}
			return
		}
		s.sendNotify()
		select {
		case <-time.After(notifyEvery):
		case <-n.stop:
			select {
			case <-n.kick:
				s.sendNotify()
			default:
			}
			return
		}
	}
}

// sendNotify sends one notification. A failure is dropped: the write it
// tells of is stored, and a watcher learns of it with the next one.
func (s *Saver) sendNotify() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, s.schema)
}

// stopNotify sends what is pending and stops the notifier; Close calls it.
func (s *Saver) stopNotify() {
	n := &s.notify
	n.mu.Lock()
	started := n.started && !n.closed
	n.closed = true
	n.mu.Unlock()
	if started {
		close(n.stop)
		<-n.done
	}
}

// Watch implements checkpoint.Watcher with LISTEN on a connection of its
// own (taken out of the pool): every Saver of this package, in any process
// on the database, notifies after its writes to the same schema (Put,
// PutWrites, deleting, pruning and copying threads). A lost connection is
// opened again every second until ctx ends, and a value is sent when it
// is back (changes may have been missed meanwhile). The channel is closed
// when ctx ends.
func (s *Saver) Watch(ctx context.Context) (<-chan struct{}, error) {
	conn, err := s.listen(ctx)
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	send := func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(ch)
		for {
			n, err := conn.WaitForNotification(ctx)
			if err == nil {
				if n.Payload == s.schema {
					send()
				}
				continue
			}
			conn.Close(context.Background())
			for {
				if ctx.Err() != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Second):
				}
				if conn, err = s.listen(ctx); err == nil {
					send()
					break
				}
			}
		}
	}()
	return ch, nil
}

// listen takes a connection out of the pool and listens on it.
func (s *Saver) listen(ctx context.Context) (*pgx.Conn, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("watch checkpoint store: %w", err)
	}
	conn := c.Hijack()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("watch checkpoint store: %w", err)
	}
	return conn, nil
}
