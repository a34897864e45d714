package agentclient

import (
	"encoding/json"
	"time"
)

// Info is GET /info: the server's version and feature flags.
type Info struct {
	// Version is the API server's version ("1.5.1" for langgraph-api).
	Version string `json:"version"`
	// LangGraphJSVersion and LangGraphPyVersion name the LangGraph the
	// server runs; empty when the server does not say.
	LangGraphJSVersion string `json:"langgraph_js_version,omitempty"`
	LangGraphPyVersion string `json:"langgraph_py_version,omitempty"`
	// Context is "js" on LangGraph.js servers; empty when not said.
	Context string `json:"context,omitempty"`
	// Flags are the server's feature switches (assistants, crons, …).
	Flags map[string]any `json:"flags,omitempty"`
}

// Assistant is a graph as served, with its configuration. LangGraph
// servers make one per graph; its GraphID is accepted wherever an
// assistant id is.
type Assistant struct {
	AssistantID string         `json:"assistant_id"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name,omitempty"`
	Description *string        `json:"description,omitempty"`
	Version     int            `json:"version,omitempty"`
	Config      map[string]any `json:"config,omitempty"`
	Context     map[string]any `json:"context,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// AssistantSearch filters POST /assistants/search; zero fields do not
// filter (Limit 0 is the server's default).
type AssistantSearch struct {
	GraphID  string         `json:"graph_id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Limit    int            `json:"limit,omitempty"`
	Offset   int            `json:"offset,omitempty"`
}

// Graph is an assistant's drawing: nodes and edges. With x-ray, a
// subgraph's nodes are inlined as "parent:child".
type Graph struct {
	Nodes []GraphNode `json:"nodes"`
	Edges []GraphEdge `json:"edges"`
}

// GraphNode is one node of a drawing. Type is "schema" for __start__ and
// __end__ and "runnable" otherwise; Data names the node's class
// (Data["id"] ends in CompiledStateGraph for a subgraph, ToolNode for a
// tool node).
type GraphNode struct {
	ID       string         `json:"id"`
	Type     string         `json:"type,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// GraphEdge is one edge; Conditional edges go to declared targets only.
type GraphEdge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Conditional bool   `json:"conditional,omitempty"`
	Data        any    `json:"data,omitempty"`
}

// Schemas are an assistant's JSON Schemas (draft-07 on LangGraph.js);
// a schema the server does not give is nil.
type Schemas struct {
	GraphID       string          `json:"graph_id"`
	InputSchema   json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema  json.RawMessage `json:"output_schema,omitempty"`
	StateSchema   json.RawMessage `json:"state_schema,omitempty"`
	ConfigSchema  json.RawMessage `json:"config_schema,omitempty"`
	ContextSchema json.RawMessage `json:"context_schema,omitempty"`
}

// Thread is a thread's record. Status is idle, busy, interrupted or
// error; Interrupts are keyed by the id of the task that asked (the
// inner task for a subgraph's interrupt). Values are the server's last
// values, which on LangGraph.js may be a subgraph's after a subgraph
// interrupt: read GetState for the parent's.
type Thread struct {
	ThreadID   string                 `json:"thread_id"`
	CreatedAt  time.Time              `json:"created_at"`
	UpdatedAt  time.Time              `json:"updated_at"`
	Metadata   map[string]any         `json:"metadata,omitempty"`
	Status     string                 `json:"status,omitempty"`
	Config     map[string]any         `json:"config,omitempty"`
	Values     json.RawMessage        `json:"values,omitempty"`
	Interrupts map[string][]Interrupt `json:"interrupts,omitempty"`
}

// ThreadCreate is POST /threads. An empty ThreadID lets the server pick
// one; IfExists is "raise" (the server's default: 409) or "do_nothing".
type ThreadCreate struct {
	ThreadID string         `json:"thread_id,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	IfExists string         `json:"if_exists,omitempty"`
}

// ThreadSearch filters POST /threads/search; zero fields do not filter.
// Select names the fields to return (thread records carry their full
// values, so listing many threads wants it).
type ThreadSearch struct {
	Metadata  map[string]any `json:"metadata,omitempty"`
	Values    map[string]any `json:"values,omitempty"`
	Status    string         `json:"status,omitempty"`
	Limit     int            `json:"limit,omitempty"`
	Offset    int            `json:"offset,omitempty"`
	SortBy    string         `json:"sort_by,omitempty"`
	SortOrder string         `json:"sort_order,omitempty"`
	Select    []string       `json:"select,omitempty"`
}

