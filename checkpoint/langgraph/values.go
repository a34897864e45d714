package langgraph

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// LangGraph's msgpack extension codes (langgraph/checkpoint/serde/jsonplus.py).
const (
	extConstructorSingleArg = 0 // (module, name, arg): UUID, Decimal, set, Enum, ZoneInfo, …
	extConstructorPosArgs   = 1 // (module, name, args): date, timedelta, Send, Path, re, …
	extConstructorKwArgs    = 2 // (module, name, kwargs): dataclasses, namedtuples, time
	extMethodSingleArg      = 3 // (module, name, arg, method): datetime.fromisoformat
	extPydanticV1           = 4 // (module, name, dict())
	extPydanticV2           = 5 // (module, name, model_dump(), method)
	extNumpyArray           = 6 // (dtype, shape, order, buffer)
)

// decodeValue turns one stored value of serde type typ into Weft's JSON
// form (see the package doc). A value Weft will not or cannot decode comes
// back as a note object ({"$note": …}) rather than an error, so one odd
// value never hides its neighbours; err is for bytes that are damaged.
func (r *Reader) decodeValue(typ string, b []byte) (any, error) {
	if base, ok := strings.CutSuffix(typ, "+aes"); ok {
		if r.aesKey == nil {
			return note(fmt.Sprintf("encrypted (%s, %d bytes): set LANGGRAPH_AES_KEY (or langgraph.WithAESKey) to decode", typ, len(b))), nil
		}
		plain, err := decryptEAX(r.aesKey, b)
		if err != nil {
			return nil, fmt.Errorf("decrypting a %s value: %w", typ, err)
		}
		typ, b = base, plain
	}
	switch typ {
	case "null", "empty":
		return nil, nil
	case "json":
		return decodeJSValue(b)
	case "msgpack":
		return decodeMsgpack(b)
	case "bytes", "bytearray":
		return map[string]any{"$" + typ: base64.StdEncoding.EncodeToString(b)}, nil
	case "pickle":
		return note(fmt.Sprintf("pickled, not decoded (%d bytes)", len(b))), nil
	}
	return note(fmt.Sprintf("stored as %q, which this reader does not know (%d bytes)", typ, len(b))), nil
}

// note is how a value Weft does not decode is shown.
func note(s string) map[string]any { return map[string]any{"$note": s} }

// decodeJSValue decodes LangGraph.js' JSON serde: plain JSON in which
// LangChain's serialized classes ({"lc": 1, "type": "constructor", …})
// and {"lc": 2, "type": "undefined"} stand for what JSON cannot hold.
func decodeJSValue(b []byte) (any, error) {
	if v, ok := plainJSON(b); ok {
		return v, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("undecodable JSON value: %w", err)
	}
	if d.More() {
		return nil, errors.New("undecodable JSON value: data after the value")
	}
	return reviveJS(v), nil
}

// plainJSON decodes the two values a LangGraph.js store holds most, a
// string without escapes and an integer, as the decoder would, without
// one: a long thread is mostly such values, and a json.Decoder per value
// (it copies its input into a buffer of its own) was most of the time
// such a thread took to open. ok is false for anything else.
func plainJSON(b []byte) (any, bool) {
	n := len(b)
	switch {
	case n >= 2 && b[0] == '"' && b[n-1] == '"':
		for _, c := range b[1 : n-1] {
			if c < 0x20 || c == '"' || c == '\\' {
				return nil, false
			}
		}
		if !utf8.Valid(b[1 : n-1]) {
			return nil, false // the decoder replaces bad bytes with U+FFFD
		}
		return string(b[1 : n-1]), true
	case n >= 1 && n <= 18:
		digits := b
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
			return nil, false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return nil, false
			}
		}
		return json.Number(b), true
	}
	return nil, false
}

// undefined marks JS's undefined while reviving: dropped from objects and
// null in arrays, as JSON.stringify shows it.
type undefinedT struct{}

