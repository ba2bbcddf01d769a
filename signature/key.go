// Package signature verifies cosign and Sigstore signatures through
// Sigstore's own Go libraries (github.com/sigstore/sigstore pkg/signature
// for key verifiers, github.com/sigstore/sigstore-go for bundles, trusted
// roots and certificate identities, linked as ferry's pruned copy
// internal/forked/sigstore-go, held to the real module by its parity
// tests): blob signatures as `cosign sign-blob`
// writes them (a lock's LOCK.sig); container image signatures as `cosign
// sign` stores them beside an image, in a manifest tagged sha256-HEX.sig
// (cosign v2's default); and Sigstore bundles attached to the image as OCI
// referrers (cosign v3's default), or under the referrers tag fallback
// sha256-HEX. Key-pair signatures and keyless ones (a Fulcio certificate
// with a transparency-log proof, checked offline against a trusted root and
// an identity policy) are both verified; see Verifier.
//
// Keys are cosign's public keys (cosign.pub): PEM "PUBLIC KEY" (PKIX), or
// "RSA PUBLIC KEY" (PKCS #1), as sigstore's cryptoutils reads them. A
// signature verifies as one of sigstore's verifiers for the key accepts it:
// ECDSA over the message's SHA-256 (P-384 and P-521 keys also over SHA-384
// and SHA-512, which newer cosign picks for them), RSA PKCS #1 v1.5 or PSS
// over SHA-256, and Ed25519 or, as cosign signs when it uploads to a
// transparency log, Ed25519ph.
package signature

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/internal/lazyregexp"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
)

// Errors a check reports: the signature and what it should sign disagree.
// Anything else (a registry that cannot be reached, an unreadable file) is
// a failure to check, not a disagreement. Use IsMismatch to tell them
// apart.
var (
	// ErrNoSignature: there is no signature where cosign puts it.
	ErrNoSignature = errors.New("no signature")
	// ErrInvalid: a signature is there but does not verify, is malformed,
	// or signs something else.
	ErrInvalid = errors.New("signature does not verify")
)

// IsMismatch reports whether err says a signature is missing or invalid,
// as opposed to a failure to look.
func IsMismatch(err error) bool {
	return errors.Is(err, ErrNoSignature) || errors.Is(err, ErrInvalid)
}

// mismatch is an error that is one of the sentinel kinds while saying
// what happened in its own words.
type mismatch struct {
	kind error
	msg  string
}

func (e *mismatch) Error() string        { return e.msg }
func (e *mismatch) Is(target error) bool { return target == e.kind }

func invalidf(format string, args ...any) error {
	return &mismatch{kind: ErrInvalid, msg: fmt.Sprintf(format, args...)}
}

func missingf(format string, args ...any) error {
	return &mismatch{kind: ErrNoSignature, msg: fmt.Sprintf(format, args...)}
}

// PublicKey is a cosign verification key.
type PublicKey struct {
	key crypto.PublicKey
	// verifiers are sigstore's verifiers for the key, one per signature
	// scheme cosign may have signed with; a signature any of them accepts
	// verifies.
	verifiers []sigsig.Verifier
	// Source names where the key came from, for messages.
	Source string
}

// kmsRef matches the key references cosign resolves through a KMS
// (sigstore pkg/signature/kms: awskms://, gcpkms://, azurekms://,
// hashivault://) or a hardware token (pkcs11:), and k8s:// secrets.
var kmsRef = lazyregexp.New(`^(awskms|gcpkms|azurekms|hashivault|k8s)://|^pkcs11:`)

// LoadPublicKey reads a cosign public key file (cosign.pub). A missing,
// unreadable or malformed file is bad input (exit code 2), and so is a KMS
// key reference: reading its public key needs the KMS, which an offline
// check cannot reach; export it once with `cosign public-key --key REF`.
func LoadPublicKey(path string) (*PublicKey, error) {
	if kmsRef.MatchString(path) {
		return nil, errkind.Markf(errkind.BadInput, "%s is a KMS key reference: ferry verifies offline; export the public key with `cosign public-key --key %s > cosign.pub` and pass the file", path, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "reading public key: %w", err)
	}
	k, err := ParsePublicKey(data)
	if err != nil {
		return nil, errkind.Markf(errkind.BadInput, "%s: %w", path, err)
	}
	k.Source = path
	return k, nil
}

// ParsePublicKey parses a PEM public key as cosign does: the first PEM
// block, of type "PUBLIC KEY" (PKIX) or "RSA PUBLIC KEY" (PKCS #1), holding
// an ECDSA, RSA or Ed25519 key.
func ParsePublicKey(pemBytes []byte) (*PublicKey, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("not a PEM public key (want cosign.pub, -----BEGIN PUBLIC KEY-----)")
	}
	var (
		pub crypto.PublicKey
		err error
	)
	switch {
	case block.Type == "PUBLIC KEY":
		pub, err = x509.ParsePKIXPublicKey(block.Bytes)
	case block.Type == "RSA PUBLIC KEY":
		pub, err = x509.ParsePKCS1PublicKey(block.Bytes)
	case strings.Contains(block.Type, "PRIVATE KEY"):
		return nil, fmt.Errorf("is a private key (%s): ferry verifies only; pass the public key, cosign.pub", block.Type)
	default:
		return nil, fmt.Errorf("unknown public key PEM type %q: pass the public key, cosign.pub", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing public key: %w", err)
	}
	return NewPublicKey(pub)
}

