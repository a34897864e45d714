package engine_test

// The scenario language of the differential oracle (testdata/oracle/DSL.md):
// an order-preserving JSON reader, and the evaluation of templates,
// conditions and routes with the reference runner's JavaScript semantics.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/weftstudio/weft/engine"
)

// omap is a JSON object that keeps its keys in document order: the order of
// a scenario's nodes and channels is significant.
type omap struct {
	keys []string
	m    map[string]any
}

func (o *omap) get(k string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.m[k]
	return v, ok
}

func (o *omap) has(k string) bool { _, ok := o.get(k); return ok }

// obj returns the object under k, or nil.
func (o *omap) obj(k string) *omap {
	v, _ := o.get(k)
	m, _ := v.(*omap)
	return m
}

// list returns the list under k, or nil.
func (o *omap) list(k string) []any {
	v, _ := o.get(k)
	l, _ := v.([]any)
	return l
}

func (o *omap) str(k string) string {
	v, _ := o.get(k)
	s, _ := v.(string)
	return s
}

// parseOrdered reads JSON into *omap objects, []any lists, float64 numbers,
// strings, bools and nil.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	v, err := orcParseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func orcParseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &omap{m: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := orcParseValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.m[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.m[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			l := []any{}
			for dec.More() {
				v, err := orcParseValue(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // float64, string, bool, nil
	}
}

// unordered turns a parsed tree into plain values (map[string]any).
func unordered(v any) any {
	switch x := v.(type) {
	case *omap:
		out := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			out[k] = unordered(x.m[k])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unordered(e)
		}
		return out
	}
	return v
}

// evalCtx is what expressions see: the node input (state or Send argument)
// and the bindings of DSL.md's lookup order.
type evalCtx struct {
	input   any
	resume  any
	resumes []any
	call    any
	node    any
	item    any
	index   any
	hasItem bool
	// An entrypoint's previous and the results of the tasks it awaited
	// (DSL.md "ENTRYPOINT").
	previous any
	vars     map[string]any
}

func (c *evalCtx) root(name string) (any, bool) {
	switch name {
	case "input":
		return c.input, true
	case "resume":
		return c.resume, true
	case "resumes":
		if c.resumes == nil {
			return nil, true
		}
		return c.resumes, true
	case "call":
		return c.call, true
	case "node":
		return c.node, true
	case "item":
		return c.item, true
	case "index":
		return c.index, true
	case "previous":
		return c.previous, true
	case "vars":
		if c.vars == nil {
			return nil, true
		}
		return c.vars, true
	}
	return nil, false
}

func (c *evalCtx) withItem(item any, index int) *evalCtx {
	d := *c
	d.item, d.index, d.hasItem = item, float64(index), true
	return &d
}

// orcError is a scenario bug (bad expression, unknown form): the test stops,
// as the reference runner crashes on one.
type orcError struct{ msg string }

func (e orcError) Error() string { return "DSL: " + e.msg }

func dslFail(format string, args ...any) { panic(orcError{fmt.Sprintf(format, args...)}) }

func jsLen(v any) float64 {
	switch x := v.(type) {
	case []any:
		return float64(len(x))
	case string:
		return float64(len(utf16.Encode([]rune(x))))
	case map[string]any:
		return float64(len(x))
	}
	return 0
}

