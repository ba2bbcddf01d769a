package helm

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"

	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/redact"
	"github.com/ferryhq/ferry/sizecap"
)

// The ferry.yaml keys the Helm format owns.
const (
	// KeyCharts lists chart roots: `charts: [{ref|repo+name, version,
	// values, set}]`.
	KeyCharts = "charts"
	// KeyHelm holds Helm settings: `helm: {repositories: {NAME: URL}}`,
	// the repository aliases a Chart.yaml names as "@NAME".
	KeyHelm = "helm"
	// KeyExclude lists images never to lock: `exclude: [REPO[:TAG]]`.
	KeyExclude = "exclude"
)

// ChartRoot is one entry of ferry.yaml's `charts:`.
type ChartRoot struct {
	// Ref is an OCI chart: "oci://HOST/PATH" or "HOST/PATH", with
	// ":VERSION" or "@sha256:…" if Version is empty.
	Ref string `yaml:"ref,omitempty"`
	// Repo is a classic Helm repository: its URL, or "@NAME" for one of
	// helm.repositories.
	Repo string `yaml:"repo,omitempty"`
	// Name is the chart's name in Repo.
	Name string `yaml:"name,omitempty"`
	// Path is a local chart: a chart directory, its Chart.yaml, or a
	// packaged .tgz (the CI case of a chart being built). The chart itself
	// is not published, so it is not a package of the closure: its
	// dependencies are roots (as `helm dependency build` would fetch them,
	// from Chart.lock when it is in sync), and the images it deploys,
	// rendered with them in place, are roots too.
	Path string `yaml:"path,omitempty"`
	// Version is a version or a range, as Chart.yaml's dependencies
	// write them.
	Version string `yaml:"version,omitempty"`
	// Values are values files (paths relative to the working directory)
	// used to render the chart and find its images, in order, as
	// `helm template -f` takes them.
	Values []string `yaml:"values,omitempty"`
	// Set are values as `helm template --set KEY=VALUE` takes them.
	Set map[string]string `yaml:"set,omitempty"`
}

// helmSection is ferry.yaml's `helm:`.
type helmSection struct {
	// Repositories maps an alias (Chart.yaml's "@NAME" or "alias:NAME")
	// to a repository URL, as `helm repo add NAME URL` records it.
	Repositories map[string]string `yaml:"repositories,omitempty"`
	// ImagePaths are further places of images in custom resources.
	ImagePaths []ImagePath `yaml:"imagePaths,omitempty"`
}

// Settings are the Helm format's ferry.yaml keys.
type Settings struct {
	// Charts are the chart roots.
	Charts []ChartRoot
	// Repositories are the repository aliases.
	Repositories map[string]string
	// ImagePaths are user-declared places of images in objects of a kind
	// (`helm: {imagePaths: [{apiVersion, kind, path}]}`).
	ImagePaths []ImagePath
	// Exclude lists images never to lock, as references normalised the
	// Docker way: a repository ("docker.io/library/busybox") excludes
	// every tag of it, a reference with a tag or digest only that one.
	Exclude []string
	// helmRepos are the repositories of Helm's own repositories.yaml
	// (helmRepositoryConfig), the aliases `helm repo add` recorded;
	// helmReposErr is why it could not be read, reported only when an
	// alias needs it.
	helmRepos    []helmRepository
	helmReposErr error
}

func settingsOf(m *mirrorset.MirrorSet) (Settings, error) {
	var s Settings
	s.helmRepos, s.helmReposErr = loadHelmRepositories(helmRepositoryConfig())
	if m == nil {
		return s, nil
	}
	if _, err := m.Section(KeyCharts, &s.Charts); err != nil {
		return s, fmt.Errorf("%s: %w", KeyCharts, err)
	}
	var h helmSection
	if _, err := m.Section(KeyHelm, &h); err != nil {
		return s, fmt.Errorf("%s: %w", KeyHelm, err)
	}
	s.Repositories = h.Repositories
	s.ImagePaths = h.ImagePaths
	for i, p := range h.ImagePaths {
		if p.Kind == "" || p.Path == "" {
			return s, fmt.Errorf("%s.imagePaths[%d]: give kind and path (e.g. {kind: Prometheus, path: spec.image})", KeyHelm, i)
		}
	}
	if _, err := m.Section(KeyExclude, &s.Exclude); err != nil {
		return s, fmt.Errorf("%s: %w", KeyExclude, err)
	}
	for name, u := range s.Repositories {
		if !ociref.IsURLSource(u) && !strings.HasPrefix(u, ociref.OCIScheme) {
			return s, fmt.Errorf("%s.repositories.%s: %q is not an http(s):// or oci:// repository URL", KeyHelm, name, u)
		}
	}
	for i, c := range s.Charts {
		where := fmt.Sprintf("%s[%d]", KeyCharts, i)
		if c.Path != "" {
			if c.Ref != "" || c.Repo != "" || c.Name != "" || c.Version != "" {
				return s, fmt.Errorf("%s: a local chart (path) has its own name and version: give path alone, or ref, or repo and name", where)
			}
			if _, err := os.Stat(c.Path); err != nil {
				return s, fmt.Errorf("%s: chart %w", where, err)
			}
			for _, f := range c.Values {
				if _, err := os.Stat(f); err != nil {
					return s, fmt.Errorf("%s: values file %s: %w", where, f, err)
				}
			}
			continue
		}
		switch {
		case c.Ref != "" && (c.Repo != "" || c.Name != ""):
			return s, fmt.Errorf("%s: give either ref (an OCI chart) or repo and name (a chart in a classic repository), not both", where)
		case c.Ref == "" && (c.Repo == "" || c.Name == ""):
			return s, fmt.Errorf("%s: give ref (an OCI chart), repo and name (a chart in a classic repository), or path (a local chart)", where)
		}
		if c.Version != "" && !strings.HasPrefix(c.Version, "sha256:") {
			if _, err := semver.NewConstraint(c.Version); err != nil {
				return s, fmt.Errorf("%s: version %q is not a version or range: %w", where, c.Version, err)
			}
		}
		if _, err := s.chartRef(c); err != nil {
			return s, fmt.Errorf("%s: %w", where, err)
		}
		for _, f := range c.Values {
			if _, err := os.Stat(f); err != nil {
				return s, fmt.Errorf("%s: values file %s: %w", where, f, err)
			}
		}
	}
	for i, e := range s.Exclude {
		if _, err := ociref.ParseNormalized(e, ""); err != nil {
			return s, fmt.Errorf("%s[%d]: %w", KeyExclude, i, err)
		}
	}
	return s, nil
}

