package mirrorset

import (
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/sizecap"
)

// LoadFile reads a local input file: a ferry.yaml, or a file one of
// formats accepts as ROOT (porter.yaml, crossplane.yaml). settings carries
// format sections given by flags; it may be nil.
//
// A directory is offered to the formats with no data (a Helm chart
// directory); one no format reads is an error.
func LoadFile(path string, formats []format.Format, settings *MirrorSet) (*MirrorSet, error) {
	var data []byte
	dir := false
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		dir = true
	} else if data, err = sizecap.ReadFile(path, MaxFileSize); err != nil {
		return Load(path, formats) // reports the error with ferry.yaml's wording
	}
	if dir || !isMirrorSet(path, data) {
		if settings == nil {
			settings = &MirrorSet{}
		}
		for _, f := range formats {
			r, ok := f.(InputReader)
			if !ok {
				continue
			}
			m, ok, err := r.ReadInput(path, data, settings)
			if err != nil {
				return nil, exitcode.BadInput("%s: %w", path, err)
			}
			if ok {
				if err := m.Validate(); err != nil {
					return nil, exitcode.BadInput("%s: %w", path, err)
				}
				if err := m.CheckSections(formats); err != nil {
					return nil, exitcode.BadInput("%s: %w", path, err)
				}
				return m, nil
			}
		}
	}
	if dir {
		return nil, exitcode.BadInput("%s is a directory that no format reads as input (a Helm chart directory holds Chart.yaml)", path)
	}
	return Load(path, formats)
}

// isMirrorSet reports whether a file is a ferry.yaml: by its name, else by
// `kind: MirrorSet` in it.
func isMirrorSet(path string, data []byte) bool {
	switch strings.ToLower(filepath.Base(path)) {
	case DefaultFile, "ferry.yml":
		return true
	}
	var head struct {
		Kind string `yaml:"kind"`
	}
	return yaml.Unmarshal(data, &head) == nil && head.Kind == Kind
}
