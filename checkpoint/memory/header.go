package memory

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/checkpoint/internal/record"
)

// A checkpoint header (format version, channel versions, versions seen,
// updated channels) is kept as one pointer-free byte slice: varints, with
// channel and node names replaced by their index in the saver's name table.
// A store of many threads then costs the garbage collector little, and Put
// neither sorts nor formats numbers as JSON would. Maps and slices are
// written as length+1, so 0 stands for nil and nil and empty read back as
// they were put.

// names interns channel and node names for headers. The table only grows: a
// program has few distinct names, and headers of deleted threads may share
// them with live ones. The caller of each method holds the saver's lock.
type names struct {
	ids     map[string]uint64
	list    []string
	scratch []byte // encodeHeader's buffer
	// recent caches ids by the address and length of a string's bytes:
	// callers pass the same name strings checkpoint after checkpoint, and
	// this check costs a fraction of a map lookup. Strings are immutable,
	// so equal address and length mean equal text.
	recent [1 << 8]recentName
}

type recentName struct {
	p  *byte
	n  int
	id uint64
}

func (n *names) id(s string) uint64 {
	p := unsafe.StringData(s)
	h := (uint64(uintptr(unsafe.Pointer(p))) ^ uint64(len(s))) * 0x9E3779B97F4A7C15 // Fibonacci hashing: names often sit in one 16-byte block
	slot := &n.recent[h>>(64-8)]
	if slot.p == p && slot.n == len(s) && p != nil {
		return slot.id
	}
	i, ok := n.ids[s]
	if !ok {
		i = n.add(s)
	}
	*slot = recentName{p, len(s), i}
	return i
}

func (n *names) add(s string) uint64 {
	if n.ids == nil {
		n.ids = map[string]uint64{}
	}
	i := uint64(len(n.list))
	n.ids[s] = i
	n.list = append(n.list, s)
	return i
}

// appendCount writes a length as length+1, or 0 for nil.
func appendCount(b []byte, n int, isNil bool) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.AppendUvarint(b, uint64(n)+1)
}

func (n *names) appendVersions(b []byte, m map[string]int64) []byte {
	b = appendCount(b, len(m), m == nil)
	for k, v := range m {
		b = binary.AppendUvarint(b, n.id(k))
		b = binary.AppendVarint(b, v)
	}
	return b
}

// encodeHeader returns cp's header in its stored form, copied into a: a
// thread's headers share chunks.
func (n *names) encodeHeader(a *record.Arena, cp *checkpoint.Checkpoint) []byte {
	b := n.scratch[:0] // encoded here first: the exact size then decides the chunk
	b = binary.AppendVarint(b, int64(cp.V))
	b = n.appendVersions(b, cp.ChannelVersions)
	b = appendCount(b, len(cp.VersionsSeen), cp.VersionsSeen == nil)
	for node, m := range cp.VersionsSeen {
		b = binary.AppendUvarint(b, n.id(node))
		b = n.appendVersions(b, m)
	}
	b = appendCount(b, len(cp.UpdatedChannels), cp.UpdatedChannels == nil)
	for _, c := range cp.UpdatedChannels {
		b = binary.AppendUvarint(b, n.id(c))
	}
	n.scratch = b
	return a.Copy(b)
}

var errHeader = errors.New("damaged header")

// headerReader reads what encodeHeader wrote; the first error sticks.
type headerReader struct {
	b     []byte
	names *names
	err   error
}

func (r *headerReader) uvarint() uint64 {
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err, r.b = errHeader, nil
		return 0
	}
	r.b = r.b[k:]
	return v
}

// varint reads what binary.AppendVarint wrote: a zig-zag encoded uvarint.
func (r *headerReader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *headerReader) name() string {
	i := r.uvarint()
	if i >= uint64(len(r.names.list)) {
		r.err, r.b = errHeader, nil
		return ""
	}
	return r.names.list[i]
}

// count reads a length+1; ok is false for nil.
func (r *headerReader) count() (n int, ok bool) {
	c := r.uvarint()
	if c == 0 || c-1 > uint64(len(r.b)) { // every entry takes a byte at least
		if c != 0 {
			r.err, r.b = errHeader, nil
		}
		return 0, false
	}
	return int(c - 1), true
}

func (r *headerReader) versions() map[string]int64 {
	n, ok := r.count()
	if !ok {
		return nil
	}
	m := make(map[string]int64, n)
	for range n {
		k := r.name()
		m[k] = r.varint()
	}
	return m
}

// decodeHeader rebuilds a checkpoint without values from its stored header.
// ChannelValues (empty, for the caller to fill), ChannelVersions and
// VersionsSeen are never nil on return, as with the SQLite saver.
func (n *names) decodeHeader(b []byte, id string, ts time.Time) (checkpoint.Checkpoint, error) {
	r := headerReader{b: b, names: n}
	cp := checkpoint.Checkpoint{ID: id, TS: ts}
	cp.V = int(r.varint())
	cp.ChannelVersions = r.versions()
	if c, ok := r.count(); ok {
		cp.VersionsSeen = make(map[string]map[string]int64, c)
		for range c {
			node := r.name()
			cp.VersionsSeen[node] = r.versions()
		}
	}
	if c, ok := r.count(); ok {
		cp.UpdatedChannels = make([]string, c)
		for i := range cp.UpdatedChannels {
			cp.UpdatedChannels[i] = r.name()
		}
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = errHeader
	}
	if r.err != nil {
		return checkpoint.Checkpoint{}, fmt.Errorf("checkpoint %s: %w", id, r.err)
	}
	if cp.ChannelVersions == nil {
		cp.ChannelVersions = map[string]int64{}
	}
	if cp.VersionsSeen == nil {
		cp.VersionsSeen = map[string]map[string]int64{}
	}
	cp.ChannelValues = make(map[string][]byte, len(cp.ChannelVersions))
	return cp, nil
}
