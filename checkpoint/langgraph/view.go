package langgraph

import (
	"encoding/hex"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/zeebo/xxh3"

	"github.com/weftstudio/weft/checkpoint"
)

// Snapshot is what LangGraph's get_state / getState reports for one
// checkpoint, computed from the store alone.
type Snapshot struct {
	Values       map[string]any `json:"values"`
	Next         []string       `json:"next"`
	ThreadID     string         `json:"thread_id"`
	NS           string         `json:"checkpoint_ns"`
	CheckpointID string         `json:"checkpoint_id"`
	ParentID     string         `json:"parent_checkpoint_id,omitempty"`
	Metadata     map[string]any `json:"metadata"`
	CreatedAt    string         `json:"created_at"`
	Tasks        []Task         `json:"tasks"`
	// Ran names the tasks whose writes made this checkpoint (Checkpoint.Ran).
	Ran []string `json:"ran,omitempty"`
	// Guessed names, sorted, the channels whose value applied a pending
	// write by a guessed reducer: the store keeps no channel types, and
	// nothing in the thread showed whether the channel appends or keeps
	// the last write (a list written once), so the write's list replaced
	// the value where LangGraph, knowing the graph, may have appended it.
	// Nil when no value was guessed.
	Guessed []string `json:"weft_guessed_reducers,omitempty"`
}

// Task is one task of a Snapshot.
type Task struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Path       []any  `json:"path"`
	Error      any    `json:"error"`
	Interrupts []any  `json:"interrupts"`
	// Result is the task's writes by channel; nil when it wrote nothing.
	Result map[string]any `json:"result"`
	// State is the subgraph's snapshot (State with subgraphs), or its
	// namespace (SubgraphNS, in history) when the task ran a subgraph.
	State      *Snapshot `json:"state,omitempty"`
	SubgraphNS string    `json:"subgraph_ns,omitempty"`
}

// State is LangGraph's get_state(subgraphs=True) of the thread's newest
// root checkpoint: pending writes applied, subgraphs that are waiting
// nested in their task.
func (t *Thread) State(js bool) (*Snapshot, error) {
	head := t.latest("")
	if head == nil {
		return nil, checkpoint.ErrNotFound
	}
	return t.snapshot(head, js, true, true), head.Err
}

// StateAt is LangGraph's get_state(subgraphs=True) of one checkpoint of
// the root namespace ("" is the newest), or checkpoint.ErrNotFound. As in
// both LangGraphs, a checkpoint named by id is that checkpoint's own
// values, its pending writes not applied (they are what made its child);
// only the newest, asked for without an id, has them applied
// (applyPendingWrites: !config.configurable.checkpoint_id).
func (t *Thread) StateAt(id string, js bool) (*Snapshot, error) {
	return t.StateIn("", id, js)
}

// StateIn is StateAt for a checkpoint of namespace ns (a subgraph's,
// "NODE:task_id" segments joined by "|"; "" the root), id "" its newest:
// what LangGraph's get_state reports for a config naming that namespace.
func (t *Thread) StateIn(ns, id string, js bool) (*Snapshot, error) {
	c := t.latest(ns)
	if id != "" {
		c = t.byID(ns, id)
	}
	if c == nil {
		return nil, checkpoint.ErrNotFound
	}
	return t.snapshot(c, js, id == "", true), c.Err
}

// History is LangGraph's get_state_history of the root namespace, newest
// first: each checkpoint's own values (pending writes not applied).
func (t *Thread) History(js bool) []*Snapshot {
	var out []*Snapshot
	for _, c := range t.Checkpoints {
		if c.NS == "" {
			out = append(out, t.snapshot(c, js, false, false))
		}
	}
	return out
}

// index builds the thread's lookups once, so a long history costs one
// pass, not one per checkpoint.
func (t *Thread) index() {
	if t.ids != nil {
		return
	}
	t.ids = map[[2]string]*Checkpoint{}
	t.heads = map[string]*Checkpoint{}
	for _, c := range t.Checkpoints { // newest first
		t.ids[[2]string{c.NS, c.ID}] = c
		if t.heads[c.NS] == nil {
			t.heads[c.NS] = c
		}
	}
}

