package crossplane

import (
	"slices"
	"strings"

	"github.com/ferryhq/ferry/ociref"
)

// dockerHubHosts are the names go-containerregistry gives Docker Hub; a
// one-component repository on it has the implicit "library/" namespace.
var dockerHubHosts = []string{"", ociref.DockerHub, "index.docker.io"}

// ObjectName returns the metadata.name Crossplane's package manager gives
// the Provider, Configuration or Function object it creates for a
// dependency on source, a repository "HOST/PATH" (a tag or digest, if
// written, is ignored). It mirrors NewPackage in crossplane
// internal/controller/pkg/resolver/reconciler.go,
//
//	pack.SetName(xpkg.ToDNSLabel(ref.Context().RepositoryStr()))
//
// (and buildPack in internal/initializer/installer.go, which names the
// packages Crossplane installs at start-up the same way):
//   - the registry host is dropped: only the repository path counts, so
//     "xpkg.crossplane.io/crossplane-contrib/provider-nop" and
//     "ghcr.io/crossplane-contrib/provider-nop" get the same name;
//   - a one-component path on Docker Hub (or without host, which
//     go-containerregistry's name.ParseReference puts on Docker Hub) takes
//     the implicit "library/" namespace (go-containerregistry
//     pkg/name/repository.go, Repository.RepositoryStr);
//   - the path goes through xpkg.ToDNSLabel (crossplane-runtime
//     pkg/xpkg/name.go): only its first 63 bytes are read; lower-case
//     letters and digits are kept, '.', '/', ':' and '-' become '-' and
//     every other byte (upper-case letters, '_') is dropped; leading and
//     trailing '-' are trimmed. Runs of '-' are kept.
//
// The result may be empty (an empty source, a path of upper-case letters
// only), which Crossplane could not create either.
func ObjectName(source string) string {
	s := strings.TrimSpace(source)
	if at := strings.Index(s, "@"); at >= 0 {
		s = s[:at]
	}
	if colon := strings.LastIndex(s, ":"); colon > strings.LastIndex(s, "/") {
		s = s[:colon]
	}
	host, path := "", s
	if first, rest, ok := strings.Cut(s, "/"); ok && ociref.IsRegistry(first) {
		host, path = first, rest
	}
	if path != "" && slices.Contains(dockerHubHosts, host) && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	return toDNSLabel(path)
}

// toDNSLabel is xpkg.ToDNSLabel of crossplane-runtime pkg/xpkg/name.go,
// as written upstream: it ranges over s (so i is the byte offset of each
// rune, and a multi-byte rune is looked at by its first byte only), keeps
// [a-z0-9], turns '.', '/', ':' and '-' into '-' except at offset 0,
// offset 62 and the last byte, drops everything else, stops after offset
// 62 and trims '-' from both ends.
func toDNSLabel(s string) string {
	var cut strings.Builder
	for i := range s {
		b := s[i]
		if ('a' <= b && b <= 'z') || ('0' <= b && b <= '9') {
			cut.WriteByte(b)
		}
		if (b == '.' || b == '/' || b == ':' || b == '-') && (i != 0 && i != 62 && i != len(s)-1) {
			cut.WriteByte('-')
		}
		if i == 62 {
			break
		}
	}
	return strings.Trim(cut.String(), "-")
}
