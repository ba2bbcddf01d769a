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

	forkstrfmt "github.com/ferryhq/ferry/internal/forked/strfmt"
	real "github.com/sigstore/rekor/pkg/generated/models"

	fork "github.com/ferryhq/ferry/internal/forked/rekor/pkg/generated/models"
)

// forkValidatable and realValidatable are a model of the copy and of
// rekor, each validated against its own strfmt registry.
type forkValidatable interface {
	Validate(forkstrfmt.Registry) error
}

type realValidatable interface {
	Validate(strfmt.Registry) error
}

func TestParityEnums(t *testing.T) {
	hash := []string{"sha256", "sha384", "sha512", "sha1", "SHA256", "md5", ""}
	formats := []string{"pgp", "minisign", "x509", "ssh", "tuf", "PGP", "cms", ""}
	operators := []string{"and", "or", "AND", "xor", ""}
	types := []struct {
		name   string
		fork   func() forkValidatable
		real   func() realValidatable
		field  string
		values []string
		extra  string // other required fields, JSON
	}{
		{"AlpineV001SchemaPackageHash", func() forkValidatable { return new(fork.AlpineV001SchemaPackageHash) }, func() realValidatable { return new(real.AlpineV001SchemaPackageHash) }, "algorithm", hash, `"value":"ab"`},
		{"CoseV001SchemaDataEnvelopeHash", func() forkValidatable { return new(fork.CoseV001SchemaDataEnvelopeHash) }, func() realValidatable { return new(real.CoseV001SchemaDataEnvelopeHash) }, "algorithm", hash, `"value":"ab"`},
		{"CoseV001SchemaDataPayloadHash", func() forkValidatable { return new(fork.CoseV001SchemaDataPayloadHash) }, func() realValidatable { return new(real.CoseV001SchemaDataPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"DSSEV001SchemaEnvelopeHash", func() forkValidatable { return new(fork.DSSEV001SchemaEnvelopeHash) }, func() realValidatable { return new(real.DSSEV001SchemaEnvelopeHash) }, "algorithm", hash, `"value":"ab"`},
		{"DSSEV001SchemaPayloadHash", func() forkValidatable { return new(fork.DSSEV001SchemaPayloadHash) }, func() realValidatable { return new(real.DSSEV001SchemaPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"HashedrekordV001SchemaDataHash", func() forkValidatable { return new(fork.HashedrekordV001SchemaDataHash) }, func() realValidatable { return new(real.HashedrekordV001SchemaDataHash) }, "algorithm", hash, `"value":"ab"`},
		{"HelmV001SchemaChartHash", func() forkValidatable { return new(fork.HelmV001SchemaChartHash) }, func() realValidatable { return new(real.HelmV001SchemaChartHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV001SchemaContentHash", func() forkValidatable { return new(fork.IntotoV001SchemaContentHash) }, func() realValidatable { return new(real.IntotoV001SchemaContentHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV001SchemaContentPayloadHash", func() forkValidatable { return new(fork.IntotoV001SchemaContentPayloadHash) }, func() realValidatable { return new(real.IntotoV001SchemaContentPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV002SchemaContentHash", func() forkValidatable { return new(fork.IntotoV002SchemaContentHash) }, func() realValidatable { return new(real.IntotoV002SchemaContentHash) }, "algorithm", hash, `"value":"ab"`},
		{"IntotoV002SchemaContentPayloadHash", func() forkValidatable { return new(fork.IntotoV002SchemaContentPayloadHash) }, func() realValidatable { return new(real.IntotoV002SchemaContentPayloadHash) }, "algorithm", hash, `"value":"ab"`},
		{"JarV001SchemaArchiveHash", func() forkValidatable { return new(fork.JarV001SchemaArchiveHash) }, func() realValidatable { return new(real.JarV001SchemaArchiveHash) }, "algorithm", hash, `"value":"ab"`},
		{"RekordV001SchemaDataHash", func() forkValidatable { return new(fork.RekordV001SchemaDataHash) }, func() realValidatable { return new(real.RekordV001SchemaDataHash) }, "algorithm", hash, `"value":"ab"`},
		{"RpmV001SchemaPackageHash", func() forkValidatable { return new(fork.RpmV001SchemaPackageHash) }, func() realValidatable { return new(real.RpmV001SchemaPackageHash) }, "algorithm", hash, `"value":"ab"`},
		{"RekordV001SchemaSignature", func() forkValidatable { return new(fork.RekordV001SchemaSignature) }, func() realValidatable { return new(real.RekordV001SchemaSignature) }, "format", formats, `"content":"YWI=","publicKey":{"content":"YWI="}`},
		{"SearchIndexPublicKey", func() forkValidatable { return new(fork.SearchIndexPublicKey) }, func() realValidatable { return new(real.SearchIndexPublicKey) }, "format", formats, `"content":"YWI="`},
		{"SearchIndex", func() forkValidatable { return new(fork.SearchIndex) }, func() realValidatable { return new(real.SearchIndex) }, "operator", operators, `"email":"a@example.com"`},
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
				got, want := fmt.Sprint(f.Validate(forkstrfmt.Default)), fmt.Sprint(r.Validate(strfmt.Default))
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
