package record

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"sync"

	"github.com/weftstudio/weft/checkpoint"
)

// Stored values may be compressed. The first byte tells: packDeflate means
// DEFLATE data follows, packEscaped means the raw value follows (used only
// for raw values that themselves start with one of these two bytes); any
// other first byte is the raw value itself. JSON never starts with either,
// so values the engine writes are stored as they are unless compression
// pays.
const (
	packDeflate = 0x01
	packEscaped = 0x02
	// PackMin is the size from which values are worth compressing.
	PackMin = 256
)

var (
	writers = sync.Pool{New: func() any { w, _ := flate.NewWriter(nil, flate.BestSpeed); return w }}
	readers = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// Pack returns the stored form of a value: DEFLATE-compressed when that
// saves at least an eighth, the value itself otherwise. nil stays nil.
func Pack(b []byte) []byte {
	if b == nil {
		return nil
	}
	escape := len(b) > 0 && (b[0] == packDeflate || b[0] == packEscaped)
	if len(b) >= PackMin {
		var buf bytes.Buffer
		buf.Grow(len(b) / 2)
		buf.WriteByte(packDeflate)
		w := writers.Get().(*flate.Writer)
		w.Reset(&buf)
		_, err := w.Write(b)
		if err == nil {
			err = w.Close()
		}
		writers.Put(w)
		if err == nil && buf.Len() < len(b)-len(b)/8 {
			return buf.Bytes()
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
		r := readers.Get().(io.ReadCloser)
		defer readers.Put(r)
		if err := r.(flate.Resetter).Reset(bytes.NewReader(b[1:]), nil); err != nil {
			return nil, err
		}
		var src io.Reader = r
		if max > 0 {
			src = io.LimitReader(r, int64(max)+1)
		}
		out, err := io.ReadAll(src)
		if err != nil {
			return nil, fmt.Errorf("stored value is damaged: %w", err)
		}
		b = out
	}
	if max > 0 && len(b) > max {
		return nil, fmt.Errorf("%w: it holds more than %d bytes", ErrTooLarge, max)
	}
	return b, nil
}
