package devloop

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The environment weft dev runs the program with.
const (
	// EnvSocket names the Unix socket the program connects to.
	EnvSocket = "WEFT_DEV_SOCKET"
	// EnvSession names the file the program keeps its window's session in
	// (see Program.LoadSession).
	EnvSession = "WEFT_DEV_SESSION"
	// EnvBuild is the number of the build the program is (from 1).
	EnvBuild = "WEFT_DEV_BUILD"
	// EnvBuiltAt is when that build finished, RFC 3339 with nanoseconds.
	EnvBuiltAt = "WEFT_DEV_BUILT_AT"
	// EnvPackageDir is the folder of the program's main package.
	EnvPackageDir = "WEFT_DEV_PACKAGE_DIR"
)

// Message types. weft dev sends the program MsgBuilding, MsgFailed and
// MsgQuit; the program sends MsgHello, MsgSaved and MsgShown.
const (
	MsgHello     = "hello"     // the program is up (Build, PID)
	MsgBuilding  = "building"  // a build started (Build)
	MsgFailed    = "failed"    // it failed (Build, Running, At, Errors, Output): the program runs on
	MsgQuit      = "quit"      // save the session and exit: a new build takes over
	MsgUnchanged = "unchanged" // the build made the same program: the program runs on
	MsgSaved     = "saved"     // the session is saved; the program exits next
	MsgShown     = "shown"     // the restored window is back (Took since the build finished; Err if it could not be)
)

// Message is one line of the conversation between weft dev and the
// program it runs, as JSON. Fields a type does not use are zero.
type Message struct {
	Type    string    `json:"type"`
	Build   int       `json:"build,omitempty"`
	Running int       `json:"running,omitempty"`
	PID     int       `json:"pid,omitempty"`
	At      time.Time `json:"at,omitzero"`
	// Errors and Output are a failed build's: the compiler's errors and
	// its other lines.
	Errors []BuildError `json:"errors,omitempty"`
	Output string       `json:"output,omitempty"`
	// Took is how long after its build finished the program's window was
	// back where the last one was.
	Took time.Duration `json:"took,omitempty"`
	Err  string        `json:"err,omitempty"`
}

// Program is a program's end of weft dev: the build it is, its session
// file, and the messages weft dev sends. Get it with Connect.
type Program struct {
	// Build is this program's build number; BuiltAt when it finished.
	Build   int
	BuiltAt time.Time
	// SessionFile is where the window's session is kept between builds.
	SessionFile string
	// PackageDir is the folder of the program's main package.
	PackageDir string

	conn net.Conn
	mu   sync.Mutex
	enc  *json.Encoder
}

// Connect connects to the weft dev that runs this program. It returns nil
// and no error when the program was not started by weft dev (EnvSocket is
// not set), and an error naming what failed when it was but cannot reach
// it.
func Connect() (*Program, error) {
	sock := os.Getenv(EnvSocket)
	if sock == "" {
		return nil, nil
	}
	p := &Program{SessionFile: os.Getenv(EnvSession), PackageDir: os.Getenv(EnvPackageDir)}
	p.Build, _ = strconv.Atoi(os.Getenv(EnvBuild))
	if at := os.Getenv(EnvBuiltAt); at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return nil, fmt.Errorf("weft dev: %s=%q is not a time: %w", EnvBuiltAt, at, err)
		}
		p.BuiltAt = t
	}
	c, err := net.DialTimeout("unix", sock, 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("weft dev started this program but its socket %s does not answer: %w", sock, err)
	}
	p.conn = c
	p.enc = json.NewEncoder(c)
	if err := p.Send(Message{Type: MsgHello, Build: p.Build, PID: os.Getpid()}); err != nil {
		c.Close()
		return nil, err
	}
	return p, nil
}

// Send sends m to weft dev.
func (p *Program) Send(m Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enc.Encode(m)
}

// Listen calls fn with each message weft dev sends, on the calling
// goroutine, until the connection closes (weft dev ended), and then
// returns.
func (p *Program) Listen(fn func(Message)) {
	sc := bufio.NewScanner(p.conn)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m Message
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			fn(m)
		}
	}
}

// Close closes the connection.
func (p *Program) Close() error { return p.conn.Close() }

// LoadSession reads the session file into v. A session file that does not
// exist yet (the first build) is not an error: v stays as it is and
// LoadSession reports false.
func (p *Program) LoadSession(v any) (bool, error) {
	if p.SessionFile == "" {
		return false, nil
	}
	b, err := os.ReadFile(p.SessionFile)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("session file %s: %w", p.SessionFile, err)
	}
	return true, nil
}

// SaveSession writes v to the session file as JSON, atomically: a program
// killed while saving leaves the previous session whole.
func (p *Program) SaveSession(v any) error {
	if p.SessionFile == "" {
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(p.SessionFile, b)
}

// writeAtomic writes b to a temporary file beside path and renames it over
// path.
func writeAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".session-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
