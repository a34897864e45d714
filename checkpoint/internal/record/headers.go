package record

import (
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// HeaderBuf gathers a listing's headers in chunks and joins them once:
// a slice grown by append for 100,000 headers allocates five times their
// size, since a large slice grows by a quarter at a time. The zero value
// is ready to use, in chunks of the default size.
type HeaderBuf struct {
	chunks [][]checkpoint.Header
	cur    []checkpoint.Header
	size   int
}

// headerChunk is the default chunk: 4,096 headers.
const headerChunk = 4096

// NewHeaderBuf returns a buffer for a listing of at most limit headers (0
// or less: no limit); a small limit is its one chunk.
func NewHeaderBuf(limit int) *HeaderBuf {
	b := &HeaderBuf{size: headerChunk}
	if limit > 0 && limit < headerChunk {
		b.size = limit
	}
	return b
}

// Add appends h.
func (b *HeaderBuf) Add(h checkpoint.Header) {
	if b.size == 0 {
		b.size = headerChunk
	}
	if len(b.cur) == cap(b.cur) {
		if b.cur != nil {
			b.chunks = append(b.chunks, b.cur)
		}
		b.cur = make([]checkpoint.Header, 0, b.size)
		b.size = headerChunk // past a small limit's chunk, the default
	}
	b.cur = append(b.cur, h)
}

// Headers returns what was added, in order; never nil.
func (b *HeaderBuf) Headers() []checkpoint.Header {
	if len(b.chunks) == 0 {
		if b.cur == nil {
			return []checkpoint.Header{}
		}
		return b.cur
	}
	return slices.Concat(append(b.chunks, b.cur)...)
}
