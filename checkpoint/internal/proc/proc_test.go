package proc

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestGone(t *testing.T) {
	self := Self()
	if self == "" {
		t.Fatal("this process has no identity: /proc is needed to tell a dead lease holder")
	}
	if Gone(self) {
		t.Fatal("this process is taken for gone")
	}
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	child := Identity(pid, startTime(pid))
	if Gone(child) {
		t.Error("a running child is taken for gone")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if !Gone(child) {
		t.Errorf("the killed child %q is not taken for gone", child)
	}
	// A pid reused by another process (here: this one) is the holder's no more.
	if !Gone(Identity(os.Getpid(), "1")) {
		t.Error("a reused pid is taken for its first process")
	}
	// Another machine's process is never taken for gone: its lease is waited out.
	other := "elsewhere" + strings.TrimPrefix(child, strings.SplitN(child, "\t", 2)[0])
	if Gone(other) || Gone("") || Gone("garbage") {
		t.Error("a holder on another host, or none, is taken for gone")
	}
}
