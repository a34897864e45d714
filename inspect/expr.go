// Package inspect answers questions about a graph's state and history for a
// debugger: expressions over the channels (watches, data and conditional
// breakpoints, evaluated at a checkpoint, along a whole timeline or while a
// run steps) and the comparison of two branches of a thread. It works
// through the engine's public API, so the studio and the headless commands
// share it.
//
// Expressions use the expr language (github.com/expr-lang/expr): channels
// are variables by name (len(notes) > 3, draft contains "TODO",
// messages[0].Content), typed as their Go values, so an unknown channel or
// a type error is reported when the expression is compiled.
package inspect

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/internal/textdist"
)

// EvalTimeout bounds one evaluation: an expression still running after it
// is reported as too slow (expr cannot be preempted; its own memory budget
// keeps such work finite).
const EvalTimeout = 100 * time.Millisecond

// Env is what expressions over one graph's state may name: its channels,
// with their Go types. The zero Env knows no channel.
type Env struct {
	graph string
	zero  map[string]any // a zero value of each channel's type
	// open is set for a view (a LangGraph store's or server's graph),
	// which declares no channels: any name is a state key, of no known
	// type, nil where the state has no such key.
	open bool
}

// NewEnv returns the environment of g's state channels; for a view graph
// (engine.NewView), whose state keys are known only from its states, one
// where every name is a state key.
func NewEnv(g *engine.Graph) *Env {
	env := &Env{graph: g.Name(), zero: map[string]any{}, open: g.IsView()}
	for _, ch := range g.Channels() {
		var z any
		if ch.GoType != nil && ch.GoType.Kind() != reflect.Interface {
			z = reflect.Zero(ch.GoType).Interface()
		}
		env.zero[ch.Name] = z
	}
	return env
}

// Expr is a compiled expression. The zero Expr is unusable; make one with
// Env.Compile or Env.CompileBool.
type Expr struct {
	src   string
	prog  *vm.Program
	env   *Env
	reads []string // the channels it names
}

// Compile checks src against the graph's channels and compiles it. The
// error names the problem and where it is (line:column), such as an
// unknown channel or a type mismatch.
func (env *Env) Compile(src string) (*Expr, error) { return env.compile(src, false) }

// CompileBool is Compile for conditions: the expression must be boolean.
func (env *Env) CompileBool(src string) (*Expr, error) { return env.compile(src, true) }

func (env *Env) compile(src string, boolean bool) (*Expr, error) {
	if src == "" {
		return nil, errors.New("empty expression")
	}
	opts := []expr.Option{expr.Env(env.zero)}
	if env.open {
		opts = append(opts, expr.AllowUndefinedVariables())
	}
	if boolean {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(src, opts...)
	if err != nil {
		return nil, env.exprError(src, err)
	}
	e := &Expr{src: src, prog: prog, env: env}
	root := prog.Node()
	ast.Walk(&root, channelNames{env, &e.reads})
	return e, nil
}

// channelNames collects the channels an expression names.
type channelNames struct {
	env   *Env
	names *[]string
}

func (c channelNames) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok {
		if _, isChan := c.env.zero[id.Value]; (isChan || c.env.open) && !slices.Contains(*c.names, id.Value) {
			*c.names = append(*c.names, id.Value)
		}
	}
}

// Reads returns the channels the expression names, in order of first use.
func (e *Expr) Reads() []string { return slices.Clone(e.reads) }

// String returns the expression's source.
func (e *Expr) String() string { return e.src }

// Eval evaluates the expression on vals (a snapshot's Values; channels
// without a value read as their type's zero). A panic, an error or an
// evaluation over EvalTimeout is an error naming the expression.
func (e *Expr) Eval(vals engine.Values) (any, error) {
	env := make(map[string]any, len(e.env.zero))
	if e.env.open {
		for _, k := range e.reads {
			env[k] = vals[k]
		}
	}
	for k, z := range e.env.zero {
		if v, ok := vals[k]; ok {
			env[k] = v
		} else {
			env[k] = z
		}
	}
	type outcome struct {
		v   any
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{err: fmt.Errorf("panicked: %v", p)}
			}
		}()
		v, err := expr.Run(e.prog, env)
		done <- outcome{v, err}
	}()
	t := time.NewTimer(EvalTimeout)
	defer t.Stop()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, fmt.Errorf("expression %q: %w", e.src, o.err)
		}
		return o.v, nil
	case <-t.C:
		return nil, fmt.Errorf("expression %q: still running after %v; stopped waiting for it", e.src, EvalTimeout)
	}
}

// Holds evaluates a boolean expression (CompileBool) on vals.
func (e *Expr) Holds(vals engine.Values) (bool, error) {
	v, err := e.Eval(vals)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("expression %q gave %T, not a boolean", e.src, v)
	}
	return b, nil
}

// ExprError is an expression that does not compile: what is wrong, in
// words a user reads at once, and where. Its Error is one line naming the
// expression and the graph, with the column.
type ExprError struct {
	Src   string // the expression
	Graph string // the graph whose channels it was checked against
	// Msg says what is wrong ("unknown name nope: no channel or function
	// has that name; the channels are …").
	Msg string
	// Column is where, counted in characters from 1; 0 when the problem
	// is the whole expression (a condition that is not boolean).
	Column int
	Err    error // the expr library's error
}

func (e *ExprError) Error() string {
	at := ""
	if e.Column > 0 {
		at = fmt.Sprintf(" (column %d)", e.Column)
	}
	return fmt.Sprintf("expression %q over graph %q: %s%s", e.Src, e.Graph, e.Msg, at)
}

func (e *ExprError) Unwrap() error { return e.Err }

// exprError turns the expr library's compile error into an ExprError.
func (env *Env) exprError(src string, err error) *ExprError {
	out := &ExprError{Src: src, Graph: env.graph, Msg: err.Error(), Err: err}
	var fe *file.Error
	if errors.As(err, &fe) {
		out.Msg = fe.Message
		if fe.Snippet != "" {
			out.Column = fe.Column + 1
		}
	}
	out.Msg = env.readable(out.Msg)
	return out
}

// readable rewords the expr library's messages users meet most.
func (env *Env) readable(msg string) string {
	switch {
	case strings.HasPrefix(msg, "unknown name "):
		if near := env.nearest(strings.TrimPrefix(msg, "unknown name ")); near != "" {
			return fmt.Sprintf("%s: did you mean %s? (the channels are %s)", msg, near, strings.Join(env.Channels(), ", "))
		}
		return fmt.Sprintf("%s: no channel or function has that name; the channels are %s", msg, strings.Join(env.Channels(), ", "))
	case strings.HasPrefix(msg, "expected bool, but got "):
		return "a condition must be true or false, and this gives " + strings.TrimPrefix(msg, "expected bool, but got ")
	case msg == "unexpected token EOF":
		return "the expression ends too soon"
	}
	return msg
}

// Channels returns the names of the channels expressions may read, sorted.
func (env *Env) Channels() []string {
	out := make([]string, 0, len(env.zero))
	for k := range env.zero {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// nearest returns the channel whose name is closest to name (one edit
// away, two for names longer than four letters), "" when none is.
func (env *Env) nearest(name string) string {
	best, bestD := "", 2
	if len([]rune(name)) > 4 {
		bestD = 3
	}
	for _, ch := range env.Channels() {
		if d := textdist.Distance(name, ch); d < bestD {
			best, bestD = ch, d
		}
	}
	return best
}