var undefined undefinedT

func reviveJS(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if lc, ok := x["lc"].(json.Number); ok {
			typ, _ := x["type"].(string)
			switch {
			case lc.String() == "2" && typ == "undefined":
				return undefined
			case lc.String() == "1" && typ == "constructor":
				id := jsonStrings(x["id"])
				kwargs, _ := x["kwargs"].(map[string]any)
				if kwargs == nil {
					kwargs = map[string]any{}
				}
				kw := reviveJS(kwargs).(map[string]any)
				if len(id) > 0 {
					if m, ok := langchainMessage(id[len(id)-1], kw); ok {
						return m
					}
				}
				return map[string]any{"$lc": strings.Join(id, "."), "kwargs": kw}
			case lc.String() == "1" && typ == "secret":
				return note("a LangChain secret (" + strings.Join(jsonStrings(x["id"]), ".") + "), not shown")
			case lc.String() == "1" && typ == "not_implemented":
				return note("a value LangChain could not serialize (" + strings.Join(jsonStrings(x["id"]), ".") + ")")
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			if r := reviveJS(e); r != undefined {
				out[k] = r
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			if r := reviveJS(e); r != undefined {
				out[i] = r
			}
		}
		return out
	}
	return v
}

func jsonStrings(v any) []string {
	a, _ := v.([]any)
	out := make([]string, 0, len(a))
	for _, e := range a {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// messageRoles maps LangChain's message classes (and their chunks) to Weft
// message roles.
var messageRoles = map[string]string{
	"HumanMessage": "user", "AIMessage": "assistant", "SystemMessage": "system",
	"ToolMessage": "tool", "FunctionMessage": "tool", "RemoveMessage": "remove", "ChatMessage": "",
}

// langchainMessage maps a LangChain message of class cls with fields kw to
// Weft's message shape (engine.Message: role, content, id, name,
// tool_calls, tool_call_id). What that shape has no field for (metadata,
// usage, artifact, list content, …) is kept under "langchain" with the
// class name, so nothing is lost and a Weft message decoder ignores it.
func langchainMessage(cls string, kw map[string]any) (map[string]any, bool) {
	base := strings.TrimSuffix(cls, "Chunk")
	role, ok := messageRoles[base]
	if !ok {
		return nil, false
	}
	if base == "ChatMessage" {
		role, _ = kw["role"].(string)
	}
	m := map[string]any{"role": role}
	rest := map[string]any{"class": cls}
	content := ""
	switch c := kw["content"].(type) {
	case string:
		content = c
	case []any:
		var text []string
		for _, block := range c {
			switch b := block.(type) {
			case string:
				text = append(text, b)
			case map[string]any:
				if t, ok := b["text"].(string); ok && b["type"] == "text" {
					text = append(text, t)
				}
			}
		}
		content = strings.Join(text, "")
		rest["content"] = c
	}
	m["content"] = content
	for k, v := range kw {
		switch k {
		case "content", "type":
		case "id", "name", "tool_call_id":
			if s, ok := v.(string); ok && s != "" {
				m[k] = s
			} else if v != nil {
				rest[k] = v
			}
		case "role":
			if base != "ChatMessage" {
				rest[k] = v
			}
		case "tool_calls":
			calls, _ := v.([]any)
			var out []any
			for _, c := range calls {
				cm, _ := c.(map[string]any)
				args, err := json.Marshal(cm["args"])
				if err != nil {
					args = []byte("null")
				}
				id, _ := cm["id"].(string)
				name, _ := cm["name"].(string)
				out = append(out, map[string]any{"id": id, "name": name, "args": string(args)})
			}
			if len(out) > 0 {
				m["tool_calls"] = out
			}
		default:
			if !emptyJSON(v) {
				rest[k] = v
			}
		}
	}
	m["langchain"] = rest
	return m, true
}

func emptyJSON(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// decodeMsgpack decodes Python LangGraph's msgpack serde, with its
// extension types, into Weft's JSON form.
func decodeMsgpack(b []byte) (any, error) {
	d := msgpack.NewDecoder(bytes.NewReader(b))
	v, err := decodeMP(d, 0)
	if err != nil {
		return nil, fmt.Errorf("undecodable msgpack value: %w", err)
	}
	if _, err := d.PeekCode(); err == nil {
		return nil, errors.New("undecodable msgpack value: data after the value")
	}
	return v, nil
}

// maxDepth bounds nesting, so a crafted value cannot exhaust the stack.
const maxDepth = 512

func decodeMP(d *msgpack.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deeply")
	}
	c, err := d.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		n, err := d.DecodeMapLen()
		if err != nil {
			return nil, err
		}
		keys := make([]any, 0, n)
		vals := make([]any, 0, n)
		allStrings := true
		for range n {
			k, err := decodeMP(d, depth+1)
			if err != nil {
				return nil, err
			}
			v, err := decodeMP(d, depth+1)
			if err != nil {
				return nil, err
			}
			if _, ok := k.(string); !ok {
				allStrings = false
			}
			keys, vals = append(keys, k), append(vals, v)
		}
		if allStrings {
			m := make(map[string]any, n)
			for i, k := range keys {
				m[k.(string)] = vals[i]
			}
			return m, nil
		}
		pairs := make([]any, n)
		for i := range keys {
			pairs[i] = []any{keys[i], vals[i]}
		}
		return map[string]any{"$dict": pairs}, nil
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := d.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		a := make([]any, 0, min(n, 1<<16))
		for range n {
			v, err := decodeMP(d, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case msgpcode.IsBin(c):
		bs, err := d.DecodeBytes()
		if err != nil {
			return nil, err
		}
		return map[string]any{"$bytes": base64.StdEncoding.EncodeToString(bs)}, nil
	case msgpcode.IsExt(c):
		code, n, err := d.DecodeExtHeader()
		if err != nil {
			return nil, err
		}
		payload := make([]byte, n)
		if err := d.ReadFull(payload); err != nil {
			return nil, err
		}
		return decodeExt(code, payload, depth)
	case c == msgpcode.Float || c == msgpcode.Double:
		f, err := d.DecodeFloat64()
		if err != nil {
			return nil, err
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return map[string]any{"$float": fmt.Sprint(f)}, nil
		}
		return f, nil
	}
	return d.DecodeInterfaceLoose()
}

// decodeExt shows one of LangGraph's extension values as what it is.
func decodeExt(code int8, payload []byte, depth int) (any, error) {
	v, err := decodeMP(msgpack.NewDecoder(bytes.NewReader(payload)), depth+1)
	if err != nil {
		return nil, fmt.Errorf("extension %d: %w", code, err)
	}
	parts, _ := v.([]any)
	if code == extNumpyArray {
		if len(parts) < 2 {
			return note("a numpy array this reader cannot read"), nil
		}
		return map[string]any{"$ndarray": map[string]any{"dtype": parts[0], "shape": parts[1]}}, nil
	}
	if len(parts) < 3 {
		return note(fmt.Sprintf("LangGraph extension %d this reader does not know", code)), nil
	}
	mod, _ := parts[0].(string)
	name, _ := parts[1].(string)
	class := mod + "." + name
	arg := parts[2]
	switch code {
	case extConstructorSingleArg:
		switch class {
		case "uuid.UUID":
			s, _ := arg.(string)
			if len(s) == 32 {
				s = s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
			}
			return map[string]any{"$uuid": s}, nil
		case "decimal.Decimal":
			return map[string]any{"$decimal": arg}, nil
		case "builtins.set", "builtins.frozenset":
			return map[string]any{"$" + name: sortedSet(arg)}, nil
		case "collections.deque":
			return map[string]any{"$" + name: orEmpty(arg)}, nil
		case "zoneinfo.ZoneInfo":
			return map[string]any{"$zoneinfo": arg}, nil
		}
		if mod == "ipaddress" {
			return map[string]any{"$" + strings.ToLower(name): arg}, nil
		}
		if strings.HasPrefix(mod, "pydantic") && strings.HasPrefix(name, "Secret") {
			return note("a " + class + ", not shown"), nil
		}
		// What is left of this encoding is an Enum member (by its value).
		return map[string]any{"$enum": class, "value": arg}, nil
	case extConstructorPosArgs:
		args, _ := arg.([]any)
		switch class {
		case "datetime.timedelta":
			if len(args) == 3 {
				return map[string]any{"$timedelta": num(args[0])*86400 + num(args[1]) + num(args[2])/1e6}, nil
			}
		case "datetime.date":
			if len(args) == 3 {
				return map[string]any{"$date": fmt.Sprintf("%04d-%02d-%02d", int(num(args[0])), int(num(args[1])), int(num(args[2])))}, nil
			}
		case "datetime.timezone":
			return map[string]any{"$timezone": orEmpty(arg)}, nil
		case "re.compile":
			if len(args) == 2 {
				return map[string]any{"$regex": args[0], "flags": args[1]}, nil
			}
		case "langgraph.types.Send":
			if len(args) >= 2 {
				return map[string]any{"node": args[0], "arg": args[1]}, nil
			}
		}
		if mod == "pathlib" {
			return map[string]any{"$path": pathJoin(args)}, nil
		}
		return map[string]any{"$object": class, "args": orEmpty(arg)}, nil
	case extConstructorKwArgs:
		kw, _ := arg.(map[string]any)
		switch class {
		case "datetime.time":
			return map[string]any{"$time": isoTime(kw)}, nil
		case "langgraph.types.Interrupt":
			// Weft's interrupt shape: {"id", "value"}, as LangGraph.js stores it.
			return kw, nil
		}
		return map[string]any{"$dataclass": class, "value": orEmpty(arg)}, nil
	case extMethodSingleArg:
		if class == "datetime.datetime" {
			return map[string]any{"$datetime": arg}, nil
		}
		return map[string]any{"$object": class, "value": arg}, nil
	case extPydanticV1, extPydanticV2:
		if kw, ok := arg.(map[string]any); ok && strings.HasPrefix(mod, "langchain_core.messages") {
			if m, ok := langchainMessage(name, kw); ok {
				return m, nil
			}
		}
		return map[string]any{"$pydantic": class, "value": arg}, nil
	}
	return note(fmt.Sprintf("LangGraph extension %d (%s) this reader does not know", code, class)), nil
}

// sortedSet orders a set's members by their JSON text: a set has no
// order, and Python's iteration order differs from run to run, so sorting
// shows one set the same way every time.
func sortedSet(v any) any {
	a, _ := v.([]any)
	out := append([]any{}, a...)
	key := func(x any) string { b, _ := encodeJSON(x); return string(b) }
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

func orEmpty(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}

func num(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case float64:
		return x
	case float32:
		return float64(x)
	}
	return 0
}

func pathJoin(parts []any) string {
	var s []string
	for _, p := range parts {
		if x, ok := p.(string); ok {
			s = append(s, x)
		}
	}
	if len(s) > 0 && s[0] == "/" {
		return "/" + strings.Join(s[1:], "/")
	}
	return strings.Join(s, "/")
}

func isoTime(kw map[string]any) string {
	s := fmt.Sprintf("%02d:%02d:%02d", int(num(kw["hour"])), int(num(kw["minute"])), int(num(kw["second"])))
	if us := int(num(kw["microsecond"])); us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	return s
}

// encodeJSON writes v (Weft's JSON form) as JSON: map keys sorted, no HTML
// escaping, so values read the same in every command.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
