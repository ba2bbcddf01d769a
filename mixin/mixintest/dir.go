package mixintest

import (
	"os"
	"path/filepath"
)

// WriteDir writes the same feed and binaries NewFeed serves into dir, with
// file:// links, for programs that need a feed without a test: `make demo`
// points FERRY_MIXIN_FEED at it. It returns the feed's file:// URL.
func WriteDir(dir string, opts ...Options) (string, error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	s := &FeedServer{
		Mixins:    orDefault(o.Mixins, DefaultMixins),
		Versions:  orDefault(o.Versions, DefaultVersions),
		Platforms: orDefault(o.Platforms, DefaultPlatforms),
		Base:      "file://" + filepath.ToSlash(abs),
	}
	s.URL = s.Base + "/mixins/atom.xml"
	for _, v := range s.Versions {
		vdir := filepath.Join(abs, "mixins", v)
		if err := os.MkdirAll(vdir, 0o755); err != nil {
			return "", err
		}
		for _, m := range s.Mixins {
			for _, f := range s.Files(m) {
				if err := os.WriteFile(filepath.Join(vdir, f), Content(v, f), 0o644); err != nil {
					return "", err
				}
			}
		}
	}
	if err := os.WriteFile(filepath.Join(abs, "mixins", "atom.xml"), []byte(s.feed()), 0o644); err != nil {
		return "", err
	}
	return s.URL, nil
}