// Interrupt is a pending interrupt: its id (what a resume-by-id map is
// keyed by) and the value the node asked with.
type Interrupt struct {
	ID    string          `json:"id"`
	Value json.RawMessage `json:"value,omitempty"`
}

// CheckpointRef names a checkpoint: its thread, namespace ("" for the
// root graph, "node:task" for a subgraph) and id.
type CheckpointRef struct {
	ThreadID      string            `json:"thread_id,omitempty"`
	CheckpointNS  string            `json:"checkpoint_ns"`
	CheckpointID  string            `json:"checkpoint_id,omitempty"`
	CheckpointMap map[string]string `json:"checkpoint_map,omitempty"`
}

// Task is a task of a snapshot: a node due to run (or that ran, for a
// past checkpoint: Result holds its writes). Checkpoint names a
// subgraph's namespace; State holds the subgraph's own snapshot when the
// state was read with subgraphs. Error is null or the server's error
// (a string or an object).
type Task struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Path       json.RawMessage `json:"path,omitempty"`
	Error      json.RawMessage `json:"error,omitempty"`
	Interrupts []Interrupt     `json:"interrupts,omitempty"`
	Checkpoint *CheckpointRef  `json:"checkpoint,omitempty"`
	State      *StateSnapshot  `json:"state,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
}

// StateSnapshot is a thread's state at a checkpoint: its values, the
// nodes due next and their tasks, the checkpoint's metadata (source,
// step, parents, run_id, …) and the checkpoint with its parent.
// ParentCheckpoint is nil for a thread's first checkpoint.
type StateSnapshot struct {
	Values           json.RawMessage `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []Task          `json:"tasks,omitempty"`
	Metadata         map[string]any  `json:"metadata,omitempty"`
	CreatedAt        time.Time       `json:"created_at"`
	Checkpoint       CheckpointRef   `json:"checkpoint"`
	ParentCheckpoint *CheckpointRef  `json:"parent_checkpoint,omitempty"`
}

// Step is the checkpoint's step from its metadata (-1 for the input
// checkpoint); 0 when the metadata has none.
func (s *StateSnapshot) Step() int {
	f, _ := s.Metadata["step"].(float64)
	return int(f)
}

// Source is the checkpoint's source from its metadata: input, loop,
// update or fork; "" when the metadata has none.
func (s *StateSnapshot) Source() string {
	src, _ := s.Metadata["source"].(string)
	return src
}

// ParentID is the parent checkpoint's id, "" for the first checkpoint.
func (s *StateSnapshot) ParentID() string {
	if s.ParentCheckpoint == nil {
		return ""
	}
	return s.ParentCheckpoint.CheckpointID
}

// Interrupts lists the snapshot's pending interrupts, each once, walking
// the subgraph snapshots of its tasks too (a subgraph's interrupt shows
// on its parent's task as well).
func (s *StateSnapshot) Interrupts() []Interrupt {
	var out []Interrupt
	seen := map[string]bool{}
	var walk func(*StateSnapshot)
	walk = func(sn *StateSnapshot) {
		for _, t := range sn.Tasks {
			for _, it := range t.Interrupts {
				if it.ID != "" && seen[it.ID] {
					continue
				}
				seen[it.ID] = true
				out = append(out, it)
			}
			if t.State != nil {
				walk(t.State)
			}
		}
	}
	walk(s)
	return out
}

// StateQuery chooses what GetState reads: the head (CheckpointID empty)
// or a past checkpoint, of the root graph (CheckpointNS empty) or of a
// subgraph's namespace, and whether subgraphs' snapshots are inlined in
// their tasks.
type StateQuery struct {
	CheckpointID string
	// CheckpointNS names a subgraph's namespace ("node:task id"); a
	// checkpoint of it is read through POST /threads/{id}/state/checkpoint,
	// the only form that takes one.
	CheckpointNS string
	Subgraphs    bool
}

