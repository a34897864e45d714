// Package dev is `weft dev`: the edit-run loop for a program that opens
// the studio on its own graphs (a main package calling ui.Run).
//
// weft dev builds the program, runs it, and watches the Go files of its
// module and of modules it replaces with local folders (with
// github.com/fsnotify/fsnotify). When one is saved it builds
// again. A build that fails leaves the program running: its window shows
// the compiler's errors. A build that succeeds replaces the program: the
// window saves where it stands (graph, thread, checkpoint, size, panels)
// in a session file weft dev names, quits, and the new build opens on the
// same checkpoint, saying what changed in the graph's shape.
//
// The two talk over a Unix socket in a private temporary directory (see
// Message): the environment variables Env* tell the program where it is
// and which build it runs. Package ui does the program's side; a program
// that does not use it is simply stopped and started again.
package devloop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configures Run. The zero Options builds and runs the package in
// the working directory.
type Options struct {
	// Package is the main package as go build takes it; "" is ".".
	Package string
	// Args are the program's arguments.
	Args []string
	// Dir is where the package is resolved, built and run; "" is the
	// working directory.
	Dir string
	// Stdout and Stderr receive the program's output; Log weft dev's own
	// lines. nil discards; a nil Log writes to Stderr.
	Stdout, Stderr, Log io.Writer
	// Quiet is how long the files must stay unchanged after a save before
	// a build starts (editors write in bursts); 0 means 100 ms.
	Quiet time.Duration
	// Events, when not nil, is told what happens, for tests and tools; it
	// must not block for long.
	Events func(Event)
}

// Event is something that happened in a Run, as Options.Events is told.
type Event struct {
	Kind string // "built", "failed", "started", "shown", "exited", "changed"
	// Build is the build concerned; PID the program's process.
	Build int
	PID   int
	// Took is the build's duration ("built", "failed") or the time from
	// the build's end until the window was back ("shown").
	Took   time.Duration
	Errors []BuildError
	Err    error
	// File is the file whose change was seen ("changed").
	File string
}

// Main is the weft dev command: it parses args ([PACKAGE] [-- PROGRAM
// ARGS]), runs until ctx ends or the program's window is closed, and
// returns the process exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("weft dev", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quiet := fs.Duration("quiet", 100*time.Millisecond, "how long files must stay unchanged after a save before a build starts")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: weft dev [-quiet 100ms] [PACKAGE] [-- PROGRAM ARGS]")
		fmt.Fprintln(stderr, "Builds and runs PACKAGE (default .), a main package that calls ui.Run, and rebuilds and")
		fmt.Fprintln(stderr, "restarts it on the same thread and checkpoint whenever a Go file of its module is saved.")
		fs.PrintDefaults()
	}
	var progArgs []string
	for i, a := range args {
		if a == "--" {
			args, progArgs = args[:i], args[i+1:]
			break
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintf(stderr, "weft dev: one package at most, not %q (program arguments go after --)\n", fs.Args())
		return 2
	}
	o := Options{Package: fs.Arg(0), Args: progArgs, Stdout: stdout, Stderr: stderr, Quiet: *quiet}
	// Ctrl+C ends weft dev cleanly: the program is asked to quit and the
	// temporary folder goes.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, o); err != nil {
		fmt.Fprintln(stderr, "weft dev:", err)
		return 1
	}
	return 0
}

// pkgInfo is what go list says of the package.
type pkgInfo struct {
	Name, Dir, ImportPath string
	Module                *struct{ Dir, Path string }
}

// child is one run of the program.
type child struct {
	cmd   *exec.Cmd
	build int
	done  chan struct{} // closed when it exited
	err   error         // its exit status, once done
	// quitting says weft dev asked it to go; saved is closed when it said
	// its session is saved.
	quitting bool
	saved    chan struct{}
	conn     net.Conn
}

// runner is the state of one Run.
type runner struct {
	o     Options
	log   io.Writer
	pkg   pkgInfo
	tmp   string
	sock  net.Listener
	build int    // the last build's number
	bin   string // the binary the running program was started from

	mu     sync.Mutex
	cur    *child
	byPID  map[int]*child
	exited chan *child
}

