package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// The stored header and metadata are decoded on every read, thousands at a
// time when a history is listed, and encoding/json needs several
// microseconds for each. The decoders here handle the shapes this package
// writes (plain strings, integers, the known keys) in a fraction of that, and
// give up on anything else — an escaped string, a float, an unexpected type —
// so the caller falls back to encoding/json, which stays the reference.

var errSlow = errors.New("record: not on the fast path")

type scanner struct {
	b      []byte
	i      int
	intern func([]byte) string // nil: allocate every string
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (s *scanner) peek() byte {
	s.ws()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) expect(c byte) error {
	if s.peek() != c {
		return errSlow
	}
	s.i++
	return nil
}

// null consumes a null literal if one is next.
func (s *scanner) null() bool {
	if s.peek() == 'n' && len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// str reads a string without escapes.
func (s *scanner) str() (string, error) {
	b, err := s.rawStr()
	if err != nil {
		return "", err
	}
	if s.intern != nil {
		return s.intern(b), nil
	}
	return string(b), nil
}

// rawStr reads a string without escapes and returns its bytes (part of the
// input).
func (s *scanner) rawStr() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	start := s.i
	checked := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], nil
		case c == '\\' || c < 0x20:
			return nil, errSlow
		case c >= 0x80 && !checked:
			// encoding/json replaces invalid UTF-8; only valid text stays fast.
			end := bytes.IndexByte(s.b[s.i:], '"')
			if end < 0 || !utf8.Valid(s.b[s.i:s.i+end]) {
				return nil, errSlow
			}
			checked = true
		}
		s.i++
	}
	return nil, errSlow
}

// int reads an integer (no fraction, no exponent).
func (s *scanner) int() (int64, error) {
	s.ws()
	neg := false
	if s.i < len(s.b) && s.b[s.i] == '-' {
		neg = true
		s.i++
	}
	start := s.i
	var n int64
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if s.i-start >= 18 {
			return 0, errSlow // may overflow: let encoding/json decide
		}
		n = n*10 + int64(s.b[s.i]-'0')
		s.i++
	}
	if s.i == start || (s.b[start] == '0' && s.i-start > 1) {
		return 0, errSlow // no digits, or a leading zero (not JSON)
	}
	if s.i < len(s.b) {
		switch s.b[s.i] {
		case '.', 'e', 'E':
			return 0, errSlow
		}
	}
	if neg {
		n = -n
	}
	return n, nil
}

// objectStart consumes '{'; then call member until it reports no more.
func (s *scanner) objectStart() error { return s.expect('{') }

// member reads the next key of an object (and its ':'), or reports false at
// the closing '}'. first must be true for the first call of an object.
func (s *scanner) member(first *bool) (string, bool, error) {
	k, ok, err := s.memberRaw(first)
	if err != nil || !ok {
		return "", ok, err
	}
	if s.intern != nil {
		return s.intern(k), true, nil
	}
	return string(k), true, nil
}

// memberRaw is member returning the key's bytes: for the fixed keys of the
// header and metadata, compared without making a string.
func (s *scanner) memberRaw(first *bool) ([]byte, bool, error) {
	c := s.peek()
	if c == '}' {
		s.i++
		return nil, false, nil
	}
	if !*first {
		if c != ',' {
			return nil, false, errSlow
		}
		s.i++
	}
	*first = false
	k, err := s.rawStr()
	if err != nil {
		return nil, false, err
	}
	if err := s.expect(':'); err != nil {
		return nil, false, err
	}
	return k, true, nil
}

// strings reads an array of strings; null gives nil, [] an empty slice.
func (s *scanner) strings() ([]string, error) {
	if s.null() {
		return nil, nil
	}
	if err := s.expect('['); err != nil {
		return nil, err
	}
	out := []string{}
	if s.peek() == ']' {
		s.i++
		return out, nil
	}
	for {
		v, err := s.str()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return out, nil
		default:
			return nil, errSlow
		}
	}
}

// versions reads an object of integers; null gives nil.
func (s *scanner) versions() (map[string]int64, error) { return objectOf(s, s.int) }

// objectOf reads a JSON object whose member values value reads, or null
// as a nil map.
func objectOf[V any](s *scanner, value func() (V, error)) (map[string]V, error) {
	if s.null() {
		return nil, nil
	}
	if err := s.objectStart(); err != nil {
		return nil, err
	}
	out := map[string]V{}
	for first := true; ; {
		k, ok, err := s.member(&first)
		if err != nil || !ok {
			return out, err
		}
		if out[k], err = value(); err != nil {
			return nil, err
		}
	}
}

// skip passes over any JSON value, checking only its nesting.
func (s *scanner) skip() error {
	switch c := s.peek(); c {
	case '"':
		s.i++
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '\\':
				s.i += 2
				continue
			case '"':
				s.i++
				return nil
			}
			s.i++
		}
		return errSlow
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return nil
				}
			case '"':
				if err := s.skip(); err != nil {
					return err
				}
				continue
			}
			s.i++
		}
		return errSlow
	case 0:
		return errSlow
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return nil
			}
			s.i++
		}
		return nil
	}
}

func (s *scanner) end() error {
	s.ws()
	if s.i != len(s.b) {
		return errSlow
	}
	return nil
}

