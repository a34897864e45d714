package langgraph

import (
	"fmt"
	"sync"

	"github.com/zeebo/xxh3"
)

// valueCache holds the values one thread's decoding has decoded, by their
// serde type and stored bytes, so that a value stored again and again is
// decoded once. LangGraph.js' SqliteSaver stores every channel's value in
// every checkpoint row (a 10 kB note unchanged for 10,000 checkpoints is
// 10,000 copies), and the PostgresSavers name one blob from many
// checkpoints: decoding each copy made reading a long thread slow and
// large. The checkpoints then share one decoded value, which is safe
// because nothing that reads a Thread changes a value in place (snapshots
// copy the maps and lists they change: see snapshot and applyWrites). The
// goroutines decoding one long thread share it (decodeCheckpoints), so a
// value is held once however the thread is cut. nil caches nothing.
type valueCache struct {
	mu sync.Mutex
	m  map[valueKey]any
}

func newValueCache() *valueCache { return &valueCache{m: map[valueKey]any{}} }

// valueKey names stored bytes by their 128-bit hash: two different values
// colliding is far less likely than the store's disk failing.
type valueKey struct {
	typ string
	n   int
	h   xxh3.Uint128
}

// Arrays of LangGraph.js' JSON serde of at least splitArray bytes are
// decoded an element at a time, each element of at least cacheElement
// bytes through the cache: a list channel with a reducer (messages, notes)
// is stored whole in every row, each row's list one element longer, so
// the rows' lists differ while their elements repeat. Decoded whole, a
// thread whose rows held lists of one, two and three 87 MB notes decoded
// six notes; element by element it decodes three, and the rows share them.
const (
	splitArray   = 256 << 10
	cacheElement = 4 << 10
)

// decode is Reader.decodeValue through the cache. A value that fails to
// decode is not kept (each copy reports its own error).
func (vc *valueCache) decode(r *Reader, typ string, b []byte) (any, error) {
	if vc == nil {
		return r.decodeValue(typ, b)
	}
	k := valueKey{typ, len(b), xxh3.Hash128(b)}
	vc.mu.Lock()
	v, ok := vc.m[k]
	vc.mu.Unlock()
	if ok {
		return v, nil
	}
	// Decoded outside the lock: two goroutines meeting the same new value
	// at once both decode it, and the first one stored is kept.
	var err error
	if elems, split := jsonElements(typ, b); split {
		v, err = vc.decodeArray(r, elems)
	} else {
		v, err = r.decodeValue(typ, b)
	}
	if err != nil {
		return v, err
	}
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if first, ok := vc.m[k]; ok {
		return first, nil
	}
	vc.m[k] = v
	return v, nil
}

// jsonElements returns the elements' bytes of b when it is a JSON array
// (LangGraph.js' serde) of at least splitArray bytes that the scanner can
// walk; split is false otherwise (and for a malformed array, which
// decoding whole then reports).
func jsonElements(typ string, b []byte) (elems [][]byte, split bool) {
	if typ != "json" || len(b) < splitArray {
		return nil, false
	}
	sc := jsonScan{b: b}
	sc.ws()
	if sc.i >= len(b) || b[sc.i] != '[' {
		return nil, false
	}
	sc.i++
	sc.ws()
	if sc.i < len(b) && b[sc.i] == ']' {
		return nil, false
	}
	for {
		sc.ws()
		start := sc.i
		if sc.skip(1) != nil {
			return nil, false
		}
		elems = append(elems, b[start:sc.i])
		sc.ws()
		if sc.i >= len(b) {
			return nil, false
		}
		if b[sc.i] == ']' {
			sc.i++
			break
		}
		if b[sc.i] != ',' {
			return nil, false
		}
		sc.i++
	}
	if sc.ws(); sc.i != len(b) {
		return nil, false
	}
	return elems, true
}

// decodeArray decodes an array's elements (from jsonElements) as
// decodeJSValue decodes the whole array: an undefined element is null.
// Large elements go through the cache, so rows that repeat them share one.
func (vc *valueCache) decodeArray(r *Reader, elems [][]byte) (any, error) {
	out := make([]any, len(elems))
	for i, e := range elems {
		var v any
		var err error
		if len(e) >= cacheElement {
			v, err = vc.decode(r, "json", e)
		} else {
			v, err = decodeJSValue(e)
		}
		if err != nil {
			return nil, err
		}
		if v != undefined {
			out[i] = v
		}
	}
	return out, nil
}

// splitJSONBody splits a JSON checkpoint body (LangGraph.js' serde) into
// its channel values' stored bytes, by channel (nil when channel_values is
// not an object), and the rest of it decoded. ok is false when the body is
// not one the scanner can walk, or one whole decoding might read otherwise
// (a repeated channel_values, an "lc" key): the caller then decodes it
// whole, which also says what is wrong with it.
func splitJSONBody(body []byte) (rest map[string]any, values map[string][]byte, ok bool) {
	sc := jsonScan{b: body}
	rest = map[string]any{}
	seen := map[string]bool{}
	err := sc.object(func(key string) error {
		if seen[key] {
			return fmt.Errorf("repeated key %q", key)
		}
		seen[key] = true
		if key == "channel_values" {
			if sc.ws(); sc.i < len(sc.b) && sc.b[sc.i] == '{' {
				values = map[string][]byte{}
				return sc.object(func(ch string) error {
					if _, dup := values[ch]; dup {
						return fmt.Errorf("repeated channel %q", ch)
					}
					start := sc.i
					if err := sc.skip(0); err != nil {
						return err
					}
					values[ch] = body[start:sc.i]
					return nil
				})
			}
		}
		start := sc.i
		if err := sc.skip(0); err != nil {
			return err
		}
		v, err := decodeJSValue(body[start:sc.i])
		if err != nil {
			return err
		}
		if v != undefined {
			rest[key] = v
		}
		return nil
	})
	if err != nil || seen["lc"] {
		return nil, nil, false
	}
	if sc.ws(); sc.i != len(body) {
		return nil, nil, false
	}
	return rest, values, true
}

// decodeJSONBody decodes a JSON checkpoint body as decodeValue would, its
// channel values through vc.
func (r *Reader) decodeJSONBody(vc *valueCache, body []byte) (any, error) {
	rest, raw, ok := splitJSONBody(body)
	if !ok {
		return r.decodeValue("json", body)
	}
	if raw != nil {
		vals := make(map[string]any, len(raw))
		for ch, b := range raw {
			v, err := vc.decode(r, "json", b)
			if err != nil {
				return nil, err
			}
			if v != undefined {
				vals[ch] = v
			}
		}
		rest["channel_values"] = vals
	}
	return rest, nil
}
