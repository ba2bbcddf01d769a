package in_toto

// ferry: everything but PayloadType removed (upstream github.com/in-toto/in-toto-golang
// v0.11.0 in_toto/envelope.go): rekor's entry types use only the constant; the rest
// (in-toto's own envelope handling) imported go-securesystemslib's signerverifier.

// PayloadType is the payload type used for links and layouts.
const PayloadType = "application/vnd.in-toto+json"
