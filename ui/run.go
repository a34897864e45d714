// Package ui opens the Weft studio on compiled graphs with one call, for
// the weft binary and for Go developers' own programs:
//
//	func main() {
//		if err := ui.Run(studio.Graph{Graph: myGraph, Example: engine.Values{"topic": "otters"}}); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// Run reads the command line (-db PATH, default weft.db in the working
// directory; -store DSN for another store; -create), opens the store, and
// shows the studio window until it is closed. The default weft.db is
// created when missing; a store named on the command line must exist
// unless -create is given. Without a display (no DISPLAY or
// WAYLAND_DISPLAY on Linux and the BSDs) Run returns ErrNoDisplay before
// touching any file. The window itself is package
// ui/studio, which tests drive headless.
package ui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/weftstudio/weft/agentclient"
	"github.com/weftstudio/weft/agentview"
	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/store"
	"github.com/weftstudio/weft/devloop"
	"github.com/weftstudio/weft/ui/studio"
)

// AppID is the Fyne application id of the studio (where its preferences,
// such as recent inputs, are kept).
const AppID = "studio.weft.app"

// Run opens the studio on graphs and blocks until its window is closed.
// Each graph's own saver is replaced by the studio's store. Flags are
// parsed from os.Args[1:]: -db and -store only, so a program with flags of
// its own should call RunWith instead. A store that cannot be opened is
// returned as an explained error before any window appears.
// Run must be called from the main goroutine.
func Run(graphs ...studio.Graph) error { return RunFrom(Options{}, graphs...) }

// RunFrom is Run with o's settings that no flag gives (Title, Embedder):
// the flags set the store, as for Run.
func RunFrom(o Options, graphs ...studio.Graph) error {
	fs := flag.NewFlagSet("weft studio", flag.ContinueOnError)
	db := fs.String("db", "weft.db", "SQLite checkpoint store `file` (weft.db is created when missing)")
	dsn := fs.String("store", "", "checkpoint store `DSN` (a postgres:// URL or a file path); overrides -db")
	create := fs.Bool("create", false, "create the store named by -db or -store if it does not exist")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (commands come first: weft help)", fs.Arg(0))
	}
	spec := *db
	if *dsn != "" {
		spec = *dsn
	}
	named := false
	fs.Visit(func(f *flag.Flag) { named = named || f.Name == "db" || f.Name == "store" })
	o.Store, o.MustExist = spec, named && !*create
	return RunWith(o, graphs...)
}

// ErrNoDisplay is returned by Run and RunWith when there is no display to
// open the window on.
// It has a NoDisplay method, so a caller that does not link the window
// (the headless commands' Main) can recognise it.
var ErrNoDisplay error = noDisplay{}

type noDisplay struct{}

func (noDisplay) Error() string {
	return "no display to open the studio window on (DISPLAY and WAYLAND_DISPLAY are not set)"
}

// NoDisplay reports that the error is ErrNoDisplay.
func (noDisplay) NoDisplay() bool { return true }

// hasDisplay reports whether a window can be opened: on Linux and the BSDs
// GLFW needs an X11 or Wayland display; elsewhere the system always has
// one.
func hasDisplay() bool {
	switch runtime.GOOS {
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
	}
	return true
}

// Options configures RunWith. The zero Options opens weft.db in the
// working directory.
type Options struct {
	// Store is a SQLite file path or a DSN for store.Open; "" means
	// "weft.db".
	Store string
	// Title replaces the window title; "" keeps "Weft Studio".
	Title string
	// MustExist refuses to create the store: a missing file, a 0-byte file
	// or another program's empty database is an error (store.MustExist).
	// The zero value creates a missing store.
	MustExist bool
	// Embedder gives the store's long-term items semantic search
	// (studio.Config.Embedder); nil searches by filter alone.
	Embedder longterm.Embedder
}

// RunWith is Run without reading the command line.
func RunWith(o Options, graphs ...studio.Graph) error {
	if !hasDisplay() {
		return ErrNoDisplay
	}
	if o.Store == "" {
		o.Store = "weft.db"
	}
	// Run by weft dev: the window reopens where the last build's was.
	prog, err := devloop.Connect()
	if err != nil {
		return err
	}
	var last studio.Session
	restore := false
	if prog != nil {
		defer prog.Close()
		if restore, err = prog.LoadSession(&last); err != nil {
			fmt.Fprintln(os.Stderr, "weft dev:", err)
		}
	}
	var mode []store.Option
	if o.MustExist {
		mode = append(mode, store.MustExist())
	}
	var st store.Store
	if restore && last.Store != "" && last.Store != o.Store {
		// The store the last build's window had opened (File → Open).
		if st, err = store.Open(context.Background(), last.Store, store.MustExist()); err == nil {
			o.Store = last.Store
		}
	}
	if st == nil {
		if st, err = store.Open(context.Background(), o.Store, mode...); err != nil {
			return fmt.Errorf("opening the store %s: %w", store.Redact(o.Store), studio.Explain(err))
		}
	}
	opened := []store.Store{st}
	defer func() {
		for _, s := range opened {
			_ = s.Close()
		}
	}()
	// The studio touches widgets only on the UI goroutine (fyne.Do from
	// others): declaring Fyne's fyneDo migration turns off its per-call
	// thread check, which costs a stack trace per Refresh.
	app.SetMetadata(fyne.AppMetadata{ID: AppID, Name: "Weft", Version: "0.1.0", Migrations: map[string]bool{"fyneDo": true}})
	a := app.NewWithID(AppID)
	var cur atomic.Value // the spec of the store shown, for the session
	cur.Store(o.Store)
	cfg := studio.Config{
		Store:     st,
		StoreName: store.Redact(o.Store),
		Graphs:    graphs,
		Embedder:  o.Embedder,
		OpenStore: func(spec string) (checkpoint.Saver, string, error) {
			s, err := store.Open(context.Background(), spec)
			if err != nil {
				return nil, "", err
			}
			opened = append(opened, s)
			cur.Store(spec)
			return s, store.Redact(spec), nil
		},
		OpenServer: func(addr, apiKey string) (checkpoint.Saver, string, error) {
			key := agentclient.WithAPIKeyFromEnv()
			if apiKey != "" {
				key = agentclient.WithAPIKey(apiKey)
			}
			s, err := agentview.Connect(addr, key)
			if err != nil {
				return nil, "", err
			}
			opened = append(opened, s)
			cur.Store(addr) // the session reopens it with the environment's key
			return s, store.Redact(addr), nil
		},
	}
	if prog != nil {
		cfg.Package = prog.PackageDir
	}
	s := studio.New(a, cfg)
	w := s.Window()
	if o.Title != "" {
		w.SetTitle(o.Title)
	}
	w.Resize(studio.WindowSize)
	if prog != nil {
		devSession(a, s, prog, restore, last, func() string { return cur.Load().(string) })
	}
	w.SetMaster()
	w.ShowAndRun()
	return nil
}
