// Package kudo is the KUDO operator package format (KEP-29, "Operator
// Dependencies"): packages (operator.yaml, params.yaml, templates/) as a
// folder or a .tgz, KUDO's HTTP repositories (index.yaml plus tarballs)
// presented to the pipeline as read-only OCI repositories, the
// dependencies that tasks of kind KudoOperator (or Operator) declare, the
// images the templates deploy, and the KEP's install order and instance
// names.
//
// A repository package's source is "kudo+https://REPOSITORY/NAME" (a
// package tarball's URL "kudo+https://HOST/PATH/NAME-VERSION.tgz"). Each
// version is the OCI artifact ferry mirrors to
// TO/kudo-operators/NAME:APPVERSION_OPERATORVERSION (OPERATORVERSION
// alone without an appVersion, as KUDO names its tarballs):
//
//   - manifest: application/vnd.oci.image.manifest.v1+json, artifactType
//     ArtifactType, annotations org.opencontainers.image.title (the
//     operator's name) and org.opencontainers.image.version (the tag);
//   - config: ConfigMediaType, JSON {name, appVersion, operatorVersion,
//     repository} (see Config);
//   - one layer: PackageLayerMediaType, the package tarball byte for byte
//     as the repository serves it (its sha256 is the index's digest),
//     titled NAME-VERSION.tgz.
//
// The manifest is built by encoding/json from those alone, so one tarball
// always gives one manifest digest.
package kudo

// Media types of a KUDO package artifact. KUDO defines none (it never
// stored packages in OCI registries); these are ferry's.
const (
	// ArtifactType is the manifest's artifactType.
	ArtifactType = "application/vnd.kudo.operator.v1"
	// ConfigMediaType is the config blob: Config as JSON.
	ConfigMediaType = "application/vnd.kudo.operator.config.v1+json"
	// PackageLayerMediaType is the layer holding the package tarball.
	PackageLayerMediaType = "application/vnd.kudo.operator.package.v1.tar+gzip"
)
