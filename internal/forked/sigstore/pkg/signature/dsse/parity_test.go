package dsse_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"

	upssl "github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/sigstore/sigstore/pkg/signature"
	upstream "github.com/sigstore/sigstore/pkg/signature/dsse"

	ssl "github.com/ferryhq/ferry/internal/forked/go-securesystemslib/dsse"
	"github.com/ferryhq/ferry/internal/forked/sigstore/pkg/signature/dsse"
)

const payloadType = "application/vnd.in-toto+json"

// TestAdaptersAsUpstream signs with the real package and the copy
// (Ed25519: deterministic, so the envelopes must be the same bytes) and
// verifies every envelope, good and tampered, with both packages'
// WrapVerifier, WrapMultiVerifier and VerifierAdapter: the same results
// and errors.
func TestAdaptersAsUpstream(t *testing.T) {
	_, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edSV, err := signature.LoadED25519SignerVerifier(edPriv)
	if err != nil {
		t.Fatal(err)
	}
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecSV, err := signature.LoadECDSASignerVerifier(ecPriv, crypto.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)

	want, err := upstream.WrapSigner(edSV, payloadType).SignMessage(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	got, err := dsse.WrapSigner(edSV, payloadType).SignMessage(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("WrapSigner: copy %s, upstream %s", got, want)
	}
	gotMulti, err := dsse.WrapMultiSigner(payloadType, edSV, ecSV).SignMessage(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}
	wantMulti, err := upstream.WrapMultiSigner(payloadType, edSV, ecSV).SignMessage(bytes.NewReader(msg))
	if err != nil {
		t.Fatal(err)
	}

	var env upssl.Envelope
	if err := json.Unmarshal(want, &env); err != nil {
		t.Fatal(err)
	}
	tamperedPayload := env
	tamperedPayload.Payload = "e30="
	tamperedType := env
	tamperedType.PayloadType = "text/plain"
	envelopes := map[string][]byte{"ed25519": want, "multi (copy)": gotMulti, "multi (upstream)": wantMulti, "not JSON": []byte("{")}
	for name, e := range map[string]upssl.Envelope{"tampered payload": tamperedPayload, "tampered type": tamperedType} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		envelopes[name] = b
	}

	for name, e := range envelopes {
		for _, v := range []struct {
			name     string
			got, old signature.Verifier
		}{
			{"ed25519", dsse.WrapVerifier(edSV), upstream.WrapVerifier(edSV)},
			{"ecdsa", dsse.WrapVerifier(ecSV), upstream.WrapVerifier(ecSV)},
			{"multi 1", dsse.WrapMultiVerifier(payloadType, 1, edSV, ecSV), upstream.WrapMultiVerifier(payloadType, 1, edSV, ecSV)},
			{"multi 2", dsse.WrapMultiVerifier(payloadType, 2, edSV, ecSV), upstream.WrapMultiVerifier(payloadType, 2, edSV, ecSV)},
			{"expected type", dsse.WrapVerifier(edSV, dsse.WithExpectedPayloadType("text/plain")), upstream.WrapVerifier(edSV, upstream.WithExpectedPayloadType("text/plain"))},
		} {
			gotErr := v.got.VerifySignature(bytes.NewReader(e), nil)
			wantErr := v.old.VerifySignature(bytes.NewReader(e), nil)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s/%s: copy %v, upstream %v", name, v.name, gotErr, wantErr)
			}
		}
		if name == "not JSON" {
			continue
		}
		var upEnv upssl.Envelope
		if err := json.Unmarshal(e, &upEnv); err != nil {
			t.Fatal(err)
		}
		var cpEnv ssl.Envelope
		if err := json.Unmarshal(e, &cpEnv); err != nil {
			t.Fatal(err)
		}
		for _, sv := range []signature.SignerVerifier{edSV, ecSV} {
			pub, err := sv.PublicKey()
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range []struct {
				name string
				pub  crypto.PublicKey
				id   string
			}{{"no Pub", nil, ""}, {"Pub", pub, ""}, {"PubKeyID", pub, "key"}} {
				upEV, err := upssl.NewEnvelopeVerifier(&upstream.VerifierAdapter{SignatureVerifier: sv, Pub: a.pub, PubKeyID: a.id})
				if err != nil {
					t.Fatal(err)
				}
				cpEV, err := ssl.NewEnvelopeVerifier(&dsse.VerifierAdapter{SignatureVerifier: sv, Pub: a.pub, PubKeyID: a.id})
				if err != nil {
					t.Fatal(err)
				}
				upKeys, upErr := upEV.Verify(context.Background(), &upEnv)
				cpKeys, cpErr := cpEV.Verify(context.Background(), &cpEnv)
				gotS, wantS := fmt.Sprint(len(cpKeys), cpErr), fmt.Sprint(len(upKeys), upErr)
				for i := range cpKeys {
					gotS += " " + cpKeys[i].KeyID + " " + cpKeys[i].Sig.Sig
					wantS += " " + upKeys[i].KeyID + " " + upKeys[i].Sig.Sig
				}
				if gotS != wantS {
					t.Errorf("%s/VerifierAdapter %s: copy %s, upstream %s", name, a.name, gotS, wantS)
				}
			}
		}
	}
}
