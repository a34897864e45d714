package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// codec turns one channel's values into bytes and back, keeping the Go type.
type codec interface {
	encode(v any) ([]byte, error)
	decode(b []byte) (any, error)
	// check reports whether v may be stored in the channel.
	check(v any) error
	goType() reflect.Type
}

// typedCodec stores values of a concrete type T as JSON and decodes them back
// into a T, so a []Message stays a []Message and a user's struct stays that
// struct. When T is an interface type the value is wrapped with the name of
// its registered concrete type (see RegisterType).
type typedCodec[T any] struct{}

func (typedCodec[T]) goType() reflect.Type { return reflect.TypeFor[T]() }

func (c typedCodec[T]) check(v any) error {
	if _, ok := v.(T); ok {
		return nil
	}
	if v == nil && reflect.TypeFor[T]().Kind() == reflect.Interface {
		return nil
	}
	return fmt.Errorf("value of type %T, want %v", v, reflect.TypeFor[T]())
}

func (c typedCodec[T]) encode(v any) ([]byte, error) {
	if reflect.TypeFor[T]().Kind() == reflect.Interface {
		return encodeDynamic(v)
	}
	if b, ok := appendSimpleJSON(nil, v); ok {
		return b, nil
	}
	return json.Marshal(v)
}

// appendSimpleJSON appends v as JSON for the types most channels hold (ints,
// bools, plain strings and string lists), exactly as json.Marshal writes
// them, without reflection: encoding runs for every write and every stored
// value. It reports false for anything else, including strings
// encoding/json would escape, leaving those to json.Marshal.
func appendSimpleJSON(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		if !plainJSONString(x) {
			return nil, false
		}
		b = slices.Grow(b, len(x)+2)
		b = append(b, '"')
		b = append(b, x...)
		return append(b, '"'), true
	case []string:
		if x == nil {
			return append(b, "null"...), true
		}
		n := 2
		for _, e := range x {
			if !plainJSONString(e) {
				return nil, false
			}
			n += len(e) + 3
		}
		b = slices.Grow(b, n)
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, e...)
			b = append(b, '"')
		}
		return append(b, ']'), true
	}
	return nil, false
}

// plainJSONString reports whether json.Marshal writes s unchanged between
// quotes: printable ASCII without the characters it escapes. It looks at
// eight bytes at a time, since every value and write the engine stores is
// scanned (a wide state's kilobyte strings made the byte loop a quarter of
// a checkpointed run's CPU).
func plainJSONString(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if escapesWord(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))) {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// escapesWord reports whether any of the eight bytes in w is one
// plainJSONString refuses. With ones = 0x0101…01 and high = 0x8080…80: a
// byte with its high bit set is not ASCII; when no byte has it, x - n·ones
// sets the high bit of (at least) the lowest byte of x below n, and
// w + ones that of a DEL (0x7f), with no carry out of any byte.
func escapesWord(w uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	return (w|
		(w-0x20*ones)| // a control character
		(w+ones)| // DEL
		(w^'"'*ones-ones)|
		(w^'\\'*ones-ones)|
		(w^'&'*ones-ones)|
		((w^'<'*ones)&^(0x02*ones)-ones))& // '<' or '>', which differ in bit 1 only
		high != 0
}

func (c typedCodec[T]) decode(b []byte) (any, error) {
	if reflect.TypeFor[T]().Kind() == reflect.Interface {
		v, err := decodeDynamic(b)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		if _, ok := v.(T); !ok {
			return nil, fmt.Errorf("stored value of type %T does not implement %v", v, reflect.TypeFor[T]())
		}
		return v, nil
	}
	if v, ok := decodeSimple[T](b); ok {
		return v, nil
	}
	var t T
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeSimple is decodeSimpleJSON into a new T. Its T stays on the stack,
// where the one decode gives encoding/json would have to be on the heap.
func decodeSimple[T any](b []byte) (any, bool) {
	var t T
	if decodeSimpleJSON(b, &t) {
		return t, true
	}
	return nil, false
}

// decodeSimpleJSON decodes b into *p for the types appendSimpleJSON writes,
// when b is exactly what json.Unmarshal would accept and decode the same
// way: a plain integer, true or false, a string without escapes. It reports
// false, leaving *p alone, for anything else (leaving it to encoding/json,
// which also gives the errors). Snapshots of a long history decode
// thousands of values.
func decodeSimpleJSON(b []byte, p any) bool {
	switch p := p.(type) {
	case *int:
		n, ok := plainJSONInt(b)
		if ok && int64(int(n)) == n {
			*p = int(n)
		}
		return ok && int64(int(n)) == n
	case *int64:
		n, ok := plainJSONInt(b)
		if ok {
			*p = n
		}
		return ok
	case *bool:
		switch string(b) {
		case "true":
			*p = true
			return true
		case "false":
			*p = false
			return true
		}
	case *string:
		if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' {
			inner := b[1 : len(b)-1]
			for _, c := range inner {
				if c == '"' || c == '\\' || c < 0x20 {
					return false
				}
			}
			if utf8.Valid(inner) { // encoding/json replaces invalid UTF-8
				*p = string(inner)
				return true
			}
		}
	}
	return false
}

// plainJSONInt parses a JSON integer: an optional minus, then 0 or digits
// not starting with 0, nothing else; at most 18 digits, so it cannot
// overflow.
func plainJSONInt(b []byte) (int64, bool) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || digits[0] == '0' && len(digits) > 1 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) != len(b) {
		n = -n
	}
	return n, true
}

