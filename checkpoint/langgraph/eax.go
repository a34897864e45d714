package langgraph

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"errors"
)

// decryptEAX opens a value written by LangGraph's EncryptedSerializer with
// pycryptodome AES (its default, EAX mode): nonce (16 bytes) + tag (16) +
// ciphertext, no associated data. Go's standard library has no EAX, and it
// is two primitives it does have (CMAC over AES, and CTR), so it is written
// here rather than bringing in a dependency for twenty lines.
func decryptEAX(key, data []byte) ([]byte, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	if len(data) < 32 {
		return nil, errors.New("too short for an AES-EAX value (nonce and tag are 32 bytes)")
	}
	return eaxOpen(block, data[:16], nil, data[32:], data[16:32])
}

// eaxOpen checks tag and decrypts ct (EAX with a full 16-byte tag).
func eaxOpen(block cipher.Block, nonce, header, ct, tag []byte) ([]byte, error) {
	n := omac(block, 0, nonce)
	h := omac(block, 1, header)
	c := omac(block, 2, ct)
	want := make([]byte, 16)
	for i := range want {
		want[i] = n[i] ^ h[i] ^ c[i]
	}
	if subtle.ConstantTimeCompare(want, tag) != 1 {
		return nil, errors.New("the AES key does not open it (wrong key, or the value is damaged)")
	}
	out := make([]byte, len(ct))
	cipher.NewCTR(block, n).XORKeyStream(out, ct)
	return out, nil
}

// omac is EAX's OMAC^t: CMAC of the block [t] followed by msg.
func omac(block cipher.Block, t byte, msg []byte) []byte {
	m := make([]byte, 16, 16+len(msg))
	m[15] = t
	m = append(m, msg...)
	return cmac(block, m)
}

// cmac is AES-CMAC (RFC 4493) of a non-empty message.
func cmac(block cipher.Block, m []byte) []byte {
	k1 := make([]byte, 16)
	block.Encrypt(k1, k1)
	k1 = dbl(k1)
	k2 := dbl(k1)
	last := make([]byte, 16)
	full := len(m)%16 == 0
	start := len(m) - 16
	if !full {
		start = len(m) - len(m)%16
	}
	copy(last, m[start:])
	if full {
		xorInto(last, k1)
	} else {
		last[len(m)-start] = 0x80
		xorInto(last, k2)
	}
	x := make([]byte, 16)
	for i := 0; i < start; i += 16 {
		xorInto(x, m[i:i+16])
		block.Encrypt(x, x)
	}
	xorInto(x, last)
	block.Encrypt(x, x)
	return x
}

func dbl(b []byte) []byte {
	out := make([]byte, 16)
	carry := b[0] >> 7
	for i := 0; i < 15; i++ {
		out[i] = b[i]<<1 | b[i+1]>>7
	}
	out[15] = b[15] << 1
	if carry == 1 {
		out[15] ^= 0x87
	}
	return out
}

func xorInto(dst, src []byte) {
	for i := range dst {
		dst[i] ^= src[i]
	}
}
