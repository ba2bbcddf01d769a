package in_toto

import (
	ita1 "github.com/in-toto/attestation/go/v1"
	"github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/common"
	// ferry: slsa_provenance/v0.1 and v1 imports removed with the statements that used them.
	slsa02 "github.com/in-toto/in-toto-golang/in_toto/slsa_provenance/v0.2"
)

const (
	// StatementInTotoV01 is the statement type for the generalized link format
	// containing statements. This is constant for all predicate types.
	StatementInTotoV01 = "https://in-toto.io/Statement/v0.1"

	// StatementInTotoV1 is the type URI for ITE-6 v1 Statements.
	// This is constant for all predicate types.
	StatementInTotoV1 = ita1.StatementTypeUri

	// PredicateSPDX represents a SBOM using the SPDX standard.
	// The SPDX mandates 'spdxVersion' field, so predicate type can omit
	// version.
	PredicateSPDX = "https://spdx.dev/Document"
	// PredicateCycloneDX represents a CycloneDX SBOM
	PredicateCycloneDX = "https://cyclonedx.org/bom"
	// PredicateLinkV1 represents an in-toto 0.9 link.
	PredicateLinkV1 = "https://in-toto.io/Link/v1"
)

// Subject describes the set of software artifacts the statement applies to.
//
// Deprecated: This implementation of Subject exists for historical
// compatibility and should not be used. This implementation has been
// superseded by a ResourceDescriptor struct generated from the Protobuf
// definition in
// https://github.com/in-toto/attestation/tree/main/protos/in_toto_attestation/v1.
// To generate an ITE-6 v1 Statement subject, use the ResourceDescriptor Go
// APIs provided in https://github.com/in-toto/attestation/tree/main/go/v1.
type Subject struct {
	Name   string           `json:"name"`
	Digest common.DigestSet `json:"digest"`
}

// StatementHeader defines the common fields for all statements
//
// Deprecated: This implementation of StatementHeader exists for historical
// compatibility and should not be used. This implementation has been
// superseded by the Statement struct generated from the Protobuf
// definition in
// https://github.com/in-toto/attestation/tree/main/protos/in_toto_attestation/v1.
// To generate an ITE-6 v1 Statement, use the Go APIs provided in
// https://github.com/in-toto/attestation/tree/main/go/v1.
type StatementHeader struct {
	Type          string    `json:"_type"`
	PredicateType string    `json:"predicateType"`
	Subject       []Subject `json:"subject"`
}

/*
Statement binds the attestation to a particular subject and identifies the
of the predicate. This struct represents a generic statement.
*/
// Deprecated: This implementation of Statement exists for historical
// compatibility and should not be used. This implementation has been
// superseded by the Statement struct generated from the Protobuf
// definition in
// https://github.com/in-toto/attestation/tree/main/protos/in_toto_attestation/v1.
// To generate an ITE-6 v1 Statement, use the Go APIs provided in
// https://github.com/in-toto/attestation/tree/main/go/v1.
type Statement struct {
	StatementHeader
	// Predicate contains type specific metadata.
	Predicate interface{} `json:"predicate"`
}

// ferry: ProvenanceStatementSLSA01 removed (upstream github.com/in-toto/in-toto-golang v0.11.0
// in_toto/attestations.go): rekor's entry types use only PayloadType, Statement and
// ProvenanceStatement; it imported slsa_provenance/v0.1.

// ProvenanceStatementSLSA02 is the definition for an entire provenance statement with SLSA 0.2 predicate.
type ProvenanceStatementSLSA02 struct {
	StatementHeader
	Predicate slsa02.ProvenancePredicate `json:"predicate"`
}

// ferry: ProvenanceStatementSLSA1 removed (upstream attestations.go): unused by rekor; it
// imported slsa_provenance/v1.

// ProvenanceStatement is the definition for an entire provenance statement with SLSA 0.2 predicate.
// Deprecated: Only version-specific provenance structs will be maintained (ProvenanceStatementSLSA01, ProvenanceStatementSLSA02).
type ProvenanceStatement struct {
	StatementHeader
	Predicate slsa02.ProvenancePredicate `json:"predicate"`
}

// ferry: LinkStatement removed (upstream attestations.go): unused by rekor; its Link is
// declared in model.go, which this copy leaves out (with keylib, runlib, verifylib).

/*
SPDXStatement is the definition for an entire SPDX statement.
This is currently not implemented. Some tooling exists here:
https://github.com/spdx/tools-golang, but this software is still in
early state.
This struct is the same as the generic Statement struct but is added for
completeness
*/
type SPDXStatement struct {
	StatementHeader
	Predicate interface{} `json:"predicate"`
}

/*
CycloneDXStatement defines a cyclonedx sbom in the predicate. It is not
currently serialized just as its SPDX counterpart. It is an empty
interface, like the generic Statement.
*/
type CycloneDXStatement struct {
	StatementHeader
	Predicate interface{} `json:"predicate"`
}