// repositoryURL returns the repository a Chart.yaml dependency or a
// `charts:` entry names: "@NAME" and "alias:NAME" are looked up in
// ferry.yaml's aliases, then in Helm's own repositories.yaml, as helm's
// pkg/downloader/manager.go resolveRepoNames looks them up there.
func (s Settings) repositoryURL(repo string) (string, error) {
	name, ok := aliasName(repo)
	if !ok {
		return repo, nil
	}
	if u, found := s.Repositories[name]; found {
		return u, nil
	}
	if u, found := s.helmRepository(name); found {
		return u, nil
	}
	return "", s.aliasError(repo, name)
}

// aliasName returns the NAME of a repository written "@NAME" or
// "alias:NAME" (helm's pkg/downloader/manager.go resolveRepoNames).
func aliasName(repo string) (string, bool) {
	name, ok := strings.CutPrefix(repo, "@")
	if !ok {
		name, ok = strings.CutPrefix(repo, "alias:")
	}
	return name, ok
}

// helmRepository returns the URL of the first repository of Helm's
// repositories.yaml named name, as resolveRepoNames finds it.
func (s Settings) helmRepository(name string) (string, bool) {
	for _, r := range s.helmRepos {
		if r.Name == name {
			return r.URL, true
		}
	}
	return "", false
}

// aliasError says that the alias repo (NAME name) is defined nowhere.
func (s Settings) aliasError(repo, name string) error {
	known := make([]string, 0, len(s.Repositories)+len(s.helmRepos))
	for k := range s.Repositories {
		known = append(known, "@"+k)
	}
	for _, r := range s.helmRepos {
		known = append(known, "@"+r.Name)
	}
	sort.Strings(known)
	hint := "none are defined"
	if len(known) > 0 {
		hint = "known: " + strings.Join(slices.Compact(known), ", ")
	}
	err := fmt.Errorf("repository %s is not defined (%s): add it with `helm repo add %s URL`, name its URL in the ferry.yaml the run reads (the one beside a local chart, the working directory's for references, or the one the run names) as `%s: {repositories: {%s: URL}}`, or write the URL in Chart.yaml", repo, hint, name, KeyHelm, name)
	if s.helmReposErr != nil {
		return fmt.Errorf("%w (%w)", err, s.helmReposErr)
	}
	return err
}

// chartRef returns the reference of a `charts:` entry: an OCI
// repository, or REPOURL/NAME for a chart in a classic repository.
func (s Settings) chartRef(c ChartRoot) (string, error) {
	if c.Ref != "" {
		r, err := ociref.ParseNormalized(c.Ref, "")
		if err != nil {
			return "", err
		}
		return r.String(), nil
	}
	u, err := s.repositoryURL(c.Repo)
	if err != nil {
		return "", err
	}
	return joinRepo(u, c.Name)
}

// joinRepo returns the reference of chart name in repository repoURL
// (http(s):// or oci://).
func joinRepo(repoURL, name string) (string, error) {
	ref := strings.TrimSuffix(strings.TrimPrefix(repoURL, ociref.OCIScheme), "/") + "/" + name
	r, err := ociref.Parse(ref)
	if err != nil {
		return "", fmt.Errorf("chart %s in repository %s: %w", name, redact.String(repoURL), err)
	}
	return r.String(), nil
}

// readValues reads a `charts:` entry's values files and set values.
func readValues(c ChartRoot) (map[string]any, error) {
	files := make([][]byte, 0, len(c.Values))
	for _, f := range c.Values {
		data, err := sizecap.ReadFile(f, mirrorset.MaxFileSize)
		if err != nil {
			return nil, fmt.Errorf("values file %s: %w", f, err)
		}
		files = append(files, data)
	}
	return Values(files, c.Set)
}
