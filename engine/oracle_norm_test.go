package engine_test

// Normalizing the engine's document as the oracle normalizes LangGraph's
// (testdata/oracle/README.md "Normalizations"), comparing it with the
// recorded one, and writing it out for a person to diff.

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
)

// finalize turns snapshot checkpoint ids of the threads into creation
// indexes (HSNAP, FSNAP), then labels ids (normalizations 1–3, 7).
func finalize(doc map[string]any, idx map[string]cpInfo) any {
	asIndex := func(id any) any {
		s, ok := id.(string)
		if !ok {
			return nil
		}
		if info, ok := idx[s]; ok {
			return float64(info.index)
		}
		return nil
	}
	fix := func(v any) map[string]any {
		s := v.(map[string]any)
		out := map[string]any{}
		for k, x := range s {
			if k != "checkpoint" && k != "parent" {
				out[k] = x
			}
		}
		out["index"] = asIndex(s["checkpoint"])
		out["parentIndex"] = asIndex(s["parent"])
		return out
	}
	threads, _ := doc["threads"].(map[string]any)
	for _, tv := range threads {
		th := tv.(map[string]any)
		switch h := th["history"].(type) {
		case []any:
			for i := range h {
				h[i] = fix(h[i])
			}
		case map[string]any:
			p := h["partial"].([]any)
			for i := range p {
				p[i] = fix(p[i])
			}
		}
		if f, ok := th["final"].(map[string]any); ok {
			if _, isErr := f["error"]; !isErr {
				ff := fix(f)
				delete(ff, "parentIndex")
				th["final"] = ff
			}
		}
	}
	return labelIDs(doc, idx)
}

var (
	reUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reHex32 = regexp.MustCompile(`\b[0-9a-f]{32}\b`)
)

// labelIDs replaces checkpoint ids by cp<N> ("<ns>/cp<N>" outside the root
// namespace), other UUIDs (task ids) by T<n> and 32-hex ids by I<n>, numbered
// by first appearance in a depth-first walk with keys in JavaScript's order.
func labelIDs(doc any, idx map[string]cpInfo) any {
	tasks := map[string]string{}
	ints := map[string]string{}
	cps := map[string]string{}
	var label func(s string) string
	label = func(s string) string {
		s = reUUID.ReplaceAllStringFunc(s, func(u string) string {
			if info, ok := idx[u]; ok {
				if l, ok := cps[u]; ok {
					return l
				}
				l := "cp" + strconv.Itoa(info.index)
				if info.ns != "" {
					l = label(info.ns) + "/" + l
				}
				cps[u] = l
				return l
			}
			if l, ok := tasks[u]; ok {
				return l
			}
			tasks[u] = "T" + strconv.Itoa(len(tasks)+1)
			return tasks[u]
		})
		return reHex32.ReplaceAllStringFunc(s, func(h string) string {
			if l, ok := ints[h]; ok {
				return l
			}
			ints[h] = "I" + strconv.Itoa(len(ints)+1)
			return ints[h]
		})
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return label(x)
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		case map[string]any:
			out := make(map[string]any, len(x))
			for _, k := range jsKeys(x) {
				lk := label(k)
				out[lk] = walk(x[k])
			}
			return out
		}
		return v
	}
	return walk(doc)
}

// jsKeys orders an object's keys as JavaScript enumerates a key-sorted
// object: integer-like keys first in numeric order, then the others in
// UTF-16 order.
func jsKeys(m map[string]any) []string {
	var ints, strs []string
	for k := range m {
		if isArrayIndex(k) {
			ints = append(ints, k)
		} else {
			strs = append(strs, k)
		}
	}
	slices.SortFunc(ints, func(a, b string) int {
		x, _ := strconv.ParseUint(a, 10, 64)
		y, _ := strconv.ParseUint(b, 10, 64)
		return int(x) - int(y)
	})
	slices.SortFunc(strs, func(a, b string) int {
		return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
	})
	return append(ints, strs...)
}

