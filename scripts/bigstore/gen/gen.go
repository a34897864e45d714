// Package gen generates the scale store the studio and the savers are
// measured on: many short threads of one agent-like graph and one very long
// thread, from a seed.
package gen

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Shape says what to generate. The same Shape and Seed give the same
// threads with the same values, steps and sizes; checkpoint ids and times
// are the generation's own (UUIDv7 ids carry the clock).
type Shape struct {
	Seed uint64
	// Threads is the number of short threads, each of ShortTurns turns on
	// average (between half and one and a half times it).
	Threads    int
	ShortTurns int
	// LongTurns is the number of turns of the one long thread, LongThread;
	// each turn is one checkpoint. 0 makes none.
	LongTurns int
	// ValueBytes is the mean size of a reply before compression; replies
	// are drawn from a log-normal distribution around it, and one turn in
	// fifty carries a document of 8 to 32 times it.
	ValueBytes int
}

// Full is the store the README's scale figures are measured on: 10,000
// threads and one thread of 100,000 checkpoints, about 2 GB.
var Full = Shape{Seed: 1, Threads: 10_000, ShortTurns: 40, LongTurns: 100_000, ValueBytes: 2 << 10}

// Small is the in-process variant the quick benchmarks and tests build.
var Small = Shape{Seed: 1, Threads: 200, ShortTurns: 20, LongTurns: 2_000, ValueBytes: 1 << 10}

// LongThread is the id of the long thread.
const LongThread = "long"

// ShortThread returns the id of short thread i.
func ShortThread(i int) string { return fmt.Sprintf("chat-%05d", i) }

var (
	turn  = engine.LastValue[int]("turn")
	limit = engine.LastValue[int]("limit")
	reply = engine.LastValue[string]("reply")
	tool  = engine.LastValue[string]("tool_result")
	topic = engine.LastValue[string]("topic")
)

// GraphName is the name of the generator's graph, recorded in every
// checkpoint.
const GraphName = "bigstore"

// Graph returns the generator's graph on saver: an agent that answers and
// sometimes calls a tool, until its turn reaches the input's limit. Its
// values are drawn from seed and the thread's topic, so a thread is the same
// whenever it is generated.
func Graph(seed uint64, valueBytes int, saver checkpoint.Saver) (*engine.Graph, error) {
	return engine.NewGraph(GraphName, turn, limit, reply, tool, topic).
		AddNode("agent", func(_ context.Context, s engine.State) (engine.Output, error) {
			t := turn.Get(s) + 1
			r := rng(seed, topic.Get(s), t)
			return engine.Updates(turn.Set(t), reply.Set(text(r, size(r, valueBytes)))), nil
		}).
		AddNode("tool", func(_ context.Context, s engine.State) (engine.Output, error) {
			t := turn.Get(s) + 1
			r := rng(seed, topic.Get(s), -t)
			return engine.Updates(turn.Set(t), tool.Set(text(r, size(r, valueBytes/2)))), nil
		}).
		AddEdge(engine.START, "agent").
		AddConditionalEdges("agent", route, engine.Targets("tool", "agent", engine.END)).
		AddConditionalEdges("tool", route, engine.Targets("tool", "agent", engine.END)).
		Compile(engine.WithSaver(saver))
}

// route ends the thread at its limit and otherwise calls the tool one turn
// in three.
func route(_ context.Context, s engine.State) (engine.Route, error) {
	t := turn.Get(s)
	switch {
	case t >= limit.Get(s):
		return engine.To(engine.END), nil
	case t%3 == 1:
		return engine.To("tool"), nil
	}
	return engine.To("agent"), nil
}

// rng is the random source of one turn of one thread.
func rng(seed uint64, thread string, t int) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(thread))
	return rand.New(rand.NewPCG(seed, h.Sum64()^uint64(int64(t))*0x9e3779b97f4a7c15))
}

// size draws a value size around mean: log-normal, with a document of 8 to
// 32 times the mean one time in fifty.
func size(r *rand.Rand, mean int) int {
	if mean <= 0 {
		return 0
	}
	if r.IntN(50) == 0 {
		return mean * (8 + r.IntN(25))
	}
	n := float64(mean) * math.Exp(r.NormFloat64()*0.6-0.18)
	return max(16, int(n))
}

// words make text that compresses as prose does (about 3 to 1).
var words = strings.Fields(`the agent tool call result user asked about weather in paris
tomorrow forecast rain sun temperature degrees celsius wind north report
summary document section table value error retry success step state graph
node edge channel checkpoint thread store model token prompt answer question
please thanks because therefore however although meanwhile finally first
second third data file line number name date time price order invoice
customer account balance payment refund shipping address city country`)

// text returns about n bytes of words drawn from r.
func text(r *rand.Rand, n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// turns returns the number of turns of short thread i.
func (sh Shape) turns(i int) int {
	r := rng(sh.Seed, ShortThread(i), 0)
	lo := max(1, sh.ShortTurns/2)
	return lo + r.IntN(sh.ShortTurns+1)
}

// Generate writes sh into saver: the short threads, then the long one.
// progress, if not nil, is called after each thread with the number of
// threads done and the total.
func Generate(ctx context.Context, saver checkpoint.Saver, sh Shape, progress func(done, total int)) error {
	g, err := Graph(sh.Seed, sh.ValueBytes, saver)
	if err != nil {
		return err
	}
	total := sh.Threads
	if sh.LongTurns > 0 {
		total++
	}
	run := func(thread string, turns int) error {
		// Each turn is one step; the limit also bounds the recursion.
		_, err := g.Invoke(ctx, engine.Values{"topic": thread, "limit": turns},
			engine.WithThread(thread), engine.WithRecursionLimit(turns+10))
		if err != nil {
			return fmt.Errorf("thread %s: %w", thread, err)
		}
		return nil
	}
	for i := range sh.Threads {
		if err := run(ShortThread(i), sh.turns(i)); err != nil {
			return err
		}
		if progress != nil {
			progress(i+1, total)
		}
	}
	if sh.LongTurns > 0 {
		if err := run(LongThread, sh.LongTurns); err != nil {
			return err
		}
		if progress != nil {
			progress(total, total)
		}
	}
	return nil
}