func (t *Thread) latest(ns string) *Checkpoint { t.index(); return t.heads[ns] }

func (t *Thread) byID(ns, id string) *Checkpoint { t.index(); return t.ids[[2]string{ns, id}] }

// Checkpoint returns the thread's checkpoint id of namespace ns ("" the
// root), nil when there is none; looked up in an index built once.
func (t *Thread) Checkpoint(ns, id string) *Checkpoint { return t.byID(ns, id) }

// special reports whether a channel is LangGraph's own, not a state key.
func special(ch string) bool {
	return strings.HasPrefix(ch, "__") || strings.HasPrefix(ch, "branch:") || strings.HasPrefix(ch, "join:") || strings.HasPrefix(ch, "start:")
}

type nextTask struct {
	Task
	writes []Write // the task's own pending writes (not errors or interrupts)
}

func (t *Thread) snapshot(c *Checkpoint, js, apply, recurse bool) *Snapshot {
	s := &Snapshot{ThreadID: t.ID, NS: c.NS, CheckpointID: c.ID, ParentID: c.Parent, CreatedAt: c.TS, Ran: c.Ran,
		Metadata: c.Metadata, Values: map[string]any{}, Next: []string{}, Tasks: []Task{}}
	if js {
		md := map[string]any{}
		for k, v := range c.Metadata {
			md[k] = v
		}
		md["thread_id"] = t.ID // LangGraph.js' getState adds the config's thread id
		s.Metadata = md
	}
	if c.Err != nil {
		return s
	}
	values := map[string]any{}
	for k, v := range c.Values {
		values[k] = v
	}
	tasks := t.nextTasks(c, js)
	byID := map[string]*nextTask{}
	for i := range tasks {
		byID[tasks[i].ID] = &tasks[i]
	}
	for _, w := range c.Writes {
		task, ok := byID[w.TaskID]
		switch {
		case w.TaskID == checkpoint.NullTaskID || !ok:
			continue
		case w.Channel == checkpoint.Error:
			task.Error = w.Value
		case w.Channel == checkpoint.Interrupt:
			if list, ok := w.Value.([]any); ok {
				task.Interrupts = append(task.Interrupts, list...)
			}
		case w.Channel == checkpoint.Resume || w.Channel == checkpoint.Scheduled:
		default:
			task.writes = append(task.writes, w)
		}
	}
	if apply {
		var null []Write
		for _, w := range c.Writes {
			if w.TaskID == checkpoint.NullTaskID {
				null = append(null, w)
			}
		}
		guessed := map[string]bool{}
		t.applyWrites(c, values, null, guessed)
		for _, task := range tasks {
			t.applyWrites(c, values, task.writes, guessed)
		}
		for ch := range guessed {
			s.Guessed = append(s.Guessed, ch)
		}
		sort.Strings(s.Guessed)
	}
	for k, v := range values {
		if !special(k) {
			s.Values[k] = v
		}
	}
	// A channel with a list reducer always has a value: its empty list
	// (LangGraph's BinaryOperatorAggregate starts from the type's zero).
	for key, r := range t.reducers() {
		if _, ok := s.Values[key.ch]; !ok && key.ns == c.NS && (r == "append" || r == "messages") {
			s.Values[key.ch] = []any{}
		}
	}
	for _, task := range tasks {
		if !apply || len(task.writes) == 0 {
			s.Next = append(s.Next, task.Name)
		}
		if !js && len(task.writes) > 0 {
			task.Result = map[string]any{} // Python shows {} for a task that wrote only edges
		}
		for _, w := range task.writes {
			if !special(w.Channel) {
				if task.Result == nil {
					task.Result = map[string]any{}
				}
				task.Result[w.Channel] = w.Value
			}
		}
		subNS := task.Name + ":" + task.ID
		if c.NS != "" {
			subNS = c.NS + "|" + subNS
		}
		if sub := t.latest(subNS); sub != nil {
			if recurse {
				if len(task.writes) == 0 {
					task.State = t.snapshot(sub, js, true, true)
				}
			} else {
				task.SubgraphNS = subNS
			}
		}
		if task.Interrupts == nil {
			task.Interrupts = []any{}
		}
		s.Tasks = append(s.Tasks, task.Task)
	}
	return s
}

