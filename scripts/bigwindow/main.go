// Command bigwindow measures the studio's real window on the scale store
// (scripts/bigstore.sh): it opens the store, shows the window, moves to a
// short thread, then chooses the 100,000-checkpoint thread and reports
//
//	shown   the thread chosen until its head's checkpoint is on screen
//	        (the first page of the timeline has arrived)
//	whole   until the window has applied the timeline's last page: the
//	        reading is over and a UI callback queued after it has run
//	rss     the process's resident memory two seconds later
//
// as one line of JSON. Run it under a display; scripts/bigwindow.sh
// starts Xvfb and runs it several times.
//
//	go run ./scripts/bigwindow -db /tmp/weft-bigstore.db
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	"github.com/weftstudio/weft/checkpoint/sqlite"
	"github.com/weftstudio/weft/scripts/bigstore/gen"
	"github.com/weftstudio/weft/ui/studio"
)

func main() {
	db := flag.String("db", os.Getenv("WEFT_BIGSTORE"), "the scale store")
	flag.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the long thread's opening to this file")
	flag.Parse()
	if err := run(*db); err != nil {
		fmt.Fprintln(os.Stderr, "bigwindow:", err)
		os.Exit(1)
	}
}

// cpuProfile names the file a CPU profile of the measured opening goes to;
// "" takes none.
var cpuProfile string

func run(db string) error {
	if db == "" {
		return fmt.Errorf("no store: give -db or set WEFT_BIGSTORE (build it with bash scripts/bigstore.sh)")
	}
	saver, err := sqlite.Open(db, sqlite.ReadOnly(), sqlite.MustExist())
	if err != nil {
		return err
	}
	defer saver.Close()
	g, err := gen.Graph(gen.Full.Seed, gen.Full.ValueBytes, nil)
	if err != nil {
		return err
	}
	a := app.NewWithID("weft.bigwindow")
	s := studio.New(a, studio.Config{Store: saver, StoreName: db, Graphs: []studio.Graph{{Graph: g}}})
	s.Window().Show()
	var failed error
	go func() {
		defer fyne.Do(a.Quit)
		failed = measure(s)
	}()
	a.Run()
	return failed
}

// restore moves the window to thread and waits until its head is shown.
func restore(s *studio.Studio, thread string) (time.Time, time.Duration, error) {
	done := make(chan error, 1)
	var t0 time.Time
	fyne.Do(func() {
		t0 = time.Now()
		s.Restore(studio.Session{Graph: gen.GraphName, Thread: thread}, func(err error) { done <- err })
	})
	err := <-done
	return t0, time.Since(t0), err
}

func measure(s *studio.Studio) error {
	s.WaitIdle() // the window opened on the newest thread
	if _, _, err := restore(s, gen.ShortThread(1)); err != nil {
		return err
	}
	s.WaitIdle()
	time.Sleep(500 * time.Millisecond)
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	t0, shown, err := restore(s, gen.LongThread)
	if err != nil {
		return err
	}
	s.WaitIdle()
	applied := make(chan time.Duration, 1)
	fyne.Do(func() { applied <- time.Since(t0) })
	whole := <-applied
	if cpuProfile != "" {
		pprof.StopCPUProfile()
	}
	time.Sleep(2 * time.Second) // the studio hands a long read's memory back 0.5 s after it
	out, _ := json.Marshal(map[string]any{"shown_ms": shown.Milliseconds(), "whole_ms": whole.Milliseconds(), "rss_mb": rssMB()})
	fmt.Println(string(out))
	return nil
}

// rssMB is the process's resident memory in MB, -1 when unknown.
func rssMB() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if err == nil {
				return kb / 1024
			}
		}
	}
	return -1
}
