package models_test

// The fork declares each enum of rekor's generated models as a static
// []any literal where upstream fills it by json.Unmarshal in an init (ferry's
// patch, UPSTREAM.md). These tests validate the same JSON with the fork's
// and the real module's models and require the same verdict and error text,
// for every value of each enum and for values outside it.

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/go-openapi/strfmt"
	real "github.com/sigstore/rekor/pkg/generated/models"

	fork "github.com/ferryhq/ferry/internal/forked/rekor/pkg/generated/models"
)

type validatable interface {
	Validate(strfmt.Registry) error
}

func TestParityEnums(t *testing.T) {
	hash := []string{"sha256", "sha384", "sha512", "sha1", "SHA256", "md5", ""}
	formats := []string{"pgp", "minisign", "x509", "ssh", "tuf", "PGP", "cms", ""}
	operators := []string{"and", "or", "AND", "xor", ""}
	types := []struct {
		name       string
		fork, real func() validatable
		field      string
		values     []string
		extra      string // other required fields, JSON
	}{
		{"AlpineV001SchemaPackageHash", func() validatable { return new(fork.AlpineV001SchemaPackageHash) }, func() validatable { return new(real.AlpineV001SchemaPackageHash) }, "algorithm", hash, `"value":"ab"`},
		{"CoseV001SchemaDataEnvelopeHash", func() validatable { return new(fork.CoseV001SchemaDataEnvelopeHash) }, func() validatable { return new(real.CoseV001SchemaDataEnvelopeHash) }, "algorithm", hash, `"value":"ab"`},
		{"CoseV001SchemaDataPayloadHash", func() validatable { return new(fork.CoseV001SchemaDataPayloadHash) }, func() validatable { return new(real.CoseV001SchemaDataPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"DSSEV001SchemaEnvelopeHash", func() validatable { return new(fork.DSSEV001SchemaEnvelopeHash) }, func() validatable { return new(real.DSSEV001SchemaEnvelopeHash) }, "algorithm", hash, `"value":"ab"`},
		{"DSSEV001SchemaPayloadHash", func() validatable { return new(fork.DSSEV001SchemaPayloadHash) }, func() validatable { return new(real.DSSEV001SchemaPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"HashedrekordV001SchemaDataHash", func() validatable { return new(fork.HashedrekordV001SchemaDataHash) }, func() validatable { return new(real.HashedrekordV001SchemaDataHash) }, "algorithm", hash, `"value":"ab"`},
		{"HelmV001SchemaChartHash", func() validatable { return new(fork.HelmV001SchemaChartHash) }, func() validatable { return new(real.HelmV001SchemaChartHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV001SchemaContentHash", func() validatable { return new(fork.IntotoV001SchemaContentHash) }, func() validatable { return new(real.IntotoV001SchemaContentHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV001SchemaContentPayloadHash", func() validatable { return new(fork.IntotoV001SchemaContentPayloadHash) }, func() validatable { return new(real.IntotoV001SchemaContentPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV002SchemaContentHash", func() validatable { return new(fork.IntotoV002SchemaContentHash) }, func() validatable { return new(real.IntotoV002SchemaContentHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV002SchemaContentPayloadHash", func() validatable { return new(fork.IntotoV002SchemaContentPayloadHash) }, func() validatable { return new(real.IntotoV002SchemaContentPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"JarV001SchemaArchiveHash", func() validatable { return new(fork.JarV001SchemaArchiveHash) }, func() validatable { return new(real.JarV001SchemaArchiveHash) }, "algorithm", hash, `"value":"ab"`},
		{"RekordV001SchemaDataHash", func() validatable { return new(fork.RekordV001SchemaDataHash) }, func() validatable { return new(real.RekordV001SchemaDataHash) }, "algorithm", hash, `"value":"ab"`},
		{"RpmV001SchemaPackageHash", func() validatable { return new(fork.RpmV001SchemaPackageHash) }, func() validatable { return new(real.RpmV001SchemaPackageHash) }, "algorithm", hash, `"value":"ab"`},
		{"RekordV001SchemaSignature", func() validatable { return new(fork.RekordV001SchemaSignature) }, func() validatable { return new(real.RekordV001SchemaSignature) }, "format", formats, `"content":"YWI=","publicKey":{"content":"YWI="}`},
		{"SearchIndexPublicKey", func() validatable { return new(fork.SearchIndexPublicKey) }, func() validatable { return new(real.SearchIndexPublicKey) }, "format", formats, `"content":"YWI="`},
		{"SearchIndex", func() validatable { return new(fork.SearchIndex) }, func() validatable { return new(real.SearchIndex) }, "operator", operators, `"email":"a@example.com"`},
	}
	for _, tt := range types {
		for _, v := range tt.values {
			t.Run(tt.name+"/"+v, func(t *testing.T) {
				doc := []byte(fmt.Sprintf(`{%q:%q,%s}`, tt.field, v, tt.extra))
				f, r := tt.fork(), tt.real()
				if err := json.Unmarshal(doc, f); err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(doc, r); err != nil {
					t.Fatal(err)
				}
				got, want := fmt.Sprint(f.Validate(strfmt.Default)), fmt.Sprint(r.Validate(strfmt.Default))
				if got != want {
					t.Errorf("%s: fork %q, upstream %q", doc, got, want)
				}
				if (v == "md5" || v == "cms" || v == "xor") && want == "<nil>" {
					t.Errorf("%s: upstream accepts a value outside the enum: the case checks nothing", doc)
				}
			})
		}
	}
}
