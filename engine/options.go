package engine

import (
	"maps"
)

// Durability says when a run's checkpoints reach the saver (LangGraph's
// durability). The zero value is DurabilityAsync.
type Durability int

const (
	// DurabilityAsync writes each step's checkpoint in the background, in
	// order, while the next step runs; the run waits for all writes before it
	// returns.
	DurabilityAsync Durability = iota
	// DurabilitySync waits for each step's checkpoint before the next step.
	DurabilitySync
	// DurabilityExit writes only when the run ends: the final checkpoint and
	// the pending writes of the step in progress.
	DurabilityExit
)

// StreamMode selects what a run reports; modes combine with |.
type StreamMode uint16

// Stream modes (semantics reference §8).
const (
	ModeValues      StreamMode = 1 << iota // the full state after each step that changed it
	ModeUpdates                            // each finished task's writes
	ModeCustom                             // what nodes pass to Emit
	ModeMessages                           // message chunks nodes pass to EmitMessage
	ModeTasks                              // task starts and results
	ModeCheckpoints                        // each checkpoint, as a Snapshot
	ModeDebug                              // tasks and checkpoints, with step and time
	ModeCalls                              // model and tool calls nodes record with RecordCall
	// ModeLifecycle marks each super-step's and each task's start and end
	// with ids and outcomes only (Event.Lifecycle): what tracing needs, at
	// a cost small enough for every run (no state is copied).
	ModeLifecycle
	// ModeAll is every mode LangGraph streams, with ModeCalls; it leaves
	// out ModeLifecycle, whose events repeat ModeTasks' in a lighter form.
	ModeAll = ModeValues | ModeUpdates | ModeCustom | ModeMessages | ModeTasks | ModeCheckpoints | ModeDebug | ModeCalls
)

// String names the mode ("values", "updates", …) or lists combined modes.
func (m StreamMode) String() string {
	names := []string{"values", "updates", "custom", "messages", "tasks", "checkpoints", "debug", "calls", "lifecycle"}
	out := ""
	for i, n := range names {
		if m&(1<<i) != 0 {
			if out != "" {
				out += "|"
			}
			out += n
		}
	}
	return out
}

// RunOption configures one run (Invoke, Stream, state updates).
type RunOption func(*runConfig)

type runConfig struct {
	thread       string
	checkpointID string
	ns           string
	limit        int
	durability   Durability
	before       []string
	after        []string
	beforeSet    bool
	afterSet     bool
	modes        StreamMode
	observer     func(Event)
	observerBuf  int
	runID        string
	metadata     map[string]any
	stepLimit    int
	subgraphs    bool
	newBranch    bool
	phases       PhaseFunc
	subPhases    bool // phases also reaches the hook from inside subgraph runs
	stopCheck    func() bool
	runCtx       any // WithRunContext
	lease        leaseConfig
	valueLimit   int // WithValueLimit
	// set for subgraph runs
	parents  map[string]string
	parentRT *runtime
}

// newWriteConfig is newRunConfig for what runs or writes: those always
// act on the graph itself, whatever namespace an option named (a
// subgraph's runs get their namespace from their parent task).
func newWriteConfig(opts []RunOption) *runConfig {
	c := newRunConfig(opts)
	c.ns = ""
	return c
}

func newRunConfig(opts []RunOption) *runConfig {
	c := &runConfig{limit: 25, observerBuf: defaultObserverBuf}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithThread runs on the thread id: its checkpoints are loaded and extended.
// Required when the graph has a saver.
func WithThread(id string) RunOption { return func(c *runConfig) { c.thread = id } }

// WithCheckpoint starts from the checkpoint id of the thread instead of its
// latest: with nil input it replays from there (time travel), with new input
// it branches from there.
func WithCheckpoint(id string) RunOption { return func(c *runConfig) { c.checkpointID = id } }

// WithRecursionLimit sets how many super-steps a run may take (default 25),
// counted as LangGraph counts them.
func WithRecursionLimit(n int) RunOption { return func(c *runConfig) { c.limit = n } }

// WithDurability sets when checkpoints are written (default async).
func WithDurability(d Durability) RunOption { return func(c *runConfig) { c.durability = d } }

// BreakBefore replaces the compiled breakpoints before nodes for this run
// ("*" for every node; no names clears them). A node inside a subgraph node
// is named with its path: "child|inner" stops before inner in the subgraph
// that node child runs (those then replace the subgraph's compiled ones).
func BreakBefore(nodes ...string) RunOption {
	return func(c *runConfig) { c.before, c.beforeSet = nodes, true }
}

// BreakAfter replaces the compiled breakpoints after nodes for this run;
// names are as for BreakBefore.
func BreakAfter(nodes ...string) RunOption {
	return func(c *runConfig) { c.after, c.afterSet = nodes, true }
}

// WithStepLimit stops the run cleanly after n super-steps (0 means no
// limit), as a debugger's "step": the result says what runs next and a later
// run with nil input continues.
func WithStepLimit(n int) RunOption { return func(c *runConfig) { c.stepLimit = n } }

// WithStopCheck asks stop before each super-step; when it returns true the
// run pauses there cleanly, as with WithStepLimit. It is called on the run's
// goroutine and must be fast.
func WithStopCheck(stop func() bool) RunOption { return func(c *runConfig) { c.stopCheck = stop } }

// WithObserver calls fn with every event of the selected modes. fn runs on a
// goroutine of its own, fed by a buffer of 4,096 events: a slow observer
// never blocks the run; events that find the buffer full are dropped and
// counted in Result.Dropped. Invoke returns after fn has seen every event
// that was not dropped.
func WithObserver(modes StreamMode, fn func(Event)) RunOption {
	return func(c *runConfig) { c.modes |= modes; c.observer = fn }
}

// WithRunID tags the run's checkpoints with id (metadata run_id).
func WithRunID(id string) RunOption { return func(c *runConfig) { c.runID = id } }

// WithMetadata adds the user's keys to the metadata of the run's checkpoints.
func WithMetadata(md map[string]any) RunOption {
	return func(c *runConfig) { c.metadata = maps.Clone(md) }
}

// WithSubgraphs makes GetState include each pending subgraph task's own
// state (TaskState.State), as LangGraph's get_state(subgraphs=True); in a
// run's stream it changes nothing: events of subgraphs always carry their
// namespace.
func WithSubgraphs() RunOption { return func(c *runConfig) { c.subgraphs = true } }

// WithNamespace makes GetState and History read a subgraph run's own
// checkpoints: ns is a subgraph task's namespace, as TaskState.NS and
// Event.NS give it ("node:<task id>", nested levels joined by "|"), and the
// snapshots are of that subgraph's channels. "" is the graph itself. Runs
// ignore it.
func WithNamespace(ns string) RunOption { return func(c *runConfig) { c.ns = ns } }

// WithNewBranch makes a run from a checkpoint (WithCheckpoint, nil input)
// start with a fork copy of it even when it is a manual update or fork that
// is still the thread's newest, where LangGraph would continue it as it is:
// to re-create, as a replay does, a branch that was made when it was not
// the newest.
func WithNewBranch() RunOption { return func(c *runConfig) { c.newBranch = true } }

// defaultObserverBuf is how many events an observer may fall behind by
// before the next ones are dropped (and counted).
const defaultObserverBuf = 4096
