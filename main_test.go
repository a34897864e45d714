package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/internal/testenv"
)

// asWeft is this test binary started again as the weft command.
var asWeft = testenv.Command{Name: "weft", Env: "WEFT_MAIN_TEST_AS_WEFT", Main: main}

func TestMain(m *testing.M) { asWeft.TestMain(m) }

// weft runs the command in dir with env added, and returns its output and
// exit code.
func weft(t *testing.T, dir string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return asWeft.Run(t, dir, env, args...)
}

func noFiles(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("the command left %s in its directory", ents[0].Name())
	}
}

// The command line as a person meets it: a typo, no display, help.
func TestCommandLine(t *testing.T) {
	noDisplay := []string{"DISPLAY=", "WAYLAND_DISPLAY="}

	dir := t.TempDir()
	_, errs, code := weft(t, dir, nil, "thread", "-db", "t.db")
	if code != 2 || !strings.Contains(errs, `unknown command "thread" (did you mean "threads"?)`) {
		t.Errorf("a typo: exit %d, %q", code, errs)
	}
	noFiles(t, dir)

	for _, args := range [][]string{nil, {"-db", "x.db"}} {
		_, errs, code = weft(t, dir, noDisplay, args...)
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		if code != 1 || len(lines) != 1 || !strings.Contains(errs, "no display") || !strings.Contains(errs, "threads") {
			t.Errorf("no display %v: exit %d, %q; want one line naming the headless commands", args, code, errs)
		}
		noFiles(t, dir)
	}

	out, _, code := weft(t, dir, nil, "-h")
	if code != 0 || !strings.Contains(out, "threads") {
		t.Errorf("-h: exit %d, %q", code, out)
	}
}

// Headless commands under the C.UTF-8 locale (a server's default) print no
// Fyne locale lines: their output is for scripts.
func TestHeadlessQuietUnderCLocale(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(filepath.Join(dir, "weft.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	for _, lang := range []string{"C.UTF-8", "C", "POSIX"} {
		out, errs, code := weft(t, dir, []string{"LANG=" + lang, "LC_ALL=", "LC_MESSAGES=", "LANGUAGE="}, "threads")
		if code != 0 || strings.TrimSpace(out) != "[]" || errs != "" {
			t.Errorf("LANG=%s weft threads: exit %d, stdout %q, stderr %q", lang, code, out, errs)
		}
	}
}

// WEFT_MODEL set for plain weft is not silently ignored: it says where the
// demos run on that model.
func TestModelEnvNoted(t *testing.T) {
	dir := t.TempDir()
	_, errs, code := weft(t, dir, []string{"WEFT_MODEL=openai:gpt-4.1-mini"}, "threads", "-db", "nope.db")
	if code == 0 || !strings.Contains(errs, "WEFT_MODEL is set") || !strings.Contains(errs, "examples/live") {
		t.Errorf("exit %d, stderr %q; want the note pointing at examples/live", code, errs)
	}
}

// The weft binary links no provider SDK: they would double its size and
// add some 40 MB to the window's resident memory (examples/live has them).
func TestNoProviderSDKLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/openai/") || strings.HasPrefix(dep, "github.com/anthropics/") || strings.HasPrefix(dep, "github.com/cloudwego/") {
			t.Errorf("weft links %s", dep)
		}
	}
}
