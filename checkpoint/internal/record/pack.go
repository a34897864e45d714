package record

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/weftstudio/weft/checkpoint"
)

// Stored values may be compressed. The first byte tells: packDeflate means
// compressed data follows, packEscaped means the raw value follows (used
// only for raw values that themselves start with one of these two bytes);
// any other first byte is the raw value itself. JSON never starts with
// either, so values the engine writes are stored as they are unless
// compression pays.
//
// After packDeflate, the byte packZstd says a zstd frame follows; any other
// byte starts DEFLATE data. 0xff is a DEFLATE block of the reserved type 3,
// which no DEFLATE stream starts with, so the stores written before zstd
// (DEFLATE only, schema 7 and older) read as they always did. zstd replaced
// DEFLATE because it is faster and smaller at once: a kilobyte value packs
// in 1.05 µs against 1.56, a 60 KB message list in 62 µs against 96 and to
// 2.7 KB against 4.9 (klauspost/compress, fastest level, one core).
const (
	packDeflate = 0x01
	packEscaped = 0x02
	packZstd    = 0xff
	// PackMin is the size from which values are worth compressing.
	PackMin = 256
)

var (
	readers = sync.Pool{New: func() any { return flate.NewReader(nil) }}
	// The zstd coders are made on first use. A write packs its values on
	// up to two goroutines (the SQLite saver's inHalves); reads decode on
	// as many as ask. Neither keeps a window between values.
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(2), zstd.WithLowerEncoderMem(true))
		if err != nil {
			panic(err) // only for invalid options
		}
		return e
	})
	zstdDecoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(uint64(checkpoint.MaxValueSize)+1), zstd.WithDecoderLowmem(true))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// Pack returns the stored form of a value: zstd-compressed when that saves
// at least an eighth, the value itself otherwise. nil stays nil.
func Pack(b []byte) []byte {
	if b == nil {
		return nil
	}
	escape := len(b) > 0 && (b[0] == packDeflate || b[0] == packEscaped)
	if len(b) >= PackMin {
		// The frame records the value's size, which Unpack checks against
		// its limit before decoding.
		out := zstdEncoder().EncodeAll(b, append(make([]byte, 0, 2+len(b)/2), packDeflate, packZstd))
		if len(out) < len(b)-len(b)/8 {
			return out
		}
	}
	if escape {
		return append([]byte{packEscaped}, b...)
	}
	return b
}

// ErrTooLarge is returned by Unpack for a stored value that is, or
// decompresses to, more bytes than the limit, and by CheckValue and
// CheckWrite. It is checkpoint.ErrValueTooLarge.
var ErrTooLarge = checkpoint.ErrValueTooLarge

// CheckValue returns an error wrapping ErrTooLarge, naming the channel, the
// version, the size and the limit, when a channel value to store is larger
// than checkpoint.MaxValueSize.
func CheckValue(channel string, version int64, n int) error {
	if n <= checkpoint.MaxValueSize {
		return nil
	}
	return fmt.Errorf("the value of channel %q at version %d is %d bytes: %w of %d bytes (checkpoint.MaxValueSize); nothing was stored", channel, version, n, ErrTooLarge, checkpoint.MaxValueSize)
}

// CheckWrite is CheckValue for the value of a pending write.
func CheckWrite(channel string, n int) error {
	if n <= checkpoint.MaxValueSize {
		return nil
	}
	return fmt.Errorf("the write to channel %q is %d bytes: %w of %d bytes (checkpoint.MaxValueSize); nothing was stored", channel, n, ErrTooLarge, checkpoint.MaxValueSize)
}

// Unpack returns the value of a stored form written by Pack. The result may
// share memory with b when b was stored raw. A value of more than max bytes
// (max ≤ 0: no limit) is an error wrapping ErrTooLarge, found without
// decompressing more than max+1 bytes, so crafted compressed data cannot
// take more memory than that.
func Unpack(b []byte, max int) ([]byte, error) {
	if len(b) == 0 {
		return b, nil
	}
	switch b[0] {
	case packEscaped:
		b = b[1:]
	case packDeflate:
		if len(b) > 1 && b[1] == packZstd {
			out, err := unzstd(b[2:], max)
			if err != nil {
				return nil, err
			}
			b = out
			break
		}
		r := readers.Get().(io.ReadCloser)
		defer readers.Put(r)
		if err := r.(flate.Resetter).Reset(bytes.NewReader(b[1:]), nil); err != nil {
			return nil, err
		}
		out, over, err := inflate(r, len(b), max)
		if err != nil {
			return nil, fmt.Errorf("stored value is damaged: %w", err)
		}
		if over {
			return nil, fmt.Errorf("%w: it holds more than %d bytes", ErrTooLarge, max)
		}
		b = out
	}
	if max > 0 && len(b) > max {
		return nil, fmt.Errorf("%w: it holds more than %d bytes", ErrTooLarge, max)
	}
	return b, nil
}

// unzstd decodes one zstd frame that Pack wrote. The frame must say its
// size, so a value over max is refused before anything is decoded, and the
// output is allocated once at that size.
func unzstd(b []byte, max int) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(b); err != nil {
		return nil, fmt.Errorf("stored value is damaged: %w", err)
	}
	if !h.HasFCS {
		return nil, fmt.Errorf("stored value is damaged: its zstd frame does not say its size")
	}
	if h.FrameContentSize > uint64(checkpoint.MaxValueSize) || (max > 0 && h.FrameContentSize > uint64(max)) {
		return nil, fmt.Errorf("%w: it holds %d bytes", ErrTooLarge, h.FrameContentSize)
	}
	out, err := zstdDecoder().DecodeAll(b, make([]byte, 0, h.FrameContentSize))
	if err != nil {
		return nil, fmt.Errorf("stored value is damaged: %w", err)
	}
	if uint64(len(out)) != h.FrameContentSize {
		return nil, fmt.Errorf("stored value is damaged: its zstd frame says %d bytes and holds %d", h.FrameContentSize, len(out))
	}
	return out, nil
}

// inflate reads r to its end, or, when max > 0, until it has read more
// than max bytes (then over is true and out holds max of them). Its buffer
// starts at a few times the compressed size n and doubles, capped at max:
// reading a value takes at most about twice the limit in all, where
// io.ReadAll (growing by a quarter once large) took five times.
func inflate(r io.Reader, n, max int) (out []byte, over bool, err error) {
	out = make([]byte, 0, min(4*n+512, 1<<20))
	if max > 0 {
		out = out[:0:min(cap(out), max)]
	}
	for {
		if len(out) == cap(out) {
			if max > 0 && len(out) >= max {
				// Full at the limit: one more byte says it is over.
				var one [1]byte
				for {
					k, err := r.Read(one[:])
					if k > 0 {
						return out, true, nil
					}
					if err == io.EOF {
						return out, false, nil
					}
					if err != nil {
						return nil, false, err
					}
				}
			}
			next := 2 * cap(out)
			if max > 0 && next > max/2 {
				next = max // not a step short of it, then a second copy
			}
			grown := make([]byte, len(out), next)
			copy(grown, out)
			out = grown
		}
		k, err := r.Read(out[len(out):cap(out)])
		out = out[:len(out)+k]
		if err == io.EOF {
			return out, false, nil
		}
		if err != nil {
			return nil, false, err
		}
	}
}