// applyWrites applies writes to values as LangGraph's channels would. The
// store keeps no channel types, so each channel's reducer is inferred from
// the thread: a list of messages merges by id (add_messages), a list that
// grew by a write's items elsewhere in the thread appends, anything else
// keeps the last write. A list written over a list whose channel showed
// neither is a guess, named in guessed.
func (t *Thread) applyWrites(c *Checkpoint, values map[string]any, writes []Write, guessed map[string]bool) {
	for _, w := range writes {
		if special(w.Channel) {
			continue
		}
		switch t.reducer(c.NS, w.Channel) {
		case "messages":
			values[w.Channel] = addMessages(values[w.Channel], w.Value)
		case "append":
			old, _ := values[w.Channel].([]any)
			add, ok := w.Value.([]any)
			if !ok {
				add = []any{w.Value}
			}
			values[w.Channel] = append(append([]any{}, old...), add...)
		case "":
			_, oldList := values[w.Channel].([]any)
			_, newList := w.Value.([]any)
			if oldList && newList {
				guessed[w.Channel] = true
			}
			values[w.Channel] = w.Value
		default:
			values[w.Channel] = w.Value
		}
	}
}

type nsChannel struct{ ns, ch string }

// reducers infers, once per thread, the reducer of every state channel of
// every namespace ("messages", "append", "last" for the last write, or ""
// when the thread does not show, which is taken for the last write).
func (t *Thread) reducers() map[nsChannel]string {
	if t.reducerOf == nil {
		t.reducerOf = map[nsChannel]string{}
		for _, c := range t.Checkpoints {
			for ch := range c.Values {
				if !special(ch) {
					t.reducerOf[nsChannel{c.NS, ch}] = ""
				}
			}
		}
		for k := range t.reducerOf {
			t.reducerOf[k] = t.inferReducer(k.ns, k.ch)
		}
	}
	return t.reducerOf
}

func (t *Thread) reducer(ns, ch string) string { return t.reducers()[nsChannel{ns, ch}] }

// nodeOrder ranks the thread's nodes in the order the graph declares them,
// as far as the store shows it: LangGraph lists a step's tasks in the
// graph's node order, which is not stored, but a task writes its edges
// (branch:to:NODE) in the order they were added, and the oldest such write
// of each node gives an order close to the graph's (LangGraph.js writes
// edges in the order they were added; Python in set order, so it is used
// for JS only). Nodes never written to
// come after, by name; __start__ comes first.
func (t *Thread) nodeOrder() map[string]int {
	if t.order == nil {
		t.order = map[string]int{"__start__": -1}
		for i := len(t.Checkpoints) - 1; i >= 0; i-- { // oldest first
			ws := t.Checkpoints[i].Writes
			sorted := append([]Write{}, ws...)
			sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].Idx < sorted[b].Idx })
			for _, w := range sorted {
				if n, ok := strings.CutPrefix(w.Channel, "branch:to:"); ok {
					if _, seen := t.order[n]; !seen {
						t.order[n] = len(t.order)
					}
				}
			}
		}
	}
	return t.order
}

