// Package record holds what the memory and SQLite checkpoint savers share so
// that they behave the same: argument checks, the stored JSON forms of the
// checkpoint header and metadata, write indexes and metadata filters.
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weftstudio/weft/checkpoint"
)

// Header is the part of a checkpoint stored as JSON beside its id and
// timestamp; channel values are stored apart, one blob per version.
type Header struct {
	V               int                         `json:"v"`
	ChannelVersions map[string]int64            `json:"channel_versions"`
	VersionsSeen    map[string]map[string]int64 `json:"versions_seen"`
	UpdatedChannels []string                    `json:"updated_channels"`
}

// EncodeHeader returns the stored JSON form of cp's header: what
// json.Marshal(Header{…}) returns (map keys sorted), built without
// reflection since it runs on every Put.
func EncodeHeader(cp *checkpoint.Checkpoint) ([]byte, error) {
	b := make([]byte, 0, 96+24*len(cp.ChannelVersions))
	b = append(b, `{"v":`...)
	b = strconv.AppendInt(b, int64(cp.V), 10)
	b = append(b, `,"channel_versions":`...)
	b = appendVersions(b, cp.ChannelVersions)
	b = append(b, `,"versions_seen":`...)
	if cp.VersionsSeen == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, k := range sortedKeys(cp.VersionsSeen) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendVersions(b, cp.VersionsSeen[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"updated_channels":`...)
	if cp.UpdatedChannels == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range cp.UpdatedChannels {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, c)
		}
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func appendVersions(b []byte, m map[string]int64) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, k := range sortedKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, m[k], 10)
	}
	return append(b, '}')
}

// appendString appends s as a JSON string, exactly as encoding/json writes
// it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // escapes and HTML-safe forms: leave them to encoding/json
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// DecodeHeader rebuilds a checkpoint without values from its stored header.
// ChannelValues, ChannelVersions and VersionsSeen are never nil on return.
func DecodeHeader(b []byte, id string, ts time.Time) (checkpoint.Checkpoint, error) {
	return DecodeHeaderWith(b, id, ts, nil)
}

// DecodeHeaderWith is DecodeHeader with an interner: intern returns the
// string for a byte sequence, letting a caller that decodes many headers
// share the channel and node names among them. A nil intern allocates.
func DecodeHeaderWith(b []byte, id string, ts time.Time, intern func([]byte) string) (checkpoint.Checkpoint, error) {
	var h Header
	if fastHeader(b, &h, intern) != nil {
		h = Header{}
		if err := json.Unmarshal(b, &h); err != nil {
			if id == "" { // the caller names the checkpoint
				return checkpoint.Checkpoint{}, fmt.Errorf("decode checkpoint header: %w", err)
			}
			return checkpoint.Checkpoint{}, fmt.Errorf("decode checkpoint %s header: %w", id, err)
		}
	}
	if h.ChannelVersions == nil {
		h.ChannelVersions = map[string]int64{}
	}
	if h.VersionsSeen == nil {
		h.VersionsSeen = map[string]map[string]int64{}
	}
	return checkpoint.Checkpoint{
		V:               h.V,
		ID:              id,
		TS:              ts,
		ChannelValues:   make(map[string][]byte, len(h.ChannelVersions)),
		ChannelVersions: h.ChannelVersions,
		VersionsSeen:    h.VersionsSeen,
		UpdatedChannels: h.UpdatedChannels,
	}, nil
}

// AppendHeaderVersions appends every channel version of a stored header to
// dst, without decoding the rest: enough to know which values a page of
// checkpoints needs, and cheaper than DecodeHeader. A header DecodeHeader
// would refuse may pass here; the caller decodes it in full later anyway.
func AppendHeaderVersions(dst []int64, b []byte) ([]int64, error) {
	if out, err := fastVersions(dst, b); err == nil {
		return out, nil
	}
	cp, err := DecodeHeader(b, "", time.Time{})
	if err != nil {
		return dst, err
	}
	for _, v := range cp.ChannelVersions {
		dst = append(dst, v)
	}
	return dst, nil
}

// EncodeMetadata returns the stored JSON form of md. Extra is stored in
// canonical form (object keys sorted at every depth, numbers as written), so
// stored metadata and filters compare as text. It fails when an Extra value
// cannot be encoded as JSON.
func EncodeMetadata(md *checkpoint.Metadata) ([]byte, error) {
	if len(md.Extra) > 0 {
		canon, err := canonical(md.Extra)
		if err != nil {
			return nil, fmt.Errorf("metadata extra is not JSON-encodable: %w", err)
		}
		cp := *md
		cp.Extra = nil
		b, err := json.Marshal(&cp)
		if err != nil {
			return nil, fmt.Errorf("metadata is not JSON-encodable: %w", err)
		}
		// b ends with "}": splice the canonical extra object in.
		out := make([]byte, 0, len(b)+len(canon)+10)
		out = append(out, b[:len(b)-1]...)
		out = append(out, `,"extra":`...)
		out = append(out, canon...)
		return append(out, '}'), nil
	}
	b, err := json.Marshal(md)
	if err != nil {
		return nil, fmt.Errorf("metadata is not JSON-encodable: %w", err)
	}
	return b, nil
}

// canonical returns v as JSON with object keys sorted at every depth and
// numbers kept as encoding/json first wrote them.
func canonical(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || marshalsCanonical(v, 0) {
		// encoding/json sorts the keys of every map it writes, so a value
		// of maps, slices and scalars is canonical as written. Decoding
		// and encoding again, for structs' field order, was most of what
		// storing a checkpoint's metadata cost.
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	return json.Marshal(generic)
}

// marshalsCanonical reports whether json.Marshal writes v in canonical
// form already: v is nil, a bool, a number, valid UTF-8 text, or a
// map[string]any, []any or []string of such values, at most 32 levels deep
// (deeper values take the slow path rather than a deep recursion). Invalid
// UTF-8 is not: it is written as \ufffd escapes, which decode to a
// character that is written back as itself, and it can reorder keys.
func marshalsCanonical(v any, depth int) bool {
	if depth > 32 {
		return false
	}
	switch x := v.(type) {
	case nil, bool, json.Number,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return true
	case string:
		return utf8.ValidString(x)
	case []string:
		for _, e := range x {
			if !utf8.ValidString(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) || !marshalsCanonical(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !marshalsCanonical(e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// DecodeMetadata decodes metadata stored by EncodeMetadata. Extra values come
// back as encoding/json decodes into any: numbers as float64, objects as
// map[string]any, arrays as []any.
func DecodeMetadata(b []byte) (checkpoint.Metadata, error) {
	return DecodeMetadataWith(b, nil)
}

// DecodeMetadataWith is DecodeMetadata with an interner (see
// DecodeHeaderWith).
func DecodeMetadataWith(b []byte, intern func([]byte) string) (checkpoint.Metadata, error) {
	var f metadataFields
	if fastMetadata(b, &f, intern) == nil {
		md := checkpoint.Metadata{Source: checkpoint.Source(f.Source), Step: f.Step, Parents: f.Parents, RunID: f.RunID, Tasks: f.Tasks}
		if f.ExtraMap != nil {
			md.Extra = f.ExtraMap
		} else if len(f.Extra) > 0 {
			if err := json.Unmarshal(f.Extra, &md.Extra); err != nil {
				return checkpoint.Metadata{}, fmt.Errorf("decode metadata extra: %w", err)
			}
		}
		return md, nil
	}
	var md checkpoint.Metadata
	if err := json.Unmarshal(b, &md); err != nil {
		return md, fmt.Errorf("decode metadata: %w", err)
	}
	return md, nil
}

// TSLayout is how timestamps are stored: UTC, nanoseconds, sortable text.
const TSLayout = "2006-01-02T15:04:05.000000000Z"

// FormatTS returns the stored form of t (converted to UTC).
func FormatTS(t time.Time) string { return t.UTC().Format(TSLayout) }

// ParseTS parses a timestamp stored by FormatTS; the result is in UTC.
func ParseTS(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad stored timestamp %q: %w", s, err)
	}
	return t.UTC(), nil
}

// ParseTSBytes is ParseTS for bytes; it reads the stored layout without
// allocating and falls back to time.Parse for anything else.
func ParseTSBytes(b []byte) (time.Time, error) {
	if len(b) == len(TSLayout) && b[4] == '-' && b[7] == '-' && b[10] == 'T' && b[13] == ':' && b[16] == ':' && b[19] == '.' && b[29] == 'Z' {
		num := func(from, to int) (int, bool) {
			n := 0
			for _, c := range b[from:to] {
				if c < '0' || c > '9' {
					return 0, false
				}
				n = n*10 + int(c-'0')
			}
			return n, true
		}
		year, ok1 := num(0, 4)
		month, ok2 := num(5, 7)
		day, ok3 := num(8, 10)
		hour, ok4 := num(11, 13)
		minute, ok5 := num(14, 16)
		sec, ok6 := num(17, 19)
		nsec, ok7 := num(20, 29)
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour < 24 && minute < 60 && sec < 60 {
			t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
			if t.Day() == day { // not normalised from an impossible date
				return t, nil
			}
		}
	}
	return ParseTS(string(b))
}

// CheckPut validates the arguments of Saver.Put.
func CheckPut(parent checkpoint.Ref, cp *checkpoint.Checkpoint, md *checkpoint.Metadata) error {
	if parent.ThreadID == "" {
		return fmt.Errorf("put checkpoint %q: %w", cp.ID, checkpoint.ErrNoThread)
	}
	if cp.ID == "" {
		return fmt.Errorf("put checkpoint in thread %q ns %q: %w", parent.ThreadID, parent.NS, checkpoint.ErrNoCheckpoint)
	}
	if md.Source == "" {
		return fmt.Errorf("put checkpoint %q in thread %q: metadata has no source", cp.ID, parent.ThreadID)
	}
	return nil
}

// CheckWrites validates the arguments of Saver.PutWrites.
func CheckWrites(ref checkpoint.Ref, taskID string) error {
	if ref.ThreadID == "" {
		return fmt.Errorf("put writes of task %q to checkpoint %q: %w", taskID, ref.CheckpointID, checkpoint.ErrNoThread)
	}
	if ref.CheckpointID == "" {
		return fmt.Errorf("put writes of task %q in thread %q ns %q: %w", taskID, ref.ThreadID, ref.NS, checkpoint.ErrNoCheckpoint)
	}
	if taskID == "" {
		return fmt.Errorf("put writes to thread %q checkpoint %q: empty task id", ref.ThreadID, ref.CheckpointID)
	}
	return nil
}

// WriteIndex returns the stored index of the write at position i of a batch
// and whether it is special (replaces an earlier write with the same index
// rather than being ignored).
func WriteIndex(i int, channel string) (idx int, special bool) {
	if idx, ok := checkpoint.SpecialIndex[channel]; ok {
		return idx, true
	}
	return i, false
}

// CloneBytes copies b, keeping nil as nil and empty as empty.
func CloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}

// NonNil returns b, or an empty slice for nil: a channel value or write that
// is present is never nil, even when empty.
func NonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// Arena copies many small byte slices into shared chunks: one allocation
// for many values instead of one each. Chunks start at 2 KB and double up
// to 64 KB (a larger value gets a chunk of its own size); a copy never spans
// two. Each copy is capped at its length, so appending to one never writes
// into the next. A chunk stays alive while any copy in it does. The zero
// Arena is ready to use.
type Arena struct{ buf []byte }

// Copy returns a copy of b in the arena: nil for nil, empty for empty.
func (a *Arena) Copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	if len(b) == 0 {
		return []byte{}
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		size := min(max(2*cap(a.buf), 2<<10), 64<<10)
		a.buf = make([]byte, 0, max(size, len(b)))
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// TopLevelKeys are the filter keys that name Metadata fields; every other
// filter key names an Extra key.
var TopLevelKeys = map[string]bool{"source": true, "step": true, "run_id": true}

// Kind is the JSON type of a filter value.
type Kind int

// Filter value kinds.
const (
	KindNull Kind = iota
	KindString
	KindNumber
	KindBool
	KindOther // object or array, compared as canonical JSON
)

// Cond is one compiled filter condition: metadata key Key must equal Value.
type Cond struct {
	Key      string
	TopLevel bool   // Key names a Metadata field, not an Extra key
	Kind     Kind   // JSON type of Value
	Value    any    // the value as encoding/json decodes it (string, float64, bool, nil, map, slice)
	JSON     string // the value's canonical JSON text
}

// CompileFilter checks a ListOptions.Filter and returns its conditions in key
// order. Values compare as JSON: 42 equals 42.0, a nil value matches a
// missing key or a JSON null.
func CompileFilter(filter map[string]any) ([]Cond, error) {
	if len(filter) == 0 {
		return nil, nil
	}
	conds := make([]Cond, 0, len(filter))
	for k, v := range filter {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("metadata filter key %q: value is not JSON-encodable: %w", k, err)
		}
		var norm any
		if err := json.Unmarshal(b, &norm); err != nil {
			return nil, fmt.Errorf("metadata filter key %q: %w", k, err)
		}
		c := Cond{Key: k, TopLevel: TopLevelKeys[k], Value: norm}
		switch norm.(type) {
		case nil:
			c.Kind = KindNull
		case string:
			c.Kind = KindString
		case float64:
			c.Kind = KindNumber
		case bool:
			c.Kind = KindBool
		default:
			c.Kind = KindOther
			canon, err := canonical(v)
			if err != nil {
				return nil, fmt.Errorf("metadata filter key %q: %w", k, err)
			}
			c.JSON = string(canon)
		}
		conds = append(conds, c)
	}
	sortConds(conds)
	return conds, nil
}

func sortConds(c []Cond) {
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j].Key < c[j-1].Key; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

// MatchMetadata reports whether md satisfies every condition, comparing as
// SQLite compares md's stored JSON form: md must come from DecodeMetadata
// (its Extra values in encoding/json shapes).
func MatchMetadata(md *checkpoint.Metadata, conds []Cond) bool {
	for _, c := range conds {
		var v any
		var ok bool
		switch {
		case !c.TopLevel:
			v, ok = md.Extra[c.Key]
		case c.Key == "source":
			v, ok = string(md.Source), true
		case c.Key == "step":
			v, ok = float64(md.Step), true
		case c.Key == "run_id":
			v, ok = md.RunID, md.RunID != "" // omitted when empty
		}
		if c.Kind == KindNull {
			if ok && v != nil {
				return false
			}
			continue
		}
		if !ok || !reflect.DeepEqual(v, c.Value) {
			return false
		}
	}
	return true
}

// SQLPath returns the SQLite JSON path of a condition's key in the stored
// metadata, and false if the key cannot be written as a path (it contains a
// double quote); such keys are matched with json_each instead.
func SQLPath(c Cond) (string, bool) {
	if strings.ContainsAny(c.Key, "\"\\") {
		return "", false
	}
	if c.TopLevel {
		return "$." + c.Key, true
	}
	return `$.extra."` + c.Key + `"`, true
}