// NewPublicKey wraps an ECDSA, RSA or Ed25519 public key.
func NewPublicKey(pub crypto.PublicKey) (*PublicKey, error) {
	vs, err := verifiersFor(pub)
	if err != nil {
		return nil, err
	}
	return &PublicKey{key: pub, verifiers: vs}, nil
}

// verifiersFor returns sigstore's verifiers for every scheme cosign signs
// with a key of pub's kind (sigstore pkg/signature LoadDefaultVerifier
// picks the first; cosign v2 signs ECDSA keys with SHA-256 whatever the
// curve, cosign v3 with the curve's own hash).
func verifiersFor(pub crypto.PublicKey) ([]sigsig.Verifier, error) {
	var (
		vs   []sigsig.Verifier
		errs []error
	)
	add := func(v sigsig.Verifier, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		vs = append(vs, v)
	}
	switch pub := pub.(type) {
	case *ecdsa.PublicKey:
		for _, h := range ecdsaHashes(pub.Curve) {
			add(sigsig.LoadECDSAVerifier(pub, h))
		}
	case *rsa.PublicKey:
		add(sigsig.LoadRSAPKCS1v15Verifier(pub, crypto.SHA256))
		add(sigsig.LoadRSAPSSVerifier(pub, crypto.SHA256, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthAuto}))
	case ed25519.PublicKey:
		add(sigsig.LoadED25519Verifier(pub))
		add(sigsig.LoadED25519phVerifier(pub))
	default:
		return nil, fmt.Errorf("unsupported public key type %T: cosign keys are ECDSA, RSA or Ed25519", pub)
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("loading the key: %w", errors.Join(errs...))
	}
	return vs, nil
}

// Fingerprint is the hex SHA-256 of the key's PKIX DER encoding, which is
// also how Sigstore bundles name a key (the public key hint).
func (k *PublicKey) Fingerprint() string {
	der, err := x509.MarshalPKIXPublicKey(k.key)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// CryptoPublicKey returns the key itself.
func (k *PublicKey) CryptoPublicKey() crypto.PublicKey { return k.key }

// SigstoreVerifier returns the key as one sigstore signature.Verifier that
// accepts a signature any of the key's schemes verifies; sigstore-go uses it
// to check bundles signed with the key.
func (k *PublicKey) SigstoreVerifier() sigsig.Verifier { return anyVerifier{k} }

// anyVerifier is a sigstore signature.Verifier over all of a key's schemes.
type anyVerifier struct{ k *PublicKey }

func (a anyVerifier) PublicKey(...sigsig.PublicKeyOption) (crypto.PublicKey, error) {
	return a.k.key, nil
}

func (a anyVerifier) VerifySignature(sig, message io.Reader, opts ...sigsig.VerifyOption) error {
	s, err := io.ReadAll(sig)
	if err != nil {
		return err
	}
	var m []byte
	if message != nil {
		if m, err = io.ReadAll(message); err != nil {
			return err
		}
	}
	var errs []error
	for _, v := range a.k.verifiers {
		var mr io.Reader
		if message != nil {
			mr = bytes.NewReader(m)
		}
		err := v.VerifySignature(bytes.NewReader(s), mr, opts...)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Algorithm describes the key, for messages: "ECDSA P-256", "RSA 3072",
// "Ed25519".
func (k *PublicKey) Algorithm() string {
	switch pub := k.key.(type) {
	case *ecdsa.PublicKey:
		return "ECDSA " + pub.Curve.Params().Name
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", pub.N.BitLen())
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", k.key)
}

// Verify checks the raw signature sig over message with sigstore's
// verifiers for the key. A signature that does not verify is ErrInvalid.
func (k *PublicKey) Verify(message, sig []byte) error {
	if len(sig) == 0 {
		return invalidf("the signature is empty")
	}
	for _, v := range k.verifiers {
		if v.VerifySignature(bytes.NewReader(sig), bytes.NewReader(message)) == nil {
			return nil
		}
	}
	return invalidf("signature does not verify with the %s key %s", k.Algorithm(), k.name())
}

func (k *PublicKey) name() string {
	if k.Source == "" {
		return "given"
	}
	return k.Source
}

// ecdsaHashes are the digests an ECDSA signature is accepted over: cosign's
// default SHA-256 for every curve, and the curve's own size, which newer
// cosign signs P-384 and P-521 keys with.
func ecdsaHashes(c elliptic.Curve) []crypto.Hash {
	switch c.Params().BitSize {
	case 384:
		return []crypto.Hash{crypto.SHA256, crypto.SHA384}
	case 521:
		return []crypto.Hash{crypto.SHA256, crypto.SHA512}
	}
	return []crypto.Hash{crypto.SHA256}
}

// DecodeBlobSignature reads the content of a signature file as `cosign
// verify-blob --signature` does: base64 (as `cosign sign-blob` writes it,
// with or without the newline its standard output adds), else the raw
// signature bytes (`--b64=false`).
func DecodeBlobSignature(data []byte) []byte {
	// The standard decoder skips \r and \n.
	if raw, err := base64.StdEncoding.DecodeString(string(data)); err == nil {
		return raw
	}
	return data
}
