package devloop

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseBuildOutput(t *testing.T) {
	out := `# example.com/app
./main.go:12:5: undefined: greett
./nodes.go:30:9: cannot use x (variable of type int) as string value in return statement
	have (int)
	want (string)
/abs/other.go:3: imported and not used: "fmt"
go: updates to go.mod needed; to update it:
	go mod tidy
`
	errs, rest := ParseBuildOutput(out, "/src/app")
	want := []BuildError{
		{File: "./main.go", Path: "/src/app/main.go", Line: 12, Col: 5, Msg: "undefined: greett"},
		{File: "./nodes.go", Path: "/src/app/nodes.go", Line: 30, Col: 9, Msg: "cannot use x (variable of type int) as string value in return statement\nhave (int)\nwant (string)"},
		{File: "/abs/other.go", Path: "/abs/other.go", Line: 3, Msg: `imported and not used: "fmt"`},
	}
	if len(errs) != len(want) {
		t.Fatalf("%d errors: %+v", len(errs), errs)
	}
	for i := range want {
		if errs[i] != want[i] {
			t.Errorf("error %d = %+v, want %+v", i, errs[i], want[i])
		}
	}
	// The go command's own lines stay, with their indented advice.
	if rest != "go: updates to go.mod needed; to update it:\n\tgo mod tidy" {
		t.Errorf("rest %q", rest)
	}
}

// syncBuf is a bytes.Buffer safe for a program's output and the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// program is a stand-in for a program that calls ui.Run: it talks to
// weft dev as package ui does (session, shown, failed builds, quit) but
// opens no window.
const program = `package main

import (
	"fmt"
	"os"
	"time"

	"github.com/weftstudio/weft/devloop"
)

const version = "v1"

func main() {
	p, err := devloop.Connect()
	if err != nil || p == nil {
		fmt.Println("not run by weft dev:", err)
		os.Exit(3)
	}
	var sess struct{ Version string }
	ok, err := p.LoadSession(&sess)
	fmt.Printf("started %s as build %d; session %v %q %v\n", version, p.Build, ok, sess.Version, err)
	if version == "bye" {
		os.Exit(0) // as when the window is closed
	}
	p.Send(devloop.Message{Type: devloop.MsgShown, PID: os.Getpid(), Took: time.Since(p.BuiltAt)})
	p.Listen(func(m devloop.Message) {
		switch m.Type {
		case devloop.MsgBuilding:
			fmt.Printf("%s: building %d\n", version, m.Build)
		case devloop.MsgFailed:
			fmt.Printf("%s: build %d failed: %d errors, first at line %d\n", version, m.Build, len(m.Errors), m.Errors[0].Line)
		case devloop.MsgUnchanged:
			fmt.Printf("%s: build %d unchanged\n", version, m.Build)
		case devloop.MsgQuit:
			p.SaveSession(struct{ Version string }{version})
			p.Send(devloop.Message{Type: devloop.MsgSaved})
			fmt.Printf("%s: quitting\n", version)
			os.Exit(0)
		}
	})
}
`

// The loop end to end on a real module: build and run; a save rebuilds
// and the new build starts with the session the old one saved; a build
// that fails leaves the program running and tells it the errors; a build
// that makes the same program does not restart it; a program that exits
// by itself (its window closed) ends weft dev.
func TestDevLoop(t *testing.T) {
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/fake\n\ngo 1.26.0\n\nrequire github.com/weftstudio/weft v0.0.0\n\nreplace github.com/weftstudio/weft => "+repo+"\n")
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	write("main.go", program)
	// Offline: the module cache has what the repository needs; go may add
	// the program's indirect requirements to its go.mod.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")

	events := make(chan Event, 64)
	out := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Dir: dir, Stdout: out, Stderr: out, Log: out, Quiet: 50 * time.Millisecond,
			Events: func(e Event) { events <- e }})
	}()
	wait := func(kind string, build int) Event {
		t.Helper()
		deadline := time.After(90 * time.Second)
		for {
			select {
			case e := <-events:
				if e.Kind == kind && e.Build == build {
					return e
				}
				if e.Kind == "failed" && kind != "failed" {
					t.Fatalf("build %d failed: %+v\n%s", e.Build, e.Errors, out)
				}
			case err := <-done:
				t.Fatalf("weft dev ended (%v) before %s #%d:\n%s", err, kind, build, out)
			case <-deadline:
				t.Fatalf("no %s #%d:\n%s", kind, build, out)
			}
		}
	}
	// waitOut waits until the output holds all of want.
	waitOut := func(want ...string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s, all := out.String(), true
			for _, w := range want {
				all = all && strings.Contains(s, w)
			}
			if all {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("output lacks %q:\n%s", want, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wait("shown", 1)
	waitOut(`started v1 as build 1; session false ""`)

	write("main.go", strings.Replace(program, `"v1"`, `"v2"`, 1))
	if e := wait("shown", 2); e.Took <= 0 {
		t.Errorf("build 2 shown after %v", e.Took)
	}
	waitOut("v1: quitting", `started v2 as build 2; session true "v1"`)

	write("main.go", strings.Replace(program, `"v1"`, `"v2"`, 1)+"\nfunc broken() { undefinedThing() }\n")
	e := wait("failed", 3)
	if len(e.Errors) != 1 || e.Errors[0].Line != 43 || e.Errors[0].Path != filepath.Join(dir, "main.go") || !strings.Contains(e.Errors[0].Msg, "undefined: undefinedThing") {
		t.Errorf("errors %+v", e.Errors)
	}
	waitOut("v2: build 3 failed: 1 errors, first at line 43")
	if strings.Contains(out.String(), "v2: quitting") {
		t.Fatalf("a failed build stopped the program:\n%s", out)
	}

	// The fix undoes the breakage: the program is build 2's again, and a
	// package the program does not import changes nothing either. Neither
	// restarts it.
	write("main.go", strings.Replace(program, `"v1"`, `"v2"`, 1))
	wait("built", 4)
	write("other/other.go", "package other\n\nconst X = 1\n")
	wait("built", 5)
	waitOut("v2: build 4 unchanged", "v2: build 5 unchanged")
	if s := out.String(); strings.Contains(s, "v2: quitting") {
		t.Errorf("unchanged builds restarted the program:\n%s", s)
	}

	// The window closed: weft dev ends.
	write("main.go", strings.Replace(program, `"v1"`, `"bye"`, 1))
	wait("exited", 6)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("weft dev did not end when the program's window closed:\n%s", out)
	}
	waitOut(`started bye as build 6; session true "v2"`, "was closed; stopping")
}

// A package that is not a main package is refused, naming it.
func TestDevRefusesLibrary(t *testing.T) {
	err := Run(context.Background(), Options{Package: ".", Dir: "."})
	if err == nil || !strings.Contains(err.Error(), "is package devloop, not a main package") {
		t.Fatalf("err %v", err)
	}
}
