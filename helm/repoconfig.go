package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"sigs.k8s.io/yaml"

	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/sizecap"
)

// helmRepository is one entry of Helm's repositories.yaml (`helm repo
// add NAME URL`), as helm's pkg/repo/v1/chartrepo.go Entry writes it.
// Only the name and URL are read: the credentials it may hold are never
// read, kept or printed.
type helmRepository struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// helmRepositoryConfig returns the path of Helm's repositories.yaml as
// helm's pkg/cli/environment.go finds it: $HELM_REPOSITORY_CONFIG, else
// repositories.yaml in Helm's configuration directory
// (pkg/helmpath/lazypath.go configPath: $HELM_CONFIG_HOME, else
// $XDG_CONFIG_HOME/helm, else the platform's default of
// pkg/helmpath/lazypath_{unix,darwin,windows}.go).
func helmRepositoryConfig() string {
	if p := os.Getenv("HELM_REPOSITORY_CONFIG"); p != "" {
		return p
	}
	if base := os.Getenv("HELM_CONFIG_HOME"); base != "" {
		return filepath.Join(base, "repositories.yaml")
	}
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		switch runtime.GOOS {
		case "darwin":
			base = filepath.Join(home, "Library", "Preferences")
		case "windows":
			base = os.Getenv("APPDATA")
		default:
			base = filepath.Join(home, ".config")
		}
	}
	return filepath.Join(base, "helm", "repositories.yaml")
}

// loadHelmRepositories reads Helm's repositories.yaml at path, as helm's
// pkg/downloader/chart_downloader.go loadRepoConfig does: a file that
// does not exist names no repository.
func loadHelmRepositories(path string) ([]helmRepository, error) {
	data, err := sizecap.ReadFile(path, mirrorset.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("helm's repositories file %s: %w", path, err)
	}
	var f struct {
		Repositories []*helmRepository `json:"repositories"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("helm's repositories file %s: %w", path, err)
	}
	out := make([]helmRepository, 0, len(f.Repositories))
	for _, r := range f.Repositories {
		if r != nil {
			out = append(out, *r)
		}
	}
	return out, nil
}