// Run builds and runs the program and rebuilds it on every save until ctx
// ends (the program is then asked to quit) or the user closes the
// program's window (it exits with status 0). A program that exits with an
// error is reported and rebuilt on the next save.
func Run(ctx context.Context, o Options) error {
	if o.Package == "" {
		o.Package = "."
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Quiet <= 0 {
		o.Quiet = 100 * time.Millisecond
	}
	r := &runner{o: o, log: o.Log, byPID: map[int]*child{}, exited: make(chan *child, 4)}
	if r.log == nil {
		r.log = o.Stderr
	}
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		r.o.Dir = wd
	}
	if err := r.resolve(ctx); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "weft-dev-")
	if err != nil {
		return err
	}
	r.tmp = tmp
	defer os.RemoveAll(tmp)
	r.sock, err = net.Listen("unix", filepath.Join(tmp, "dev.sock"))
	if err != nil {
		return fmt.Errorf("opening the socket for the program: %w", err)
	}
	defer r.sock.Close()
	go r.accept()

	roots := append([]string{r.pkg.Module.Dir}, r.localReplacements(ctx)...)
	w, err := newWatcher(roots...)
	if err != nil {
		return err
	}
	defer w.close()
	also := ""
	if len(roots) > 1 {
		also = " and " + strings.Join(roots[1:], ", ")
	}
	fmt.Fprintf(r.log, "weft dev: %s; watching %d folders of %s%s\n", r.pkg.ImportPath, w.dirs, r.pkg.Module.Dir, also)

	defer r.stopAll()
	r.rebuild(ctx)
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case name, ok := <-w.changed:
			if !ok {
				return errors.New("the file watcher stopped")
			}
			r.event(Event{Kind: "changed", File: name})
			quiet = time.After(o.Quiet)
		case err := <-w.errs:
			fmt.Fprintf(r.log, "weft dev: watching files: %v\n", err)
		case <-quiet:
			quiet = nil
			// Changes that arrive during the build make another one.
			r.rebuild(ctx)
			for drained := false; !drained; {
				select {
				case <-w.changed:
					quiet = time.After(o.Quiet)
				default:
					drained = true
				}
			}
		case c := <-r.exited:
			if r.onExit(c) {
				return nil
			}
		}
	}
}

// resolve asks go list what the package is.
func (r *runner) resolve(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, "go", "list", "-json=Name,Dir,ImportPath,Module", r.o.Package)
	cmd.Dir = r.o.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("finding the package %s: %s", r.o.Package, strings.TrimSpace(errb.String()+" "+err.Error()))
	}
	if err := json.Unmarshal(out.Bytes(), &r.pkg); err != nil {
		return fmt.Errorf("reading go list's answer about %s: %w", r.o.Package, err)
	}
	if r.pkg.Name != "main" {
		return fmt.Errorf("%s is package %s, not a main package: weft dev builds and runs the program that calls ui.Run", r.o.Package, r.pkg.Name)
	}
	if r.pkg.Module == nil || r.pkg.Module.Dir == "" {
		return fmt.Errorf("%s is not in a Go module: weft dev watches the module's files (go mod init makes one)", r.o.Package)
	}
	return nil
}