// inferReducer infers a channel's reducer from what the thread shows: a
// list of messages merges by id; a list that grew by a step's writes, or
// that several tasks of one step wrote (a plain channel refuses that),
// appends; a value a step replaced with something that is not its
// extension, or a value that is not a list, keeps the last write ("last").
// A list only ever written once by one task cannot be told from a plain
// list: "" (unknown), taken for the last write, and flagged where applied
// (Snapshot.Guessed).
func (t *Thread) inferReducer(ns, ch string) string {
	last := false
	for _, c := range t.Checkpoints {
		if c.NS != ns {
			continue
		}
		if isMessages(c.Values[ch]) {
			return "messages"
		}
		writers := map[string]bool{}
		for _, w := range c.Writes {
			if w.Channel == ch {
				if _, isList := w.Value.([]any); isList {
					writers[w.TaskID] = true
				}
			}
		}
		if len(writers) > 1 {
			return "append"
		}
		v, has := c.Values[ch]
		now, ok := v.([]any)
		if has && v != nil && !ok {
			last = true // not a list: no list reducer
		}
		parent := t.byID(ns, c.Parent)
		if !ok || parent == nil {
			continue
		}
		old, _ := parent.Values[ch].([]any)
		if len(old) > 0 && len(now) > len(old) && reflect.DeepEqual(now[:len(old)], old) {
			return "append"
		}
		if len(old) > 0 && !reflect.DeepEqual(now, old) && (len(now) <= len(old) || !reflect.DeepEqual(now[:len(old)], old)) {
			last = true // replaced, not extended
		}
	}
	if last {
		return "last"
	}
	return ""
}

func isMessages(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	m, ok := list[0].(map[string]any)
	_, lc := m["langchain"]
	return ok && lc
}

// addMessages merges right into left by message id, as add_messages does
// (removal markers delete).
func addMessages(left, right any) any {
	l, _ := left.([]any)
	r, ok := right.([]any)
	if !ok {
		r = []any{right}
	}
	out := append([]any{}, l...)
	index := func(id any) int {
		for i, m := range out {
			if mm, ok := m.(map[string]any); ok && mm["id"] == id {
				return i
			}
		}
		return -1
	}
	for _, m := range r {
		mm, _ := m.(map[string]any)
		i := index(mm["id"])
		switch {
		case mm["role"] == "remove":
			if i >= 0 {
				out = append(out[:i], out[i+1:]...)
			}
		case i >= 0:
			out[i] = m
		default:
			out = append(out, m)
		}
	}
	return out
}

// nextTasks computes the tasks LangGraph would run from c: PUSH tasks for
// the Sends in __pregel_tasks, then PULL tasks for every node one of whose
// trigger channels (branch:to:NODE, join:…:NODE, __start__) has a value and
// a version newer than the node has seen, sorted by name (LangGraph sorts
// the nodes it finds through updated channels).
func (t *Thread) nextTasks(c *Checkpoint, js bool) []nextTask {
	var out []nextTask
	if sends, ok := c.Values[checkpoint.Tasks].([]any); ok {
		for i, s := range sends {
			m, _ := s.(map[string]any)
			node, _ := m["node"].(string)
			out = append(out, nextTask{Task: Task{
				ID:   taskID(js, c, node, "__pregel_push", strconv.Itoa(i), nil),
				Name: node, Path: []any{"__pregel_push", float64(i), false}}})
		}
	}
	triggers := map[string][]string{} // node → its trigger channels
	for ch := range c.Versions {
		if node, ok := triggerNode(ch); ok {
			triggers[node] = append(triggers[node], ch)
		}
	}
	nodes := sortedKeys(triggers)
	order := t.nodeOrder()
	if !js {
		// Python writes a task's edges in set order, so its writes say
		// nothing of the graph's order; names sort as LangGraph's loop
		// sorts the nodes it triggers.
		order = map[string]int{"__start__": -1}
	}
	sort.SliceStable(nodes, func(i, j int) bool {
		oi, iok := order[nodes[i]]
		oj, jok := order[nodes[j]]
		if iok != jok {
			return iok
		}
		return iok && oi < oj
	})
	for _, node := range nodes {
		chans := triggers[node]
		sort.Strings(chans)
		var fired []string
		for _, ch := range chans {
			v, has := c.Values[ch]
			if !has || !joinReady(ch, v) {
				continue
			}
			if c.Versions[ch] > c.Seen[node][ch] {
				fired = append(fired, ch)
			}
		}
		if len(fired) == 0 {
			continue
		}
		// Python hashes all of the node's triggers: branch:to:NODE always,
		// and every join channel of the node the thread shows anywhere in
		// this namespace (one may be absent from this checkpoint).
		var all []string
		if node == "__start__" {
			all = chans
		} else {
			all = append([]string{"branch:to:" + node}, t.joinsOf(c.NS, node)...)
		}
		trig := all
		if js {
			trig = fired[:1] // JS hashes the one trigger that fired
		}
		out = append(out, nextTask{Task: Task{
			ID:   taskID(js, c, node, "__pregel_pull", "", trig),
			Name: node, Path: []any{"__pregel_pull", node}}})
	}
	return out
}

