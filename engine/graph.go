package engine

// This file holds the compiled Graph and what it tells callers about itself.

import (
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/longterm"
	"github.com/weftstudio/weft/checkpoint/nodecache"
)

// Graph is a compiled, runnable graph. It is immutable and safe for
// concurrent runs; each run keeps its own channels.
type Graph struct {
	name   string
	specs  []*chanSpec // state channels first (nState of them), then internal ones
	nState int
	// triggers counts the specs that are nodes' trigger channels.
	triggers int
	chanIdx  map[string]int
	startCh  int
	tasksCh  int
	nodes    []*node // sorted by name, so a node's index orders it by name
	nodeIdx  map[string]int
	// declared lists node indexes in the order the nodes were added, START
	// first: the order tasks are planned in when any node may run.
	declared []int
	// trigToNodes lists, per channel, the nodes it triggers (sorted by name).
	trigToNodes [][]int
	saver       checkpoint.Saver
	store       longterm.Store // WithStore; nil when none
	before      []string
	after       []string
	topo        Topology
	reference   Reference       // WithReference
	cache       nodecache.Cache // WithCache
	memo        *hitMemo        // decoded cache hits (cache.go)
	hooks       []RunHook       // WithRunHook, in the order given
	view        *viewOf         // NewView; nil for a graph that runs
	// scratch pools putScratch between runs; shared by WithSaver copies,
	// which have the same channels and nodes.
	scratch *sync.Pool
	// bufs pools the step buffers of finished runs (*stepBufs): growing
	// them was a fifth of a short run's allocations.
	bufs *sync.Pool
}

type node struct {
	name     string
	idx      int
	fn       NodeFunc
	sub      *Graph
	pullPath string // "pull:<name>", the path of its pull tasks
	start    bool   // the hidden __start__ node
	deferred bool
	retry    *RetryPolicy
	cache    *CachePolicy
	timeout  time.Duration
	onInput  bool  // triggered by the input itself (OnInput)
	triggers []int // channel indexes, sorted
	// trigNames joins the triggers' names with commas, as its pull
	// tasks' ids hash them.
	trigNames string
	edges     []int // branch:to:Y channels written after the node
	joins     []int // join channels the node arrives at
	branches  []*branchDef
}

// Name returns the graph's name.
func (gr *Graph) Name() string { return gr.name }

// Topology returns the graph's shape for rendering. The result is shared:
// do not modify it.
func (gr *Graph) Topology() *Topology { return &gr.topo }

// Saver returns the saver given at Compile, or nil.
func (gr *Graph) Saver() checkpoint.Saver { return gr.saver }

// Store returns the long-term store given at Compile (WithStore), or nil.
func (gr *Graph) Store() longterm.Store { return gr.store }

// WithStore returns a copy of the graph whose nodes get the long-term store
// s, for tools that open the user's compiled graphs on a file of their own
// (as WithSaver does for checkpoints).
func (gr *Graph) WithStore(s longterm.Store) *Graph {
	c := *gr
	c.store = s
	return &c
}

// Channels returns the state schema, in declaration order.
func (gr *Graph) Channels() []ChannelInfo {
	out := make([]ChannelInfo, gr.nState)
	for i := range out {
		out[i] = gr.specs[i].info()
	}
	return out
}

// Nodes returns the names of the graph's nodes (without START and END),
// sorted.
func (gr *Graph) Nodes() []string {
	if gr.view != nil {
		return gr.viewNodes()
	}
	out := make([]string, 0, len(gr.nodes))
	for _, n := range gr.nodes {
		if !n.start {
			out = append(out, n.name)
		}
	}
	return out
}

// WithSaver returns a copy of the graph that stores its checkpoints in s,
// for tools such as the studio that open the user's compiled graphs on a
// store of their own. Subgraphs follow their parent's saver.
func (gr *Graph) WithSaver(s checkpoint.Saver) *Graph {
	c := *gr
	c.saver = s
	return &c
}

// DecodeValues parses a JSON object of channel values (an input form, an
// edited state) into Values with each value decoded into its channel's Go
// type. Unknown keys and values that do not fit are errors naming the key.
func (gr *Graph) DecodeValues(data []byte) (Values, error) {
	v, err := valuesCodec{gr}.decode(data)
	if err != nil {
		return nil, fmt.Errorf("graph %q input: %w", gr.name, err)
	}
	return v.(Values), nil
}

// DecodeValue parses the JSON of one channel's value into its Go type.
func (gr *Graph) DecodeValue(channel string, data []byte) (any, error) {
	i, ok := gr.chanIdx[channel]
	if !ok || i >= gr.nState {
		return nil, fmt.Errorf("graph %q has no channel %q", gr.name, channel)
	}
	v, err := gr.specs[i].codec.decode(data)
	if err != nil {
		return nil, fmt.Errorf("channel %q: %w", channel, err)
	}
	return v, nil
}

// Write returns a Write of v to the named channel after checking that the
// channel exists and accepts v, for tools that build updates from data.
func (gr *Graph) Write(channel string, v any) (Write, error) {
	i, ok := gr.chanIdx[channel]
	if !ok || i >= gr.nState {
		return Write{}, fmt.Errorf("graph %q has no channel %q", gr.name, channel)
	}
	if err := gr.specs[i].checkWrite(v); err != nil {
		return Write{}, fmt.Errorf("channel %q: %w", channel, err)
	}
	return Write{channel, v}, nil
}

// Replace returns a Write that sets the named channel to v outright: an
// Overwrite for reducer channels (so editing a list replaces it rather than
// appending), a plain write otherwise.
func (gr *Graph) Replace(channel string, v any) (Write, error) {
	w, err := gr.Write(channel, v)
	if err != nil {
		return w, err
	}
	if gr.specs[gr.chanIdx[channel]].kind == "reducer" {
		w.Value = Overwrite{v}
	}
	return w, nil
}

// Breakpoints returns the static breakpoints given at Compile (before and
// after nodes; "*" means every node), for tools that show them. nil means
// none.
func (gr *Graph) Breakpoints() (before, after []string) {
	return slices.Clone(gr.before), slices.Clone(gr.after)
}