// localReplacements returns the folders of the modules the program's
// module replaces with local copies (replace … => ../lib): their files are
// the program's too.
func (r *runner) localReplacements(ctx context.Context) []string {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{with .Replace}}{{if not .Version}}{{.Dir}}{{end}}{{end}}", "all")
	cmd.Dir = r.o.Dir
	out, err := cmd.Output()
	if err != nil {
		// Not fatal: the module itself is watched.
		fmt.Fprintf(r.log, "weft dev: not watching modules replaced by local folders (go list -m: %v)\n", err)
		return nil
	}
	var dirs []string
	for _, d := range strings.Fields(string(out)) {
		if st, err := os.Stat(d); err == nil && st.IsDir() && d != r.pkg.Module.Dir {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// rebuild builds the program; on success it replaces the running one (if
// the binary changed), on failure it tells the running one the errors.
func (r *runner) rebuild(ctx context.Context) {
	r.build++
	n := r.build
	running := r.running()
	r.tell(Message{Type: MsgBuilding, Build: n, Running: running})
	fmt.Fprintf(r.log, "weft dev: building #%d…\n", n)
	bin := filepath.Join(r.tmp, fmt.Sprintf("app-%d", n))
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, r.o.Package)
	cmd.Dir = r.o.Dir
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	done := time.Now()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		errs, rest := ParseBuildOutput(string(out), r.o.Dir)
		fmt.Fprintf(r.log, "weft dev: build #%d failed in %s:\n%s", n, took.Round(time.Millisecond), out)
		if running > 0 {
			fmt.Fprintf(r.log, "weft dev: build #%d keeps running; save a file to try again\n", running)
		}
		r.tell(Message{Type: MsgFailed, Build: n, Running: running, At: done, Errors: errs, Output: rest})
		r.event(Event{Kind: "failed", Build: n, Took: took, Errors: errs})
		return
	}
	if running > 0 && sameFile(bin, r.bin) {
		// Nothing the program is made of changed (a comment, a test, a
		// package it does not import): the window stays as it is.
		fmt.Fprintf(r.log, "weft dev: build #%d is the same program as #%d; not restarting\n", n, running)
		r.tell(Message{Type: MsgUnchanged, Build: n, Running: running, At: done})
		os.Remove(bin)
		r.event(Event{Kind: "built", Build: n, Took: took})
		return
	}
	fmt.Fprintf(r.log, "weft dev: build #%d ok in %s at %s\n", n, took.Round(time.Millisecond), done.Format("15:04:05.000"))
	r.event(Event{Kind: "built", Build: n, Took: took})
	r.replace(n, bin, done)
}

// replace stops the running program (letting it save its session) and
// starts build n.
func (r *runner) replace(n int, bin string, builtAt time.Time) {
	r.mu.Lock()
	old := r.cur
	r.mu.Unlock()
	if old != nil {
		r.stop(old, 3*time.Second)
	}
	c := &child{build: n, done: make(chan struct{}), saved: make(chan struct{})}
	cmd := exec.Command(bin, r.o.Args...)
	cmd.Dir = r.o.Dir
	cmd.Stdout, cmd.Stderr = r.o.Stdout, r.o.Stderr
	cmd.Env = append(os.Environ(),
		EnvSocket+"="+filepath.Join(r.tmp, "dev.sock"),
		EnvSession+"="+filepath.Join(r.tmp, "session.json"),
		EnvBuild+"="+fmt.Sprint(n),
		EnvBuiltAt+"="+builtAt.Format(time.RFC3339Nano),
		EnvPackageDir+"="+r.pkg.Dir,
	)
	c.cmd = cmd
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(r.log, "weft dev: starting build #%d: %v\n", n, err)
		r.event(Event{Kind: "exited", Build: n, Err: err})
		return
	}
	r.mu.Lock()
	r.cur = c
	r.byPID[cmd.Process.Pid] = c
	r.mu.Unlock()
	prev := r.bin
	r.bin = bin
	r.event(Event{Kind: "started", Build: n, PID: cmd.Process.Pid})
	go func() {
		c.err = cmd.Wait()
		close(c.done)
		r.exited <- c
	}()
	// The older build's binary is not needed once it stopped (it is
	// still running when it did not stop in time: its file goes with the
	// temporary folder then).
	if prev != "" && (old == nil || isDone(old)) {
		os.Remove(prev)
	}
}