// StateUpdate is POST /threads/{id}/state: values written as if AsNode
// had returned them (empty: the server picks the last writer), on top of
// CheckpointID (empty: the thread's head), which makes a fork.
type StateUpdate struct {
	Values       any    `json:"values"`
	AsNode       string `json:"as_node,omitempty"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// HistoryQuery is POST /threads/{id}/history: at most Limit snapshots
// (0: the server's default, 10 on LangGraph servers), newest first,
// older than the checkpoint id Before, whose metadata contains Metadata,
// in namespace CheckpointNS ("" is the root graph).
type HistoryQuery struct {
	Limit        int
	Before       string
	Metadata     map[string]any
	CheckpointNS string
}

// Run is a run's record. Status is pending, running, success, error,
// timeout or interrupted.
type Run struct {
	RunID             string          `json:"run_id"`
	ThreadID          string          `json:"thread_id"`
	AssistantID       string          `json:"assistant_id"`
	Status            string          `json:"status"`
	Metadata          map[string]any  `json:"metadata,omitempty"`
	MultitaskStrategy string          `json:"multitask_strategy,omitempty"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	Kwargs            json.RawMessage `json:"kwargs,omitempty"`
}

// Command resumes, updates or redirects an interrupted thread. Resume is
// the value for the single pending interrupt, or a map from interrupt id
// to value (ResumeByID) when several are pending; Update is written
// before resuming; Goto names the node(s) to run next. Nil fields are
// not sent.
type Command struct {
	Resume any `json:"resume,omitempty"`
	Update any `json:"update,omitempty"`
	Goto   any `json:"goto,omitempty"`
}

// ResumeByID is a Command answering interrupts by id.
func ResumeByID(answers map[string]any) Command { return Command{Resume: answers} }

// RunConfig is a run's config; Configurable reaches the graph's nodes.
type RunConfig struct {
	Configurable   map[string]any `json:"configurable,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	RecursionLimit int            `json:"recursion_limit,omitempty"`
}

// RunRequest starts a run. AssistantID (or a graph id) is required.
// Input nil sends none: with CheckpointID that replays from the
// checkpoint; with Command it resumes. Zero fields are not sent and
// take the server's defaults.
type RunRequest struct {
	AssistantID string     `json:"assistant_id"`
	Input       any        `json:"input,omitempty"`
	Command     *Command   `json:"command,omitempty"`
	Config      *RunConfig `json:"config,omitempty"`
	// Context is the run's context (LangGraph 0.6+ runtime context).
	Context  map[string]any `json:"context,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// StreamMode lists the modes to stream (values, updates, messages,
	// messages-tuple, custom, events, debug, tasks, checkpoints);
	// empty is the server's default (values).
	StreamMode      []string `json:"stream_mode,omitempty"`
	StreamSubgraphs bool     `json:"stream_subgraphs,omitempty"`
	// StreamResumable asks the server to keep the run's events so a
	// cut stream can be resumed with Last-Event-ID (LangGraph servers
	// keep them only when asked).
	StreamResumable bool `json:"stream_resumable,omitempty"`
	// InterruptBefore and InterruptAfter are static breakpoints: node
	// names, or ["*"] for all. LangGraph.js accepts unknown names
	// silently.
	InterruptBefore []string `json:"interrupt_before,omitempty"`
	InterruptAfter  []string `json:"interrupt_after,omitempty"`
	// CheckpointID runs from that checkpoint instead of the head: a
	// replay or the continuation of a fork. Send it when resuming too:
	// without it LangGraph may reuse an older answer (see Resume).
	CheckpointID string `json:"checkpoint_id,omitempty"`
	// MultitaskStrategy is what to do when the thread is busy: reject
	// (the default), interrupt, rollback or enqueue.
	MultitaskStrategy string `json:"multitask_strategy,omitempty"`
	// IfNotExists is "create" to make the thread if missing, or
	// "reject" (the default).
	IfNotExists string `json:"if_not_exists,omitempty"`
	// OnDisconnect is "cancel" or "continue": what the server does with
	// a streamed run whose client goes away.
	OnDisconnect string `json:"on_disconnect,omitempty"`
	OnCompletion string `json:"on_completion,omitempty"`
}

// CancelOptions are the query of a cancel: Wait answers once the run has
// stopped; Action is "interrupt" (the default: the run ends interrupted)
// or "rollback" (the run and its checkpoints are deleted).
type CancelOptions struct {
	Wait   bool
	Action string
}