func lookupPath(path string, c *evalCtx) any {
	segs := strings.Split(path, ".")
	cur, special := c.root(segs[0])
	if !special {
		m, ok := c.input.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[segs[0]]
	}
	for _, s := range segs[1:] {
		if cur == nil {
			return nil
		}
		switch x := cur.(type) {
		case []any:
			if n, err := strconv.Atoi(s); err == nil && isDigits(s) {
				if n < len(x) {
					cur = x[n]
				} else {
					cur = nil
				}
			} else if s == "length" {
				cur = float64(len(x))
			} else {
				cur = nil
			}
		case map[string]any:
			cur = x[s]
		case string:
			if s == "length" {
				cur = jsLen(x)
			} else {
				cur = nil
			}
		default:
			cur = nil
		}
	}
	return cur
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

var (
	reLen    = regexp.MustCompile(`^len\((.+)\)$`)
	reArith  = regexp.MustCompile(`^(.*[^\s+-])\s*([+-])\s*(\d+)$`)
	reNumber = regexp.MustCompile(`^-?\d+(\.\d+)?$`)
	rePath   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`)
	reWhole  = regexp.MustCompile(`^\{([^{}]+)\}$`)
	reInterp = regexp.MustCompile(`\{([^{}]+)\}`)
)

func evalExpr(expr string, c *evalCtx) any {
	e := strings.TrimSpace(expr)
	if m := reLen.FindStringSubmatch(e); m != nil {
		return jsLen(evalExpr(m[1], c))
	}
	if m := reArith.FindStringSubmatch(e); m != nil {
		v := evalExpr(m[1], c)
		n, _ := strconv.ParseFloat(m[3], 64)
		switch x := v.(type) {
		case nil:
			v = 0.0
		case bool:
			if x {
				v = 1.0
			} else {
				v = 0.0
			}
		}
		switch x := v.(type) {
		case float64:
			if m[2] == "+" {
				return x + n
			}
			return x - n
		case string:
			if m[2] == "+" {
				return x + jsString(n)
			}
			return math.NaN()
		}
		dslFail("arithmetic on %T in %q", v, expr)
	}
	if reNumber.MatchString(e) {
		f, _ := strconv.ParseFloat(e, 64)
		return f
	}
	switch e {
	case "true":
		return true
	case "false":
		return false
	case "null":
		return nil
	}
	if !rePath.MatchString(e) {
		dslFail("bad expression %q", expr)
	}
	return lookupPath(e, c)
}

// jsString is JavaScript's string form of a value in a template:
// strings as they are, null as "", anything else as compact JSON.
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return jsNumber(x)
	}
	return compactJSON(v)
}

func jsNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// compactJSON writes v as JSON.stringify would, except that object keys come
// out sorted (state values do not remember their insertion order here).
func compactJSON(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(plain(v)); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// tmpl evaluates a template (DSL.md "Templates").
func tmpl(t any, c *evalCtx) any {
	switch x := t.(type) {
	case string:
		if m := reWhole.FindStringSubmatch(x); m != nil {
			return evalExpr(m[1], c)
		}
		return reInterp.ReplaceAllStringFunc(x, func(s string) string {
			return jsString(evalExpr(s[1:len(s)-1], c))
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = tmpl(e, c)
		}
		return out
	case *omap:
		if len(x.keys) == 1 && x.keys[0] == "$overwrite" {
			return engine.Overwrite{Value: tmpl(x.m["$overwrite"], c)}
		}
		if len(x.keys) == 1 && x.keys[0] == "$literal" {
			return unordered(x.m["$literal"])
		}
		out := make(map[string]any, len(x.keys))
		for _, k := range x.keys {
			out[k] = tmpl(x.m[k], c)
		}
		return out
	}
	return t
}

func operand(x any, c *evalCtx) any {
	switch o := x.(type) {
	case string:
		return evalExpr(o, c)
	case *omap:
		if v, ok := o.get("lit"); ok {
			return unordered(v)
		}
		return unordered(o)
	}
	return x
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

// jsEqual is the runner's deep equality: equal canonical JSON.
func jsEqual(a, b any) bool { return compactJSON(a) == compactJSON(b) }

func ordered(a, b any, op string) bool {
	var c int
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		case x == y:
		default:
			return false // NaN
		}
	case string:
		y, ok := b.(string)
		if !ok {
			return false
		}
		c = slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
	default:
		return false
	}
	switch op {
	case "lt":
		return c < 0
	case "le":
		return c <= 0
	case "gt":
		return c > 0
	}
	return c >= 0
}

// cond evaluates a condition (DSL.md "Conditions").
func cond(x any, c *evalCtx) bool {
	switch v := x.(type) {
	case bool:
		return v
	case string:
		return truthy(evalExpr(v, c))
	case *omap:
		if len(v.keys) == 0 {
			dslFail("empty condition")
		}
		op := v.keys[0]
		a := v.m[op]
		args, _ := a.([]any)
		arg := func(i int) any {
			if i >= len(args) {
				dslFail("condition %q needs %d operands", op, i+1)
			}
			return operand(args[i], c)
		}
		switch op {
		case "lt", "le", "gt", "ge":
			return ordered(arg(0), arg(1), op)
		case "eq":
			return jsEqual(arg(0), arg(1))
		case "ne":
			return !jsEqual(arg(0), arg(1))
		case "in":
			hay, ok := arg(1).([]any)
			if !ok {
				return false
			}
			needle := arg(0)
			return slices.ContainsFunc(hay, func(h any) bool { return jsEqual(h, needle) })
		case "and":
			for _, e := range args {
				if !cond(e, c) {
					return false
				}
			}
			return true
		case "or":
			for _, e := range args {
				if cond(e, c) {
					return true
				}
			}
			return false
		case "not":
			return !cond(a, c)
		case "truthy":
			return truthy(operand(a, c))
		case "isNumber":
			_, ok := operand(a, c).(float64)
			return ok
		}
		dslFail("unknown condition operator %q", op)
	}
	dslFail("bad condition %v", x)
	return false
}

// dests is an evaluated route or goto: node names or labels (strings) and
// Sends, in order.
type dests []any

func makeSend(spec *omap, c *evalCtx) engine.Send {
	node, _ := tmpl(spec.m["send"], c).(string)
	var arg any
	switch {
	case spec.has("arg"):
		arg = tmpl(spec.m["arg"], c)
	case c.hasItem:
		arg = c.item
	default:
		arg = c.input
	}
	return engine.Send{Node: node, Arg: arg}
}

func sendEach(spec *omap, c *evalCtx) dests {
	items, _ := operand(spec.m["each"], c).([]any)
	var out dests
	for i, it := range items {
		out = append(out, makeSend(spec, c.withItem(it, i)))
	}
	return out
}

// evalRoute evaluates a conditional edge's ROUTE.
func evalRoute(r any, c *evalCtx) dests {
	switch x := r.(type) {
	case string:
		return dests{tmpl(x, c)}
	case []any:
		var out dests
		for _, e := range x {
			out = append(out, evalRoute(e, c)...)
		}
		return out
	case *omap:
		switch {
		case x.has("if"):
			if cond(x.m["if"], c) {
				return evalRoute(x.m["then"], c)
			}
			if e, ok := x.get("else"); ok {
				return evalRoute(e, c)
			}
			return dests{engine.END}
		case x.has("send") && x.has("each"):
			return sendEach(x, c)
		case x.has("send"):
			return dests{makeSend(x, c)}
		case x.has("value"):
			return dests{tmpl(x.m["value"], c)}
		}
	}
	dslFail("bad route %v", r)
	return nil
}

// evalGoto evaluates a Command's GOTO.
func evalGoto(g any, c *evalCtx) dests {
	switch x := g.(type) {
	case nil:
		return nil
	case string:
		return dests{tmpl(x, c)}
	case []any:
		var out dests
		for _, e := range x {
			out = append(out, evalGoto(e, c)...)
		}
		return out
	case *omap:
		if x.has("send") {
			if x.has("each") {
				return sendEach(x, c)
			}
			return dests{makeSend(x, c)}
		}
	}
	dslFail("bad goto %v", g)
	return nil
}
