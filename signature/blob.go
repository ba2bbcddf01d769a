package signature

import (
	"errors"
	"fmt"
	"os"
)

// SigSuffix is what a file's signature is named by: LOCK.sig beside LOCK.
const SigSuffix = ".sig"

// maxSigFile bounds a signature file: a base64 RSA-8192 signature is under
// 1.5 KiB.
const maxSigFile = 64 << 10

// VerifyFile checks path against its cosign blob signature path+".sig",
// over the file's exact bytes, and returns those bytes so the caller uses
// what was verified and not a second read. A missing signature file is
// ErrNoSignature, one that does not verify ErrInvalid; a file that cannot be
// read is neither.
func VerifyFile(k *PublicKey, path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sigPath := path + SigSuffix
	sigData, err := readLimited(sigPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, missingf("%s is missing: sign with cosign sign-blob --key cosign.key --output-signature %s %s", sigPath, sigPath, path)
	}
	if err != nil {
		return nil, err
	}
	if err := k.Verify(data, DecodeBlobSignature(sigData)); err != nil {
		return nil, fmt.Errorf("%s does not sign %s: %w", sigPath, path, err)
	}
	return data, nil
}

func readLimited(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxSigFile {
		return nil, invalidf("%s is %d bytes, not a cosign signature", path, fi.Size())
	}
	return os.ReadFile(path)
}
