package studio

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weftstudio/weft/engine"
)

// following is the run started elsewhere that the window follows, on the
// selected thread of a server's graph; the zero value follows none.
type following struct {
	thread string
	cancel context.CancelFunc
}

// followIfBusy follows the run on sc's thread when the thread list, just
// read, says the store has one in progress there (threadRow.Busy), and
// lights what it runs: the listing is where the window learns of runs
// started elsewhere, so an idle thread costs no question to the server.
func (s *Studio) followIfBusy(sc *scope) {
	i := slices.IndexFunc(s.m.threads, func(r threadRow) bool { return r.ID == sc.thread })
	if i < 0 || !s.m.threads[i].Busy {
		return
	}
	s.followRun(sc)
	s.markFollowed(sc)
}

// followRun follows the run in progress on sc's thread when the graph is
// a server's (engine.ViewFollows) and the run is somebody else's (another
// client, a background run): its events reach the event log and the
// graph's live tasks as the window's own runs' do, and the thread is read
// again at each node's update, so the timeline grows as the run goes
// instead of at the store's next poll. Esc cancels the followed run.
func (s *Studio) followRun(sc *scope) {
	g := s.m.graph().Graph
	if g == nil || !g.ViewFollows() || s.m.run.Going || sc.thread == "" || s.follow.thread == sc.thread {
		return
	}
	s.stopFollowing()
	ctx, cancel := context.WithCancel(context.Background())
	thread := sc.thread
	s.follow = following{thread: thread, cancel: cancel}
	obs := &runObserver{s: s, sc: sc, follow: true}
	s.m.setFollowed(sc, true)
	goBG(s.sess, func() (int, error) {
		return g.FollowView(ctx, thread, obs.observe)
	}, func(dropped int, err error) {
		if s.follow.thread == thread {
			s.follow = following{}
		}
		cancel()
		s.m.update(func() {
			obs.flush()
			if s.m.run.Going {
				sc.followed = false // the window's own run took over: its live tasks stay
			} else {
				s.m.setFollowed(sc, false)
			}
			if sc.status == followStatus {
				s.m.setStatus(sc, "") // the state read next says where it stopped
			}
		})
		switch {
		case errors.Is(err, engine.ErrNoRun), errors.Is(err, context.Canceled):
			if !obs.seen {
				return // nothing ran, or the user moved on before it showed
			}
		case err != nil:
			s.m.setStatus(sc, "not followed")
			if sc == s.m.sc {
				s.showError("Following the run started elsewhere", err)
			}
			return
		}
		if dropped > 0 {
			s.flash(fmt.Sprintf("%d of the followed run's events came too fast to show; its checkpoints are all in the timeline", dropped))
		}
		s.refresh() // the run's end: its last checkpoint and status
	})
}

// markFollowed lights the nodes a followed run is running when the graph
// shows none yet: the nodes next at the head of a thread the store calls
// busy (followIfBusy). The stream is joined from now on, so their starts
// are past and no event would light them before they end.
func (s *Studio) markFollowed(sc *scope) {
	if !sc.followed || len(sc.live) > 0 || sc.view == nil || !sc.atHead() {
		return
	}
	for _, n := range sc.view.Snap.Next {
		s.m.taskMoved(sc, nodeID("", n), true)
	}
	s.m.setStatus(sc, followStatus)
}

// followStatus is the status line's word for a followed run.
const followStatus = "running elsewhere (Esc cancels it)"

// stopFollowing stops following the run started elsewhere, leaving it
// running where it runs.
func (s *Studio) stopFollowing() {
	if s.follow.cancel != nil {
		s.follow.cancel()
	}
	s.follow = following{}
}

// cancelFollowed cancels, where it runs, the run started elsewhere that
// the window follows; false when it follows none.
func (s *Studio) cancelFollowed() bool {
	thread := s.follow.thread
	g := s.m.graph().Graph
	if thread == "" || g == nil {
		return false
	}
	s.flash("Cancelling the run on the server…")
	goBG(s.sess, func() (struct{}, error) {
		return struct{}{}, g.CancelView(context.Background(), thread)
	}, func(_ struct{}, err error) {
		if err != nil && !errors.Is(err, engine.ErrNoRun) {
			s.showError("Cancelling the run on the server", err)
			return
		}
		s.refresh()
	})
	return true
}