// registry maps Go types to stable names for values whose type a channel does
// not fix (an `any` channel, a Send argument, an interrupt payload).
var registry = struct {
	sync.RWMutex
	byType map[reflect.Type]string
	byName map[string]func([]byte) (any, error)
}{byType: map[reflect.Type]string{}, byName: map[string]func([]byte) (any, error){}}

// RegisterType makes values of type T storable where a channel's type does
// not say what they are: in `any`-typed channels, as Send arguments, as
// interrupt payloads and resume values. name must be stable across releases
// since it is written into checkpoints. Registering the same type twice under
// the same name is a no-op; a clash panics, because two types under one name
// would decode wrongly.
//
// Loading never executes code: a stored name only selects a registered type to
// decode JSON into.
func RegisterType[T any](name string) {
	t := reflect.TypeFor[T]()
	registry.Lock()
	defer registry.Unlock()
	if old, ok := registry.byType[t]; ok {
		if old == name {
			return
		}
		panic(fmt.Sprintf("engine.RegisterType: %v already registered as %q", t, old))
	}
	if _, ok := registry.byName[name]; ok {
		panic(fmt.Sprintf("engine.RegisterType: name %q already used by another type", name))
	}
	registry.byType[t] = name
	registry.byName[name] = func(b []byte) (any, error) {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return nil, err
		}
		return v, nil
	}
}

func init() {
	RegisterType[string]("string")
	RegisterType[bool]("bool")
	RegisterType[int]("int")
	RegisterType[int64]("int64")
	RegisterType[float64]("float64")
	RegisterType[[]string]("[]string")
	RegisterType[[]int]("[]int")
	RegisterType[[]any]("[]any")
	RegisterType[map[string]any]("map[string]any")
	RegisterType[map[string]string]("map[string]string")
	RegisterType[json.RawMessage]("json")
	RegisterType[Values]("values")
	RegisterType[Message]("message")
	RegisterType[[]Message]("[]message")
	RegisterType[Send]("send")
	RegisterType[[]Send]("[]send")
}

// ErrUnregisteredType is wrapped by errors about a value whose Go type must be
// registered with RegisterType before it can be stored.
var ErrUnregisteredType = errors.New("type not registered (call engine.RegisterType)")

type dynamicForm struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// encodeDynamic wraps v with its registered type name. nil encodes as null.
func encodeDynamic(v any) ([]byte, error) {
	if v == nil {
		return jsonNull, nil
	}
	registry.RLock()
	name, ok := registry.byType[reflect.TypeOf(v)]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("value of type %T: %w", v, ErrUnregisteredType)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(dynamicForm{Type: name, Value: raw})
}

// jsonNull is the encoding of nil: one shared, read-only slice (full, so an
// append copies it), as every edge a task follows writes a nil.
var jsonNull = []byte("null")[:4:4]

func decodeDynamic(b []byte) (any, error) {
	if string(b) == "null" {
		return nil, nil
	}
	var f dynamicForm
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	registry.RLock()
	dec, ok := registry.byName[f.Type]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("stored type %q: %w", f.Type, ErrUnregisteredType)
	}
	return dec(f.Value)
}

// checkStorable reports why values of type t could not survive a save and
// load through JSON: functions, channels, complex numbers and struct fields
// JSON cannot see would be lost silently, so the graph refuses to compile.
func checkStorable(t reflect.Type) error {
	return walkStorable(t, map[reflect.Type]bool{}, t.String())
}

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

func walkStorable(t reflect.Type, seen map[reflect.Type]bool, path string) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return fmt.Errorf("%s: a %v cannot be saved in a checkpoint", path, t.Kind())
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return walkStorable(t.Elem(), seen, path+"[]")
	case reflect.Map:
		if err := walkStorable(t.Key(), seen, path+" key"); err != nil {
			return err
		}
		return walkStorable(t.Elem(), seen, path+"[k]")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				if f.Anonymous {
					continue
				}
				return fmt.Errorf("%s.%s: unexported field would be lost when saved (export it or implement json.Marshaler and json.Unmarshaler)", path, f.Name)
			}
			if f.Tag.Get("json") == "-" {
				return fmt.Errorf("%s.%s: field tagged json:\"-\" would be lost when saved", path, f.Name)
			}
			if err := walkStorable(f.Type, seen, path+"."+f.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
