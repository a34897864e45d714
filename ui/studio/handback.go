package studio

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// handBackMin is how much of the heap, beyond what was live at the last
// collection, makes the studio hand memory back once a read has ended.
// A read of a thread holding values of hundreds of megabytes leaves its
// encodings, rows and decoding buffers behind as garbage; an idle window
// runs no collection for two minutes, and until one runs the runtime keeps
// that memory resident (a LangGraph thread of 87, 175 and 262 MB notes left
// the window at 1.2 GB with 0.3 GB in use).
const handBackMin = 256 << 20

// handingBack is set while a hand-back waits to run, so reads ending close
// together schedule one.
var handingBack atomic.Bool

// handBackEvery is how often an open window checks for memory to hand
// back: the reads that leave garbage behind (a thread's rows, a value's
// encodings for a dialog, a compare) are many, so one periodic check
// serves them all rather than a check after each.
const handBackEvery = 2 * time.Second

// watchMemory checks for memory to hand back every handBackEvery until
// stop is closed.
func watchMemory(stop <-chan struct{}) {
	t := time.NewTicker(handBackEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			handBackMemory()
		case <-stop:
			return
		}
	}
}

// handBackMemory schedules debug.FreeOSMemory handBack from now when the
// heap holds at least handBackMin that is not live: garbage beyond what was
// live at the last collection, and free pages the runtime has not yet
// returned to the system (reading its counters costs a microsecond or so).
func handBackMemory() {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return
		}
	}
	heap, live, free := samples[0].Value.Uint64(), samples[1].Value.Uint64(), samples[2].Value.Uint64()
	if heap+free < live+handBackMin || !handingBack.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(handBack, func() {
		handingBack.Store(false)
		debug.FreeOSMemory()
	})
}
