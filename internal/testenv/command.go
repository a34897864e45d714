package testenv

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A Command lets a test binary stand in for the program it tests: the
// tests start the binary again with Env set, and its TestMain then runs
// the program's main instead of the tests.
type Command struct {
	// Name is the program's name, as os.Args[0] when it runs.
	Name string
	// Env is the variable that tells the binary to be the program.
	Env string
	// Main is the program's main.
	Main func()
}

// TestMain is a TestMain: the program when the binary was started by Run, the
// tests otherwise.
func (c Command) TestMain(m *testing.M) {
	if os.Getenv(c.Env) == "1" {
		os.Args = append([]string{c.Name}, os.Args[1:]...)
		c.Main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Run runs the program in dir with env added to the test's environment and
// returns what it printed and its exit code. It fails the test only when
// the program cannot be started.
func (c Command) Run(t testing.TB, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), c.Env+"=1"), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}