// stop asks c to save its session and quit, and waits until it said it
// saved (or exited); after wait it is killed. Once the session is saved it
// waits at most a second more for the process to end.
func (r *runner) stop(c *child, wait time.Duration) {
	r.mu.Lock()
	c.quitting = true
	conn := c.conn
	r.mu.Unlock()
	if conn != nil && send(conn, Message{Type: MsgQuit}) == nil {
		select {
		case <-c.saved:
			// Let it close its window (it writes its preferences as it
			// does, which the next build reads), but not for long.
			select {
			case <-c.done:
			case <-time.After(time.Second):
				go func() {
					select {
					case <-c.done:
					case <-time.After(5 * time.Second):
						_ = c.cmd.Process.Kill()
					}
				}()
			}
			return
		case <-c.done:
			return
		case <-time.After(wait):
			fmt.Fprintf(r.log, "weft dev: build #%d did not save its session within %s; stopping it\n", c.build, wait)
		}
	}
	// A program that does not talk to weft dev: interrupt it, then kill.
	if runtime.GOOS != "windows" {
		_ = c.cmd.Process.Signal(os.Interrupt)
		select {
		case <-c.done:
			return
		case <-time.After(time.Second):
		}
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// stopAll stops the running program when weft dev ends.
func (r *runner) stopAll() {
	r.mu.Lock()
	c := r.cur
	r.mu.Unlock()
	if c != nil {
		select {
		case <-c.done:
		default:
			r.stop(c, 3*time.Second)
			select {
			case <-c.done:
			case <-time.After(5 * time.Second):
				_ = c.cmd.Process.Kill()
			}
		}
	}
}

// onExit handles a program's exit; it reports whether weft dev should end
// (the user closed the window of the current build).
func (r *runner) onExit(c *child) bool {
	r.mu.Lock()
	cur := r.cur == c
	quitting := c.quitting
	if cur {
		r.cur = nil
	}
	r.mu.Unlock()
	if quitting || !cur {
		return false
	}
	if c.err == nil {
		fmt.Fprintf(r.log, "weft dev: the window of build #%d was closed; stopping\n", c.build)
		r.event(Event{Kind: "exited", Build: c.build})
		return true
	}
	fmt.Fprintf(r.log, "weft dev: build #%d exited: %v; save a file to rebuild and start it again\n", c.build, c.err)
	r.event(Event{Kind: "exited", Build: c.build, Err: c.err})
	return false
}

// running returns the build the running program is, 0 for none.
func (r *runner) running() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil {
		return 0
	}
	return r.cur.build
}

// tell sends m to the running program, if it listens.
func (r *runner) tell(m Message) {
	r.mu.Lock()
	var conn net.Conn
	if r.cur != nil && !r.cur.quitting {
		conn = r.cur.conn
	}
	r.mu.Unlock()
	if conn != nil {
		_ = send(conn, m)
	}
}

func (r *runner) event(e Event) {
	if r.o.Events != nil {
		r.o.Events(e)
	}
}

// accept takes the programs' connections.
func (r *runner) accept() {
	for {
		conn, err := r.sock.Accept()
		if err != nil {
			return
		}
		go r.serve(conn)
	}
}

// serve reads one program's messages.
func (r *runner) serve(conn net.Conn) {
	defer conn.Close()
	dec := json.NewDecoder(conn)
	var c *child
	for {
		var m Message
		if err := dec.Decode(&m); err != nil {
			return
		}
		switch m.Type {
		case MsgHello:
			r.mu.Lock()
			c = r.byPID[m.PID]
			if c != nil {
				c.conn = conn
			}
			r.mu.Unlock()
		case MsgSaved:
			if c != nil {
				select {
				case <-c.saved:
				default:
					close(c.saved)
				}
			}
		case MsgShown:
			if c == nil {
				continue
			}
			var err error
			if m.Err != "" {
				err = errors.New(m.Err)
				fmt.Fprintf(r.log, "weft dev: build #%d is up, but the window could not go back where it was: %s\n", c.build, m.Err)
			} else {
				fmt.Fprintf(r.log, "weft dev: build #%d is back on the same checkpoint %s after the build finished\n", c.build, m.Took.Round(time.Millisecond))
			}
			r.event(Event{Kind: "shown", Build: c.build, PID: m.PID, Took: m.Took, Err: err})
		}
	}
}

// send writes one message.
func send(conn net.Conn, m Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, err = conn.Write(append(b, '\n'))
	return err
}

// isDone reports whether c exited.
func isDone(c *child) bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// sameFile reports whether files a and b hold the same bytes. Two builds
// that differ do so in their first block (the Go build ID), so this costs
// nothing when they do; the program is restarted only when they do.
func sameFile(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	if sa, sb := fileSize(fa), fileSize(fb); sa < 0 || sa != sb {
		return false
	}
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && ea == eb
		}
	}
}

func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}
