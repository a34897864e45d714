package crypt_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/weftstudio/weft/checkpoint/crypt"
)

func mustCipher(t *testing.T, key []byte) *crypt.Cipher {
	t.Helper()
	c, err := crypt.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewKeyLengths(t *testing.T) {
	for _, n := range []int{16, 24, 32} {
		if c := mustCipher(t, make([]byte, n)); !c.Enabled() {
			t.Errorf("%d-byte key: cipher not enabled", n)
		}
	}
	for _, n := range []int{1, 15, 17, 31, 33, 64} {
		if _, err := crypt.New(make([]byte, n)); !errors.Is(err, crypt.ErrBadKey) {
			t.Errorf("%d-byte key: err = %v, want ErrBadKey", n, err)
		}
	}
	c, err := crypt.New(nil)
	if c != nil || err != nil || c.Enabled() {
		t.Errorf("New(nil) = %v, %v; want a nil, disabled cipher", c, err)
	}
}

func TestSealOpen(t *testing.T) {
	c := mustCipher(t, bytes.Repeat([]byte{7}, 32))
	for _, plain := range [][]byte{[]byte("hello"), {}, bytes.Repeat([]byte{0, 255}, 5000)} {
		sealed := c.Seal(plain)
		if bytes.Contains(sealed, plain) && len(plain) > 0 {
			t.Fatalf("sealed value contains the plaintext")
		}
		if len(sealed) != len(plain)+29 {
			t.Errorf("sealed %d bytes to %d, want +29", len(plain), len(sealed))
		}
		got, err := c.Open(sealed)
		if err != nil || !bytes.Equal(got, plain) || got == nil {
			t.Fatalf("Open(Seal(%d bytes)) = %d bytes, %v", len(plain), len(got), err)
		}
		if again := c.Seal(plain); bytes.Equal(again, sealed) {
			t.Error("two seals of one value are equal: nonces repeat")
		}
	}
	if c.Seal(nil) != nil {
		t.Error("Seal(nil) is not nil")
	}
	if got, err := c.Open(nil); got != nil || err != nil {
		t.Errorf("Open(nil) = %v, %v", got, err)
	}
}

func TestOpenRejectsTamperingAndOtherKeys(t *testing.T) {
	c := mustCipher(t, bytes.Repeat([]byte{1}, 16))
	other := mustCipher(t, bytes.Repeat([]byte{2}, 16))
	sealed := c.Seal([]byte("value"))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, v := range map[string][]byte{
		"other key":      other.Seal([]byte("value")),
		"flipped bit":    flipped,
		"truncated":      sealed[:10],
		"plaintext":      []byte("just some plaintext bytes, long enough"),
		"unknown format": append([]byte{9}, sealed[1:]...),
	} {
		if got, err := c.Open(v); !errors.Is(err, crypt.ErrWrongKey) || got != nil {
			t.Errorf("%s: Open = %q, %v; want ErrWrongKey", name, got, err)
		}
	}
}

func TestNilCipherPassesThrough(t *testing.T) {
	var c *crypt.Cipher
	v := []byte("x")
	if got := c.Seal(v); &got[0] != &v[0] {
		t.Error("nil cipher Seal copied or changed the value")
	}
	if got, err := c.Open(v); err != nil || &got[0] != &v[0] {
		t.Error("nil cipher Open copied or changed the value")
	}
}

func TestKeyCheck(t *testing.T) {
	a := mustCipher(t, bytes.Repeat([]byte{1}, 32))
	b := mustCipher(t, bytes.Repeat([]byte{2}, 32))
	check := a.KeyCheck()
	if err := a.VerifyKeyCheck(check); err != nil {
		t.Errorf("same key: %v", err)
	}
	if err := b.VerifyKeyCheck(check); !errors.Is(err, crypt.ErrWrongKey) {
		t.Errorf("other key: %v, want ErrWrongKey", err)
	}
	var none *crypt.Cipher
	if err := none.VerifyKeyCheck(check); !errors.Is(err, crypt.ErrKeyRequired) {
		t.Errorf("no key: %v, want ErrKeyRequired", err)
	}
	if err := none.VerifyKeyCheck(nil); err != nil {
		t.Errorf("no key, no check: %v", err)
	}
	if none.KeyCheck() != nil {
		t.Error("nil cipher made a key check")
	}
	if err := a.VerifyKeyCheck(a.Seal([]byte("some other text"))); !errors.Is(err, crypt.ErrWrongKey) {
		t.Errorf("check of another text: %v, want ErrWrongKey", err)
	}
}

func TestParseKey(t *testing.T) {
	k16, k32 := bytes.Repeat([]byte{0xab}, 16), bytes.Repeat([]byte{0x5c}, 32)
	for _, tc := range []struct {
		name, in string
		want     []byte
	}{
		{"hex_16", hex.EncodeToString(k16), k16},
		{"hex_32_upper", strings.ToUpper(hex.EncodeToString(k32)), k32},
		{"base64_32", base64.StdEncoding.EncodeToString(k32), k32},
		{"base64_raw_16", base64.RawStdEncoding.EncodeToString(k16), k16},
		{"base64_url", base64.URLEncoding.EncodeToString(k32), k32},
		{"surrounding_space", "  " + hex.EncodeToString(k16) + "\n", k16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := crypt.ParseKey(tc.in)
			if err != nil || !bytes.Equal(got, tc.want) {
				t.Fatalf("ParseKey(%q) = %x, %v; want %x", tc.in, got, err, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "   ", "not a key!", hex.EncodeToString(make([]byte, 8)), base64.StdEncoding.EncodeToString(make([]byte, 20))} {
		if _, err := crypt.ParseKey(bad); !errors.Is(err, crypt.ErrBadKey) {
			t.Errorf("ParseKey(%q) = %v, want ErrBadKey", bad, err)
		}
	}
}

func TestKeyFromEnv(t *testing.T) {
	t.Setenv(crypt.EnvVar, "")
	if k, err := crypt.KeyFromEnv(); k != nil || err != nil {
		t.Errorf("unset: %x, %v; want nil, nil", k, err)
	}
	key := bytes.Repeat([]byte{3}, 24)
	t.Setenv(crypt.EnvVar, base64.StdEncoding.EncodeToString(key))
	if k, err := crypt.KeyFromEnv(); err != nil || !bytes.Equal(k, key) {
		t.Errorf("base64: %x, %v", k, err)
	}
	t.Setenv(crypt.EnvVar, "too-short")
	_, err := crypt.KeyFromEnv()
	if !errors.Is(err, crypt.ErrBadKey) || !strings.Contains(err.Error(), crypt.EnvVar) {
		t.Errorf("bad value: %v; want ErrBadKey naming %s", err, crypt.EnvVar)
	}
}
