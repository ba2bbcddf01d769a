package dsse

// ferry: this file is not upstream's. It is the part of
// golang.org/x/crypto/ssh (v0.58.0: keys.go NewPublicKey, the key types'
// Marshal methods and FingerprintSHA256; messages.go Marshal's string and
// mpint encodings) that SHA256KeyID called, so that the dsse package no
// longer imports x/crypto/ssh. parity_test.go holds it to the real ssh
// package.

import (
	"crypto"
	"crypto/dsa" //nolint:staticcheck // x/crypto/ssh's NewPublicKey accepts *dsa.PublicKey
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
)

// sshFingerprintSHA256 is ssh.FingerprintSHA256(ssh.NewPublicKey(pub)):
// "SHA256:" and the unpadded base64 of the SHA-256 of the key's SSH wire
// encoding, with NewPublicKey's errors for the keys it refuses.
func sshFingerprintSHA256(pub crypto.PublicKey) (string, error) {
	var wire []byte
	switch key := pub.(type) {
	case *rsa.PublicKey:
		// keys.go rsaPublicKey.Marshal: name, e, n.
		wire = sshString(wire, []byte("ssh-rsa"))
		wire = sshMPInt(wire, new(big.Int).SetInt64(int64(key.E)))
		wire = sshMPInt(wire, key.N)
	case *ecdsa.PublicKey:
		// keys.go NewPublicKey and supportedEllipticCurve.
		var id string
		switch key.Curve {
		case elliptic.P256():
			id = "nistp256"
		case elliptic.P384():
			id = "nistp384"
		case elliptic.P521():
			id = "nistp521"
		default:
			return "", errors.New("ssh: only P-256, P-384 and P-521 EC keys are supported")
		}
		// keys.go ecdsaPublicKey.Marshal: type, curve ID, point (RFC 5656,
		// section 3.1), the point as elliptic.Marshal writes it.
		wire = sshString(wire, []byte("ecdsa-sha2-"+id))
		wire = sshString(wire, []byte(id))
		wire = sshString(wire, elliptic.Marshal(key.Curve, key.X, key.Y)) //nolint:staticcheck // as x/crypto/ssh
	case *dsa.PublicKey:
		// keys.go dsaPublicKey.Marshal: name, p, q, g, y.
		wire = sshString(wire, []byte("ssh-dss"))
		for _, n := range []*big.Int{key.P, key.Q, key.G, key.Y} {
			wire = sshMPInt(wire, n)
		}
	case ed25519.PublicKey:
		if l := len(key); l != ed25519.PublicKeySize {
			return "", fmt.Errorf("ssh: invalid size %d for Ed25519 public key", l)
		}
		// keys.go ed25519PublicKey.Marshal: name, key bytes.
		wire = sshString(wire, []byte("ssh-ed25519"))
		wire = sshString(wire, key)
	default:
		// keys.go NewPublicKey's default case. On Go 1.27 and later
		// x/crypto/ssh also accepts *mldsa.PublicKey (mldsa.go, built
		// with go1.27 only); ferry builds with Go 1.26, where it does not.
		return "", fmt.Errorf("ssh: unsupported key type %T", pub)
	}
	sum := sha256.Sum256(wire)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:]), nil
}

// sshString appends s as an SSH string (RFC 4251, section 5): a 32-bit
// big-endian length, then the bytes.
func sshString(out, s []byte) []byte {
	n := len(s)
	out = append(out, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	return append(out, s...)
}

// sshMPInt appends n as an SSH mpint (RFC 4251, section 5; messages.go
// marshalInt): two's complement, big-endian, with a leading 0x00 (or
// 0xff) where the top bit would give the wrong sign; zero is empty.
func sshMPInt(out []byte, n *big.Int) []byte {
	var b []byte
	switch n.Sign() {
	case -1:
		m := new(big.Int).Neg(n)
		m.Sub(m, big.NewInt(1))
		b = m.Bytes()
		for i := range b {
			b[i] ^= 0xff
		}
		if len(b) == 0 || b[0]&0x80 == 0 {
			b = append([]byte{0xff}, b...)
		}
	case 1:
		b = n.Bytes()
		if b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
	}
	return sshString(out, b)
}
