// Package proc identifies the process holding a lease well enough to tell,
// from another process on the same machine, that it has ended: a lease
// whose holder is gone need not be waited out.
//
// An identity is "host\tboot\tpidns\tpid\tstart": the host name, the
// kernel's boot id, the pid namespace, the pid and the process's start
// time in clock ticks since boot. The boot id and the pid namespace keep a
// pid from another boot or container from being taken for one here; the
// start time keeps a pid reused by a newer process from being taken for
// the holder.
package proc

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Self is this process's identity ("" when it cannot be told: then no
// other process ever takes it for dead).
var Self = sync.OnceValue(func() string {
	start := startTime(os.Getpid())
	if hostname() == "" || start == "" || bootID() == "" || pidNS() == "" {
		return ""
	}
	return Identity(os.Getpid(), start)
})

type selfKey struct{}

// WithSelf returns ctx under which Of says id: tests use it to write a
// lease as another process would.
func WithSelf(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, selfKey{}, id)
}

// Of returns the identity a saver records for the holder of a lease taken
// under ctx: Self, unless WithSelf says otherwise.
func Of(ctx context.Context) string {
	if id, ok := ctx.Value(selfKey{}).(string); ok {
		return id
	}
	return Self()
}

// Identity builds an identity of pid on this machine, started at start.
func Identity(pid int, start string) string {
	return strings.Join([]string{hostname(), bootID(), pidNS(), strconv.Itoa(pid), start}, "\t")
}

// Gone reports whether the process id names is known to have ended: it ran
// on this machine, since its last boot and in this pid namespace, and its
// pid no longer exists or now belongs to a process started at another
// time. A holder elsewhere, or one that cannot be told, is not gone: its
// lease is waited out.
func Gone(id string) bool {
	if id == Self() {
		return false // this process, asking
	}
	pid, ok := Local(id)
	if !ok {
		return false
	}
	f := strings.Split(id, "\t")
	switch alive(pid) {
	case no:
		return true
	case yes:
		now := startTime(pid)
		return now != "" && now != f[4]
	}
	return false
}

// Local returns the pid of id when id is a process of this machine, boot
// and pid namespace.
func Local(id string) (int, bool) {
	f := strings.Split(id, "\t")
	if len(f) != 5 || f[1] == "" || f[2] == "" {
		return 0, false
	}
	if host := hostname(); host == "" || f[0] != host || f[1] != bootID() || f[2] != pidNS() {
		return 0, false
	}
	pid, err := strconv.Atoi(f[3])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}

type answer int

const (
	unknown answer = iota
	yes
	no
)

var hostname = sync.OnceValue(func() string {
	h, _ := os.Hostname()
	return h
})

var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
})

var pidNS = sync.OnceValue(func() string {
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return ns
})

// startTime returns field 22 of /proc/PID/stat, the process's start time
// in clock ticks since boot; "" when it cannot be read.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command (field 2) is in parentheses and may hold spaces: count
	// fields after its closing one.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19] // field 22: the fields after ")" start at field 3
}

// Ended says that the process id names ended without finishing, for
// people ("the run by pid 4242 on this host ended without finishing"), or
// "" when it is not known to be gone.
func Ended(id string) string {
	if !Gone(id) {
		return ""
	}
	pid, _ := Local(id)
	return fmt.Sprintf("the run by pid %d on this host ended without finishing", pid)
}

// EndedMemo returns Ended remembering its answers, for reading many leases
// at once: the holders of many are often one process.
func EndedMemo() func(id string) string {
	m := map[string]string{}
	return func(id string) string {
		if e, ok := m[id]; ok {
			return e
		}
		e := Ended(id)
		m[id] = e
		return e
	}
}
