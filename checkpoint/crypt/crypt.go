// Package crypt encrypts checkpoint values at rest with AES-GCM.
//
// Both checkpoint savers use it: every stored channel value and every pending
// write value is sealed with a fresh random nonce; metadata and the checkpoint
// header (versions, ids, timestamps) stay in the clear so a store can be
// listed and filtered without the key.
//
// A sealed value is one format byte (1), the 12-byte nonce, then the
// ciphertext with its 16-byte tag: 29 bytes more than the plaintext.
//
// A store records a key check (Cipher.KeyCheck, an encryption of a known
// text) so that opening it with the wrong key fails at once with ErrWrongKey
// and opening an encrypted store with no key fails with ErrKeyRequired,
// instead of returning garbage later.
package crypt

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// EnvVar is the environment variable KeyFromEnv reads.
const EnvVar = "WEFT_ENCRYPTION_KEY"

// Errors of this package. Compare with errors.Is.
var (
	// ErrWrongKey means a store was opened with a key other than the one it
	// was encrypted with, or a sealed value failed authentication.
	ErrWrongKey = errors.New("wrong encryption key")
	// ErrKeyRequired means an encrypted store was opened without a key.
	ErrKeyRequired = errors.New("store is encrypted and no encryption key was given")
	// ErrBadKey means a key has the wrong length or an unreadable encoding.
	ErrBadKey = errors.New("invalid encryption key")
)

const (
	formatV1  = 1
	nonceSize = 12
	overhead  = 1 + nonceSize + 16
)

// additional data bound to every sealed value, so values sealed for another
// purpose with the same key do not authenticate here.
var adValue = []byte("weft/checkpoint/value/v1")

// keyCheckText is what KeyCheck seals.
var keyCheckText = []byte("weft encryption key check v1")

// Cipher seals and opens values with one AES-GCM key. A nil *Cipher means
// "no encryption": Seal and Open return their input unchanged. A Cipher is
// safe for concurrent use.
type Cipher struct {
	aead cipher.AEAD
}

// New returns a Cipher for key, which must be 16, 24 or 32 bytes (AES-128,
// AES-192 or AES-256). A nil or empty key returns a nil Cipher and no error:
// no encryption.
func New(key []byte) (*Cipher, error) {
	if len(key) == 0 {
		return nil, nil
	}
	switch len(key) {
	case 16, 24, 32:
	default:
		return nil, fmt.Errorf("%w: %d bytes, want 16, 24 or 32", ErrBadKey, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKey, err)
	}
	return &Cipher{aead: aead}, nil
}

// Enabled reports whether c encrypts (c is not nil).
func (c *Cipher) Enabled() bool { return c != nil }

// Seal returns plain encrypted with a fresh random nonce. A nil plain (no
// value) stays nil; an empty non-nil plain is encrypted like any other value.
// With a nil Cipher it returns plain itself.
func (c *Cipher) Seal(plain []byte) []byte {
	if c == nil || plain == nil {
		return plain
	}
	out := make([]byte, 1+nonceSize, len(plain)+overhead)
	out[0] = formatV1
	if _, err := rand.Read(out[1 : 1+nonceSize]); err != nil {
		// crypto/rand.Read never fails on supported platforms (it crashes
		// the program instead); keep the check for clarity.
		panic("crypt: reading random nonce: " + err.Error())
	}
	return c.aead.Seal(out, out[1:1+nonceSize], plain, adValue)
}

// Open returns the plaintext of a value made by Seal. A nil sealed value
// returns nil. A value that does not authenticate returns an error wrapping
// ErrWrongKey. With a nil Cipher it returns sealed itself.
func (c *Cipher) Open(sealed []byte) ([]byte, error) {
	if c == nil || sealed == nil {
		return sealed, nil
	}
	if len(sealed) < overhead || sealed[0] != formatV1 {
		return nil, fmt.Errorf("%w: value of %d bytes is not an encrypted value", ErrWrongKey, len(sealed))
	}
	plain, err := c.aead.Open(make([]byte, 0, len(sealed)-overhead), sealed[1:1+nonceSize], sealed[1+nonceSize:], adValue)
	if err != nil {
		return nil, fmt.Errorf("%w: value does not authenticate", ErrWrongKey)
	}
	return plain, nil
}

// KeyCheck returns a sealed known text for a store to keep beside its data;
// VerifyKeyCheck tells later whether a key is the one that made it. A nil
// Cipher returns nil.
func (c *Cipher) KeyCheck() []byte {
	if c == nil {
		return nil
	}
	return c.Seal(keyCheckText)
}

// VerifyKeyCheck returns nil if check was made by KeyCheck with c's key,
// ErrWrongKey if it was made with another key, and ErrKeyRequired if c is nil
// and check is not (the store is encrypted but no key was given).
func (c *Cipher) VerifyKeyCheck(check []byte) error {
	if c == nil {
		if check == nil {
			return nil
		}
		return ErrKeyRequired
	}
	plain, err := c.Open(check)
	if err != nil || !bytes.Equal(plain, keyCheckText) {
		return ErrWrongKey
	}
	return nil
}

// ParseKey decodes a textual key: hexadecimal if s is exactly 32, 48 or 64
// hex digits, otherwise standard or URL-safe base64 (padding optional).
// Surrounding white space is ignored. The decoded key must be 16, 24 or 32
// bytes; an empty s is an error.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty", ErrBadKey)
	}
	if n := len(s); n == 32 || n == 48 || n == 64 {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	var key []byte
	var err error
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err = enc.DecodeString(s); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: neither 32/48/64 hex digits nor base64", ErrBadKey)
	}
	switch len(key) {
	case 16, 24, 32:
		return key, nil
	}
	return nil, fmt.Errorf("%w: decodes to %d bytes, want 16, 24 or 32", ErrBadKey, len(key))
}

// KeyFromEnv returns the key in the environment variable WEFT_ENCRYPTION_KEY
// (see ParseKey for the accepted encodings: hex or base64). It returns nil and
// no error when the variable is unset or empty, meaning "no encryption", and
// an error naming the variable when its value is not a valid key.
func KeyFromEnv() ([]byte, error) {
	v := os.Getenv(EnvVar)
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	key, err := ParseKey(v)
	if err != nil {
		return nil, fmt.Errorf("environment variable %s: %w", EnvVar, err)
	}
	return key, nil
}
