package helm

// Helm's classic repository index (index.yaml), reimplemented from
// helm.sh/helm/v4/pkg/repo/v1 (index.go, chartrepo.go) at v4.3.1. That
// package also holds Helm's downloaders, whose imports (Helm's plugin
// system with a WebAssembly runtime, Kubernetes CLI and kustomize
// libraries: about 200 packages) ferry never calls; the rules below are
// the part ferry uses, kept to Helm's behaviour and pinned against Helm's
// own package by index_test.go.

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	chart "github.com/ferryhq/ferry/internal/forked/helm/pkg/chart/v2"
	"sigs.k8s.io/yaml"
)

// indexAPIVersionV1 is the apiVersion of an index.yaml (repo.APIVersionV1).
const indexAPIVersionV1 = "v1"

var (
	// errNoIndexAPIVersion is repo.ErrNoAPIVersion.
	errNoIndexAPIVersion = errors.New("no API version specified")
	// errEmptyIndex is repo.ErrEmptyIndexYaml.
	errEmptyIndex = errors.New("empty index.yaml file")
)

// indexFile is a chart repository's index.yaml, Helm's repo.IndexFile
// with the same fields and JSON names, so that a strict YAML read
// accepts and rejects what Helm's does and a marshalled index has Helm's
// bytes.
type indexFile struct {
	// ServerInfo is read only for chartmuseum's indexes.
	ServerInfo map[string]any           `json:"serverInfo,omitempty"`
	APIVersion string                   `json:"apiVersion"`
	Generated  time.Time                `json:"generated"`
	Entries    map[string]chartVersions `json:"entries"`
	PublicKeys []string                 `json:"publicKeys,omitempty"`
	// Annotations are left to other applications.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// chartVersion is one chart version an index lists, Helm's
// repo.ChartVersion. The deprecated fields are kept, as Helm keeps them,
// so that a strict read accepts an index written by older tools.
type chartVersion struct {
	*chart.Metadata
	URLs    []string  `json:"urls"`
	Created time.Time `json:"created"`
	Removed bool      `json:"removed,omitempty"`
	Digest  string    `json:"digest,omitempty"`

	ChecksumDeprecated      string `json:"checksum,omitempty"`
	EngineDeprecated        string `json:"engine,omitempty"`
	TillerVersionDeprecated string `json:"tillerVersion,omitempty"`
	URLDeprecated           string `json:"url,omitempty"`
}

// chartVersions sorts by version as repo.ChartVersions does: a version
// that is not SemVer sorts before every other.
type chartVersions []*chartVersion

// Len is the number of versions.
func (c chartVersions) Len() int { return len(c) }

// Swap swaps two versions.
func (c chartVersions) Swap(i, j int) { c[i], c[j] = c[j], c[i] }

// Less reports whether version a is older than version b.
func (c chartVersions) Less(a, b int) bool {
	// Failed parse pushes to the back (repo.ChartVersions.Less).
	i, err := semver.NewVersion(c[a].Version)
	if err != nil {
		return true
	}
	j, err := semver.NewVersion(c[b].Version)
	if err != nil {
		return false
	}
	return i.LessThan(j)
}

// newIndexFile returns an empty index, as repo.NewIndexFile.
func newIndexFile() *indexFile {
	return &indexFile{
		APIVersion: indexAPIVersionV1,
		Generated:  time.Now(),
		Entries:    map[string]chartVersions{},
		PublicKeys: []string{},
	}
}

// sortEntries sorts each chart's versions newest first
// (repo.IndexFile.SortEntries).
func (i *indexFile) sortEntries() {
	for _, versions := range i.Entries {
		sort.Sort(sort.Reverse(versions))
	}
}

// marshal writes the index as repo.IndexFile.WriteFile does
// (sigs.k8s.io/yaml).
func (i *indexFile) marshal() ([]byte, error) { return yaml.Marshal(i) }

// loadIndex parses index.yaml as repo.LoadIndexFile (loadIndex in
// index.go) does: JSON when the bytes are valid JSON, strict YAML
// otherwise; nil entries and entries whose metadata Helm's validation
// rejects are dropped with a warning (a duplicate dependency alias is
// tolerated); each chart's versions are sorted newest first; an index
// without apiVersion is an error.
func loadIndex(data []byte, source string) (*indexFile, error) {
	i := &indexFile{}
	if len(data) == 0 {
		return i, errEmptyIndex
	}
	if err := jsonOrYAMLUnmarshal(data, i); err != nil {
		return i, err
	}
	for name, cvs := range i.Entries {
		for idx, v := range slices.Backward(cvs) {
			if v == nil {
				slog.Warn("skipping loading invalid entry for chart: empty entry", "name", name, "source", source)
				cvs = append(cvs[:idx], cvs[idx+1:]...)
				continue
			}
			// When metadata section missing, initialize with no data.
			if v.Metadata == nil {
				v.Metadata = &chart.Metadata{}
			}
			if v.APIVersion == "" {
				v.APIVersion = chart.APIVersionV1
			}
			if err := v.Validate(); ignoreSkippableChartValidationError(err) != nil {
				slog.Warn("skipping loading invalid entry for chart", "name", name, "version", v.Version, "source", source, "error", err)
				cvs = append(cvs[:idx], cvs[idx+1:]...)
			}
		}
		i.Entries[name] = cvs
	}
	i.sortEntries()
	if i.APIVersion == "" {
		return i, errNoIndexAPIVersion
	}
	return i, nil
}

// jsonOrYAMLUnmarshal is index.go's jsonOrYamlUnmarshal.
func jsonOrYAMLUnmarshal(b []byte, i any) error {
	if json.Valid(b) {
		return json.Unmarshal(b, i)
	}
	return yaml.UnmarshalStrict(b, i)
}

// ignoreSkippableChartValidationError is index.go's function of that
// name: a repository that strips dependency aliases (JFrog,
// https://github.com/helm/helm/issues/12748) still lists the chart.
func ignoreSkippableChartValidationError(err error) error {
	var verr chart.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	if strings.HasPrefix(verr.Error(), "validation: more than one dependency with name or alias") {
		return nil
	}
	return err
}

// resolveReferenceURL resolves an index entry's URL (refURL) against the
// repository URL as helm.sh/helm/v4/pkg/repo/v1/chartrepo.go
// ResolveReferenceURL does: an absolute URL is kept; a relative one is
// resolved below the repository URL (a trailing slash added) and takes
// the repository URL's query.
func resolveReferenceURL(baseURL, refURL string) (string, error) {
	parsedRefURL, err := url.Parse(refURL)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s as URL: %w", refURL, err)
	}
	if parsedRefURL.IsAbs() {
		return refURL, nil
	}
	parsedBaseURL, err := url.Parse(baseURL)
	if err != nil {
		return "", fmt.Errorf("failed to parse %s as URL: %w", baseURL, err)
	}
	// A trailing slash, once, for ResolveReference to keep the last
	// path segment.
	parsedBaseURL.RawPath = strings.TrimSuffix(parsedBaseURL.RawPath, "/") + "/"
	parsedBaseURL.Path = strings.TrimSuffix(parsedBaseURL.Path, "/") + "/"
	resolvedURL := parsedBaseURL.ResolveReference(parsedRefURL)
	resolvedURL.RawQuery = parsedBaseURL.RawQuery
	return resolvedURL.String(), nil
}
