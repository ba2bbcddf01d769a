package kudo

import (
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/ferryhq/ferry/mirrorset"
)

// The ferry.yaml keys the KUDO format owns.
const (
	// KeyOperators lists operator roots: `operators: [{package, repo,
	// appVersion, operatorVersion}]`.
	KeyOperators = "operators"
	// KeyKudo holds KUDO settings: `kudo: {repositories: {NAME: URL}}`.
	KeyKudo = "kudo"
)

// Community names KUDO's community repository, the default repository
// (kudobuilder/kudo pkg/kudoctl/util/repo/repo.go: the "community"
// repository configuration).
const (
	Community    = "community"
	CommunityURL = "https://kudo-repository.storage.googleapis.com/v1"
)

// OperatorRoot is one entry of ferry.yaml's `operators:`.
type OperatorRoot struct {
	// Package is a package name in Repo, a local package folder or
	// .tgz, or the URL of a package tarball.
	Package string `yaml:"package"`
	// Repo names one of kudo.repositories; empty: community.
	Repo string `yaml:"repo,omitempty"`
	// AppVersion and OperatorVersion choose the version, as
	// `kubectl kudo install --app-version --operator-version` do; the
	// newest when absent.
	AppVersion      string `yaml:"appVersion,omitempty"`
	OperatorVersion string `yaml:"operatorVersion,omitempty"`
	// InstanceName is the top-level instance's name; the operator's
	// name when absent (kubectl kudo install --instance).
	InstanceName string `yaml:"instanceName,omitempty"`
}

type kudoSection struct {
	Repositories map[string]string `yaml:"repositories,omitempty"`
}

// Settings are the KUDO format's ferry.yaml keys.
type Settings struct {
	// Operators are the operator roots.
	Operators []OperatorRoot
	// Repositories maps a repository name to its URL; community is
	// always defined (CommunityURL unless ferry.yaml redefines it).
	Repositories map[string]string
}

func settingsOf(m *mirrorset.MirrorSet) (Settings, error) {
	s := Settings{Repositories: map[string]string{Community: CommunityURL}}
	if m == nil {
		return s, nil
	}
	if _, err := m.Section(KeyOperators, &s.Operators); err != nil {
		return s, fmt.Errorf("%s: %w", KeyOperators, err)
	}
	var k kudoSection
	if _, err := m.Section(KeyKudo, &k); err != nil {
		return s, fmt.Errorf("%s: %w", KeyKudo, err)
	}
	for name, u := range k.Repositories {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return s, fmt.Errorf("%s.repositories.%s: %q is not an http(s):// repository URL", KeyKudo, name, u)
		}
		s.Repositories[name] = strings.TrimSuffix(u, "/")
	}
	for i, o := range s.Operators {
		where := fmt.Sprintf("%s[%d]", KeyOperators, i)
		if o.Package == "" {
			return s, fmt.Errorf("%s: package is required (a repository package name, a folder, a .tgz or a tarball URL)", where)
		}
		if o.Repo != "" {
			if _, err := s.repositoryURL(o.Repo); err != nil {
				return s, fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return s, nil
}

// repositoryURL returns the URL of the repository called name (empty:
// community).
func (s Settings) repositoryURL(name string) (string, error) {
	if name == "" {
		name = Community
	}
	if u, ok := s.Repositories[name]; ok {
		return u, nil
	}
	known := make([]string, 0, len(s.Repositories))
	for k := range s.Repositories {
		known = append(known, k)
	}
	sort.Strings(known)
	return "", fmt.Errorf("KUDO repository %q is not defined; add it to ferry.yaml as `%s: {repositories: {%s: URL}}` (known: %s)", name, KeyKudo, name, strings.Join(known, ", "))
}

// defaultRepository is the repository package names are looked up in
// when the package naming them came from none (a folder, a tarball URL).
func (s Settings) defaultRepository() string {
	if u, ok := s.Repositories[Community]; ok {
		return u
	}
	return CommunityURL
}
