package bundle

import "encoding/binary"

// maxDepth is the nesting encoding/json accepts.
const maxDepth = 10000

// isCompactJSON reports whether b is one JSON value with no white space
// outside its strings: what json.Valid accepts and json.Compact leaves as
// it is (a string's bytes are not checked to be UTF-8, as neither checks
// them), so it can be embedded in a bundle and come back byte for byte.
// It checks in one pass without copying, strings eight bytes at a time:
// json.Compact copied each value and scanned it at tens of MB/s, most of a
// large export's time.
func isCompactJSON(b []byte) bool {
	var open []byte // '{' or '[' of each container left open
	i := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return false
		}
		switch c := b[i]; c {
		case '{', '[':
			if len(open) >= maxDepth {
				return false
			}
			i++
			end := byte('}')
			if c == '[' {
				end = ']'
			}
			if i < len(b) && b[i] == end {
				i++
				break
			}
			open = append(open, c)
			if c == '{' {
				if i = objectKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case '"':
			if i = stringEnd(b, i); i < 0 {
				return false
			}
		case 't':
			if i = literalEnd(b, i, "true"); i < 0 {
				return false
			}
		case 'f':
			if i = literalEnd(b, i, "false"); i < 0 {
				return false
			}
		case 'n':
			if i = literalEnd(b, i, "null"); i < 0 {
				return false
			}
		default:
			if i = numberEnd(b, i); i < 0 {
				return false
			}
		}
		// A value ended at b[i]: close what it ends, up to the next value.
	closing:
		for {
			if len(open) == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := open[len(open)-1]
			switch {
			case b[i] == ',':
				i++
				if top == '{' {
					if i = objectKey(b, i); i < 0 {
						return false
					}
				}
				break closing
			case top == '{' && b[i] == '}', top == '[' && b[i] == ']':
				open = open[:len(open)-1]
				i++
			default:
				return false
			}
		}
	}
}

// objectKey returns the offset after `"key":` at b[i], or -1.
func objectKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = stringEnd(b, i); i < 0 || i >= len(b) || b[i] != ':' {
		return -1
	}
	return i + 1
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plain reports whether none of the eight bytes of x is a quote, a
// backslash or a control character (below 0x20).
func plain(x uint64) bool {
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x-0x20*ones)&^x&highs|zero(x^'"'*ones)|zero(x^'\\'*ones) == 0
}

// stringEnd returns the offset after the JSON string at b[i] (a quote),
// or -1 when it is not one.
func stringEnd(b []byte, i int) int {
	i++
	for {
		for i+8 <= len(b) && plain(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		if i >= len(b) {
			return -1
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return -1
				}
				for _, h := range b[i+2 : i+6] {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		default:
			i++
		}
	}
}

// literalEnd returns the offset after lit at b[i], or -1.
func literalEnd(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// numberEnd returns the offset after the JSON number at b[i], or -1.
func numberEnd(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && '0' <= b[j] && b[j] <= '9' {
			j++
		}
		return j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(i)
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}
