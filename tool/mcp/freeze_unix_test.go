//go:build unix

package mcp_test

import (
	"context"
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/weftstudio/weft/tool/mcp"
)

func init() {
	freezeSelf = func() { syscall.Kill(os.Getpid(), syscall.SIGSTOP) }
}

// A server stopped whole (it answers neither the call nor a ping) times
// the call out, is then found stuck and replaced: the next call runs on a
// new process.
func TestFrozenServerIsReplaced(t *testing.T) {
	c := connect(t, goServer(t), mcp.WithCallTimeout(300*time.Millisecond))
	_, err := c.Tool("freeze").Call(context.Background(), `{}`)
	var te *mcp.ToolError
	if !errors.As(err, &te) || !te.Timeout {
		t.Fatalf("got %v, want a timeout", err)
	}
	time.Sleep(time.Second) // the ping's timeout (300ms) passes, the session is dropped
	out, err := c.Tool("echo").Call(context.Background(), `{"text":"new process"}`)
	if err != nil || out != "echo: new process" {
		t.Fatalf("after the frozen server: %q, %v", out, err)
	}
}
