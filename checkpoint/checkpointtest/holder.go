package checkpointtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/proc"
)

// Leases whose holder was a process of this machine: one that ended is
// dead at once; a live one, or one on another machine, is waited out.
func holderCases() []testCase {
	cs := []testCase{
		{name: "ended_holder_taken_over_at_once", run: holderEnded},
		{name: "live_holder_waited_out", run: holderLive},
		{name: "remote_holder_waited_out", run: holderRemote},
		{name: "hold_over_ended_holder_keeps_it", run: holderHold},
		{name: "ended_holder_has_no_run_to_stop", run: holderStop},
		{name: "killed_hold_leaves_the_dead_run_only", run: holderKilledHold},
	}
	for i := range cs {
		cs[i].needs = func(s checkpoint.Saver) bool { return leaser(s) && sharedStore(s) }
		cs[i].capability = "checkpoint.Leaser on a store shared between processes"
	}
	return cs
}

// child starts a process of this machine and returns its identity as a
// lease holder, and a func that kills it and waits for it to end.
func child(t *testing.T) (id string, pid int, kill func()) {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting a process to hold a lease: %v", err)
	}
	pid = cmd.Process.Pid
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatalf("reading the start time of pid %d: %v", pid, err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	done := false
	kill = func() {
		if !done {
			done = true
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	t.Cleanup(kill)
	return proc.Identity(pid, f[19]), pid, kill
}

// heldBy acquires thread's lease as the process id names, for an hour.
func heldBy(t *testing.T, l checkpoint.Leaser, thread, id string, pid int) checkpoint.Lease {
	t.Helper()
	lease, err := l.AcquireLease(proc.WithSelf(t.Context(), id), thread, fmt.Sprintf("here pid %d (weft worker)", pid), time.Hour)
	if err != nil {
		t.Fatalf("AcquireLease as pid %d: %v", pid, err)
	}
	return lease
}

func expectEnded(t *testing.T, l checkpoint.Leaser, thread string, lease checkpoint.Lease, pid int) {
	t.Helper()
	got := leasesOf(t, l, thread)
	want := fmt.Sprintf("the run by pid %d on this host ended without finishing", pid)
	if len(got) != 1 || got[0].Token != lease.Token || !got[0].Expired || got[0].Ended != want {
		t.Fatalf("Leases(%q) = %+v, want the lease of pid %d, Expired, Ended %q", thread, got, pid, want)
	}
}

func holderEnded(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("holder")
	id, pid, kill := child(t)
	lease := heldBy(t, l, th, id, pid)
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Expired || got[0].Ended != "" {
		t.Fatalf("while pid %d lives, Leases = %+v, want its live lease", pid, got)
	}
	kill()
	expectEnded(t, l, th, lease, pid)
	heir := mustAcquire(t, l, th, "heir", time.Minute) // an hour before the lease lapses
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Token != heir.Token || got[0].Expired {
		t.Fatalf("after the takeover, Leases = %+v, want the heir's", got)
	}
}

func holderLive(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("holder")
	id, pid, _ := child(t)
	heldBy(t, l, th, id, pid)
	_, err := l.AcquireLease(t.Context(), th, "heir", time.Minute)
	expectHeld(t, err, th, fmt.Sprintf("here pid %d (weft worker)", pid))
}

// A holder on another machine whose pid does not exist here is waited out.
func holderRemote(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("holder")
	id, pid, kill := child(t)
	kill()
	remote := "elsewhere" + id[strings.IndexByte(id, '\t'):]
	heldBy(t, l, th, remote, pid)
	if got := leasesOf(t, l, th); len(got) != 1 || got[0].Expired || got[0].Ended != "" {
		t.Fatalf("a remote holder's lease: %+v, want it live", got)
	}
	_, err := l.AcquireLease(t.Context(), th, "heir", time.Minute)
	expectHeld(t, err, th, fmt.Sprintf("here pid %d (weft worker)", pid))
}

// A prune's hold takes over a lease whose holder ended, and puts it back,
// still seen as ended.
func holderHold(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("holder")
	id, pid, kill := child(t)
	lease := heldBy(t, l, th, id, pid)
	kill()
	hold, err := l.HoldLease(t.Context(), th, "pruner", time.Minute)
	if err != nil || hold.TookOver == nil || hold.TookOver.Token != lease.Token {
		t.Fatalf("HoldLease over an ended holder = %+v, %v; want it taken over", hold, err)
	}
	if err := l.ReleaseLease(t.Context(), hold); err != nil {
		t.Fatal(err)
	}
	expectEnded(t, l, th, lease, pid)
}

func holderStop(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	th := newThread("holder")
	id, pid, kill := child(t)
	heldBy(t, l, th, id, pid)
	kill()
	if _, err := l.StopLease(t.Context(), th, "ops"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Fatalf("StopLease of a run whose process ended: %v, want ErrNotFound (no run to stop)", err)
	}
}

// A hold whose holder was killed (it lapses unreleased) was no run: it
// leaves the dead run it took over, or nothing.
func holderKilledHold(t *testing.T, s checkpoint.Saver) {
	l := s.(checkpoint.Leaser)
	died, free := newThread("holder"), newThread("holder")
	dead := lapsed(t, l, died, "desk pid 1 (weft worker)")
	for _, th := range []string{died, free} {
		if _, err := l.HoldLease(t.Context(), th, "pruner", shortTTL); err != nil {
			t.Fatalf("HoldLease(%s): %v", th, err)
		}
	}
	time.Sleep(2 * shortTTL) // the holds lapse, as a killed prune's do
	expectDeadRun(t, l, died, dead)
	if got := leasesOf(t, l, free); len(got) != 0 {
		t.Fatalf("a killed hold of a free thread left %+v, want nothing", got)
	}
	// The next hold still finds the dead run, and puts it back.
	hold, err := l.HoldLease(t.Context(), died, "pruner", time.Minute)
	if err != nil || hold.TookOver == nil || hold.TookOver.Token != dead.Token {
		t.Fatalf("HoldLease after a killed hold = %+v, %v; want it to take over %+v", hold, err, dead)
	}
	if err := l.ReleaseLease(t.Context(), hold); err != nil {
		t.Fatal(err)
	}
	expectDeadRun(t, l, died, dead)
	mustAcquire(t, l, free, "run", time.Minute)
}