var (
	headerKeys   = map[string]uint{"v": 1, "channel_versions": 2, "versions_seen": 3, "updated_channels": 4}
	metadataKeys = map[string]uint{"source": 1, "step": 2, "run_id": 3, "tasks": 4, "parents": 5, "extra": 6}
)

// fastHeader decodes a stored header; errSlow means "use encoding/json".
func fastHeader(b []byte, h *Header, intern func([]byte) string) error {
	s := &scanner{b: b, intern: intern}
	return s.fields(headerKeys, func(k []byte) (err error) {
		switch string(k) {
		case "v":
			var v int64
			v, err = s.int()
			h.V = int(v)
		case "channel_versions":
			h.ChannelVersions, err = s.versions()
		case "versions_seen":
			h.VersionsSeen, err = s.versionsSeen()
		case "updated_channels":
			h.UpdatedChannels, err = s.strings()
		default:
			err = errSlow // encoding/json matches keys case-insensitively
		}
		return err
	})
}

// fields reads an object whose keys are those of keys (each with its own
// bit), calling field for each member with the scanner at its value. A
// repeated key gives errSlow: encoding/json merges objects. An unknown key
// (bit 0) reaches field, which refuses it.
func (s *scanner) fields(keys map[string]uint, field func(key []byte) error) error {
	if err := s.objectStart(); err != nil {
		return err
	}
	var seen uint
	for first := true; ; {
		k, ok, err := s.memberRaw(&first)
		if err != nil {
			return err
		}
		if !ok {
			return s.end()
		}
		bit := uint(1) << keys[string(k)]
		if seen&bit != 0 {
			return errSlow
		}
		seen |= bit
		if err := field(k); err != nil {
			return err
		}
	}
}

// fastVersions appends the values of a stored header's channel_versions to
// dst; errSlow means "decode it in full".
func fastVersions(dst []int64, b []byte) ([]int64, error) {
	s := &scanner{b: b}
	if err := s.objectStart(); err != nil {
		return dst, err
	}
	out := dst
	found := false
	for first := true; ; {
		k, ok, err := s.memberRaw(&first)
		if err != nil {
			return dst, err
		}
		if !ok {
			if !found { // absent: leave it to DecodeHeader to judge
				return dst, errSlow
			}
			return out, s.end()
		}
		if string(k) != "channel_versions" {
			if err := s.skip(); err != nil {
				return dst, err
			}
			continue
		}
		if found {
			return dst, errSlow // a repeated key
		}
		found = true
		if s.null() {
			continue
		}
		if err := s.objectStart(); err != nil {
			return dst, err
		}
		for first := true; ; {
			_, ok, err := s.memberRaw(&first)
			if err != nil {
				return dst, err
			}
			if !ok {
				break
			}
			v, err := s.int()
			if err != nil {
				return dst, err
			}
			out = append(out, v)
		}
	}
}

func (s *scanner) versionsSeen() (map[string]map[string]int64, error) { return objectOf(s, s.versions) }

// fastMetadata decodes stored metadata; errSlow means "use encoding/json".
// Extra, when present, is handed to encoding/json alone.
func fastMetadata(b []byte, md *metadataFields, intern func([]byte) string) error {
	s := &scanner{b: b, intern: intern}
	return s.fields(metadataKeys, func(k []byte) (err error) {
		switch string(k) {
		case "source":
			md.Source, err = s.str()
		case "step":
			var v int64
			v, err = s.int()
			md.Step = int(v)
		case "run_id":
			md.RunID, err = s.str()
		case "tasks":
			md.Tasks, err = s.strings()
		case "parents":
			md.Parents, err = s.parents()
		case "extra":
			s.ws()
			start := s.i
			if m, ok := s.flatStrings(); ok {
				md.ExtraMap = m
				return nil
			}
			s.i = start
			if err = s.skip(); err == nil {
				if s.i == start || !json.Valid(b[start:s.i]) {
					return errSlow
				}
				md.Extra = json.RawMessage(b[start:s.i])
			}
		default:
			err = errSlow // encoding/json matches keys case-insensitively
		}
		return err
	})
}

// flatStrings reads an object whose values are all plain strings (the usual
// metadata extra, such as {"graph": "…"}) as encoding/json would decode it
// into any. It reports false, having consumed an unknown amount, for
// anything else.
func (s *scanner) flatStrings() (map[string]any, bool) {
	if s.objectStart() != nil {
		return nil, false
	}
	out := map[string]any{}
	for first := true; ; {
		k, ok, err := s.member(&first)
		if err != nil {
			return nil, false
		}
		if !ok {
			return out, true
		}
		if s.peek() != '"' {
			return nil, false
		}
		v, err := s.str()
		if err != nil {
			return nil, false
		}
		out[k] = v
	}
}

func (s *scanner) parents() (map[string]string, error) { return objectOf(s, s.str) }

// metadataFields is checkpoint.Metadata with Extra left undecoded.
type metadataFields struct {
	Source  string
	Step    int
	Parents map[string]string
	RunID   string
	Tasks   []string
	Extra   json.RawMessage // Extra not yet decoded, or
	// ExtraMap, Extra decoded by flatStrings.
	ExtraMap map[string]any
}