// joinsOf lists, sorted, the join channels of node in namespace ns that
// any checkpoint or write of the thread shows. They are gathered once for
// the whole thread: every task of every checkpoint asks, and a pass over
// the thread each time made reading a long thread quadratic.
func (t *Thread) joinsOf(ns, node string) []string {
	if t.joins == nil {
		sets := map[nsChannel]map[string]bool{}
		add := func(ns, ch string) {
			if !strings.HasPrefix(ch, "join:") {
				return
			}
			if n, ok := triggerNode(ch); ok {
				k := nsChannel{ns, n}
				if sets[k] == nil {
					sets[k] = map[string]bool{}
				}
				sets[k][ch] = true
			}
		}
		for _, c := range t.Checkpoints {
			for ch := range c.Versions {
				add(c.NS, ch)
			}
			for _, w := range c.Writes {
				add(c.NS, w.Channel)
			}
		}
		t.joins = map[nsChannel][]string{}
		for k, set := range sets {
			t.joins[k] = sortedKeys(set)
		}
	}
	return t.joins[nsChannel{ns, node}]
}

func contains(a []string, s string) bool {
	for _, x := range a {
		if x == s {
			return true
		}
	}
	return false
}

// triggerNode names the node a channel triggers.
func triggerNode(ch string) (string, bool) {
	if ch == "__start__" {
		return "__start__", true
	}
	if n, ok := strings.CutPrefix(ch, "branch:to:"); ok {
		return n, true
	}
	if strings.HasPrefix(ch, "join:") {
		i := strings.LastIndex(ch, ":")
		return ch[i+1:], i > len("join:")
	}
	return "", false
}

// joinReady reports whether a join barrier channel has seen every node it
// waits for (other channels are ready whenever they hold a value).
func joinReady(ch string, v any) bool {
	if !strings.HasPrefix(ch, "join:") {
		return true
	}
	names := strings.Split(strings.TrimPrefix(ch[:strings.LastIndex(ch, ":")], "join:"), "+")
	var seen []any
	switch x := v.(type) {
	case []any:
		seen = x
	case map[string]any:
		for _, k := range []string{"$set", "$frozenset"} {
			if s, ok := x[k].([]any); ok {
				seen = s
			}
		}
	}
	have := map[any]bool{}
	for _, s := range seen {
		have[s] = true
	}
	for _, n := range names {
		if !have[n] {
			return false
		}
	}
	return true
}

// taskID is LangGraph's task id recipe (see the package README of the
// fixtures): JS uuid5(checkpoint id, JSON [ns, step, node, kind, last]),
// Python xxh3_128(checkpoint id bytes + ns + step + node + kind + parts).
func taskID(js bool, c *Checkpoint, node, kind, index string, triggers []string) string {
	step := 0
	if f, ok := c.Metadata["step"].(float64); ok {
		step = int(f) + 1
	}
	ns := node
	if c.NS != "" {
		ns = c.NS + "|" + node
	}
	cid, err := uuid.Parse(c.ID)
	if err != nil {
		return ""
	}
	if js {
		var last any = index
		if kind == "__pregel_pull" {
			last = triggers
		}
		name, _ := encodeJSON([]any{ns, strconv.Itoa(step), node, kind, last})
		return uuid.NewSHA1(cid, name).String()
	}
	parts := ns + strconv.Itoa(step) + node + kind
	if kind == "__pregel_pull" {
		parts += strings.Join(triggers, "")
	} else {
		parts += index
	}
	h := xxh3.Hash128(append(cid[:], parts...)).Bytes()
	x := hex.EncodeToString(h[:])
	return x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}