func isArrayIndex(k string) bool {
	if k == "0" {
		return true
	}
	if k == "" || k[0] == '0' || !isDigits(k) || len(k) > 10 {
		return false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return err == nil && n < math.MaxUint32
}

// jsonData round-trips v through JSON so that it holds only JSON data
// (map[string]any, []any, float64, string, bool, nil), like a parsed
// expected file.
func jsonData(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(b, &out)
	return out, err
}

// prettyJSON writes v as JSON.stringify(v, null, 2) does, so a normalized
// document can be diffed against an expected file line by line.
func prettyJSON(v any) []byte {
	var b bytes.Buffer
	var write func(v any, indent string)
	write = func(v any, indent string) {
		switch x := v.(type) {
		case nil:
			b.WriteString("null")
		case bool:
			b.WriteString(strconv.FormatBool(x))
		case float64:
			b.WriteString(jsNumber(x))
		case string:
			b.WriteString(jsQuote(x))
		case []any:
			if len(x) == 0 {
				b.WriteString("[]")
				return
			}
			b.WriteString("[\n")
			for i, e := range x {
				b.WriteString(indent + "  ")
				write(e, indent+"  ")
				if i < len(x)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString(indent + "]")
		case map[string]any:
			if len(x) == 0 {
				b.WriteString("{}")
				return
			}
			b.WriteString("{\n")
			keys := jsKeys(x)
			for i, k := range keys {
				b.WriteString(indent + "  " + jsQuote(k) + ": ")
				write(x[k], indent+"  ")
				if i < len(keys)-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString(indent + "}")
		default:
			b.WriteString(jsQuote(fmt.Sprint(x)))
		}
	}
	write(v, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func compactOf(v any) string {
	if v == orcMissing {
		return "<missing>"
	}
	s := compactJSON(v)
	if len(s) > 400 {
		s = s[:400] + "…"
	}
	return s
}

// orcMissing stands for an absent key or list element in a diff.
var orcMissing = &struct{ missing bool }{true}

// orcDiff is one difference: a JSON path, what LangGraph did, what the
// engine did.
type orcDiff struct {
	path          string
	expected, got any
}

func (d orcDiff) String() string {
	return fmt.Sprintf("%s\n    expected: %s\n    got:      %s", d.path, compactOf(d.expected), compactOf(d.got))
}

// comparer compares a normalized document with the recorded one. Task and
// interrupt labels (T<n>, I<n>) are names, not facts: they must correspond
// one to one, wherever they appear. It compares leniently only what the
// oracle's README allows: an error's message and code, a task's path and
// triggers, and the AbortError LangGraph.js records on the siblings of a
// failed task. The completion events of one super-step's parallel tasks
// (updates, tasks results, debug task_result), which LangGraph yields in
// completion order, are compared as a set.
type comparer struct {
	fwd, back map[string]string // expected label → got label, and back
	diffs     []orcDiff
	skip      map[string]bool // paths an allow-list entry accepts
	meta      map[int][]chunkMeta
}

func newComparer(meta map[int][]chunkMeta) *comparer {
	return &comparer{fwd: map[string]string{}, back: map[string]string{}, skip: map[string]bool{}, meta: meta}
}

func (c *comparer) add(path string, e, g any) { c.diffs = append(c.diffs, orcDiff{path, e, g}) }

var reLabel = regexp.MustCompile(`\b[TI]\d+\b`)

// sameString compares strings with labels matched one to one.
func (c *comparer) sameString(e, g string) bool {
	if e == g && !reLabel.MatchString(e) {
		return true
	}
	es, gs := reLabel.FindAllString(e, -1), reLabel.FindAllString(g, -1)
	if len(es) != len(gs) || reLabel.ReplaceAllString(e, "#") != reLabel.ReplaceAllString(g, "#") {
		return false
	}
	for i := range es {
		if es[i][0] != gs[i][0] {
			return false
		}
		if f, ok := c.fwd[es[i]]; ok && f != gs[i] {
			return false
		}
		if b, ok := c.back[gs[i]]; ok && b != es[i] {
			return false
		}
		c.fwd[es[i]], c.back[gs[i]] = gs[i], es[i]
	}
	return true
}

// try compares and keeps the result only if it found no difference.
func (c *comparer) try(path string, e, g any) bool {
	fwd, back, n := cloneMap(c.fwd), cloneMap(c.back), len(c.diffs)
	c.cmp(path, e, g)
	if len(c.diffs) == n {
		return true
	}
	c.fwd, c.back, c.diffs = fwd, back, c.diffs[:n]
	return false
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

var reIdent = regexp.MustCompile(`^[A-Za-z0-9_:#-]+$`)

func childPath(path, key string) string {
	if !reIdent.MatchString(key) {
		key = "[" + strconv.Quote(key) + "]"
		return path + key
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

var reChunks = regexp.MustCompile(`^actions\[(\d+)\]\.chunks$`)

func (c *comparer) cmp(path string, e, g any) {
	if c.skip[path] {
		return
	}
	switch ev := e.(type) {
	case map[string]any:
		gv, ok := g.(map[string]any)
		if !ok {
			c.add(path, e, g)
			return
		}
		c.cmpObject(path, ev, gv)
	case []any:
		gv, ok := g.([]any)
		if !ok {
			c.add(path, e, g)
			return
		}
		if m := reChunks.FindStringSubmatch(path); m != nil {
			i, _ := strconv.Atoi(m[1])
			c.cmpChunks(path, c.meta[i], ev, gv)
			return
		}
		c.cmpList(path, ev, gv, 0)
	case string:
		gs, ok := g.(string)
		if !ok || !c.sameString(ev, gs) {
			c.add(path, e, g)
		}
	default:
		if e != g {
			c.add(path, e, g)
		}
	}
}

func isErrorDoc(m map[string]any) bool {
	_, cls := m["error"].(string)
	_, msg := m["message"]
	return cls && msg
}

func (c *comparer) cmpObject(path string, e, g map[string]any) {
	ignore := map[string]bool{}
	if isErrorDoc(e) {
		// An error's message and code are LangGraph.js's wording.
		ignore["message"], ignore["code"] = true, true
	}
	_, hasID := e["id"]
	_, hasName := e["name"]
	if hasID && hasName { // a task
		ignore["path"], ignore["triggers"] = true, true
		if ed, ok := e["error"].(map[string]any); ok && ed["error"] == "AbortError" {
			ignore["error"] = true
		}
	}
	keys := map[string]bool{}
	for k := range e {
		keys[k] = true
	}
	for k := range g {
		keys[k] = true
	}
	for _, k := range jsKeys(toAnyMap(keys)) {
		if ignore[k] {
			continue
		}
		p := childPath(path, k)
		ev, inE := e[k]
		gv, inG := g[k]
		switch {
		case !inG:
			if !c.skip[p] {
				c.add(p, ev, orcMissing)
			}
		case !inE:
			if !c.skip[p] {
				c.add(p, orcMissing, gv)
			}
		default:
			c.cmp(p, ev, gv)
		}
	}
}

func toAnyMap(m map[string]bool) map[string]any {
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func (c *comparer) cmpList(path string, e, g []any, from int) {
	for i := from; i < max(len(e), len(g)); i++ {
		p := path + "[" + strconv.Itoa(i) + "]"
		switch {
		case i >= len(g):
			c.add(p, e[i], orcMissing)
		case i >= len(e):
			c.add(p, orcMissing, g[i])
		default:
			c.cmp(p, e[i], g[i])
		}
	}
}

// cmpChunks compares a stream's chunks in order, except that the
// completion events of a super-step that ran several tasks match as a set.
func (c *comparer) cmpChunks(path string, meta []chunkMeta, e, g []any) {
	if len(e) != len(g) {
		c.alignChunks(path, meta, e, g)
		return
	}
	if len(meta) != len(g) {
		c.cmpList(path, e, g, 0)
		return
	}
	i := 0
	for i < len(g) {
		j := i
		tasks := map[string]bool{}
		for j < len(g) && meta[j].taskID != "" && meta[j].step == meta[i].step && meta[j].ns == meta[i].ns {
			tasks[meta[j].taskID] = true
			j++
		}
		if len(tasks) < 2 || j > len(e) {
			if j == i {
				j = i + 1
			}
			for k := i; k < j; k++ {
				p := path + "[" + strconv.Itoa(k) + "]"
				if k >= len(e) {
					c.add(p, orcMissing, g[k])
				} else {
					c.cmp(p, e[k], g[k])
				}
			}
			i = j
			continue
		}
		// A set: each expected chunk must match a distinct got chunk.
		used := make([]bool, j)
		for k := i; k < j; k++ {
			found := false
			for m := i; m < j; m++ {
				if !used[m] && c.try(path+"["+strconv.Itoa(m)+"]", e[k], g[m]) {
					used[m], found = true, true
					break
				}
			}
			if !found {
				c.add(fmt.Sprintf("%s[%d] (one of the completion events %d..%d, compared as a set)", path, k, i, j-1), e[k], orcMissing)
			}
		}
		i = j
	}
	for k := len(g); k < len(e); k++ {
		c.add(path+"["+strconv.Itoa(k)+"]", e[k], orcMissing)
	}
}

// getPath returns the value at a path written as childPath writes it.
func getPath(doc any, path string) (any, bool) {
	cur := doc
	rest := path
	for rest != "" {
		switch {
		case rest[0] == '.':
			rest = rest[1:]
		case strings.HasPrefix(rest, `["`):
			end := strings.Index(rest, `"]`)
			if end < 0 {
				return nil, false
			}
			k, err := strconv.Unquote(rest[1 : end+1])
			if err != nil {
				return nil, false
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
			rest = rest[end+2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			n, err := strconv.Atoi(rest[1:end])
			l, ok := cur.([]any)
			if err != nil || !ok || n >= len(l) {
				return nil, false
			}
			cur, rest = l[n], rest[end+1:]
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[rest[:end]]; !ok {
				return nil, false
			}
			rest = rest[end:]
		}
	}
	return cur, true
}

// alignChunks reports the chunks one stream lacks and the other has extra,
// aligning the two by their longest common subsequence (labels aside), so
// one missing chunk reads as one difference rather than a shifted tail.
func (c *comparer) alignChunks(path string, meta []chunkMeta, e, g []any) {
	key := func(v any) string { return reLabel.ReplaceAllString(compactJSON(v), "#") }
	ek, gk := make([]string, len(e)), make([]string, len(g))
	for i, v := range e {
		ek[i] = key(v)
	}
	for i, v := range g {
		gk[i] = key(v)
	}
	// lcs[i][j] = length of the LCS of ek[i:] and gk[j:].
	lcs := make([][]int, len(e)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(g)+1)
	}
	for i := len(e) - 1; i >= 0; i-- {
		for j := len(g) - 1; j >= 0; j-- {
			if ek[i] == gk[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var missing, extra []int
	i, j := 0, 0
	for i < len(e) || j < len(g) {
		switch {
		case i < len(e) && j < len(g) && ek[i] == gk[j]:
			c.cmp(fmt.Sprintf("%s[%d]", path, i), e[i], g[j])
			i, j = i+1, j+1
		case j < len(g) && (i == len(e) || lcs[i][j+1] >= lcs[i+1][j]):
			extra = append(extra, j)
			j++
		default:
			missing = append(missing, i)
			i++
		}
	}
	// A completion event of a step that ran several tasks may come at
	// another place among its step's events: it is not missing.
	var stillMissing []int
	for _, i := range missing {
		moved := false
		for x, j := range extra {
			if j >= 0 && j < len(meta) && meta[j].parallel && ek[i] == gk[j] && c.try(fmt.Sprintf("%s[%d]", path, i), e[i], g[j]) {
				extra[x], moved = -1, true
				break
			}
		}
		if !moved {
			stillMissing = append(stillMissing, i)
		}
	}
	// A chunk that differs in some fields pairs with the got chunk of the
	// same kind (mode, node or task), in order, so the diff names the
	// fields rather than a missing and an extra chunk.
	last := -1
	for _, i := range stillMissing {
		paired := false
		for x, j := range extra {
			if j > last && chunkKind(e[i]) == chunkKind(g[j]) {
				c.cmp(fmt.Sprintf("%s[%d]", path, i), e[i], g[j])
				extra[x], last, paired = -1, j, true
				break
			}
		}
		if !paired {
			c.add(fmt.Sprintf("%s[%d] (a missing chunk)", path, i), e[i], orcMissing)
		}
	}
	for _, j := range extra {
		if j >= 0 {
			c.add(fmt.Sprintf("%s[got %d] (an extra chunk)", path, j), orcMissing, g[j])
		}
	}
}

// chunkKind names what a chunk is about: its mode (when given), the debug
// type, the task or node, and the payload's shape.
func chunkKind(v any) string {
	var parts []string
	for {
		l, ok := v.([]any)
		if !ok || len(l) == 0 {
			break
		}
		for _, x := range l[:len(l)-1] {
			if s, ok := x.(string); ok {
				parts = append(parts, s)
			}
		}
		v = l[len(l)-1]
	}
	m, ok := v.(map[string]any)
	if !ok {
		return strings.Join(parts, "/")
	}
	if t, ok := m["type"].(string); ok {
		parts = append(parts, t)
		if p, ok := m["payload"].(map[string]any); ok {
			m = p
		}
	}
	if n, ok := m["name"].(string); ok {
		parts = append(parts, "name="+n)
	}
	keys := jsKeys(m)
	if _, isTask := m["id"]; !isTask {
		parts = append(parts, strings.Join(keys, ","))
	} else {
		_, done := m["result"]
		parts = append(parts, fmt.Sprint("done=", done))
	}
	return strings.Join(parts, "/")
}
