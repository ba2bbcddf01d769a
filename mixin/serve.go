package mixin

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/serve/formatrepo"
)

// ErrNotFound is returned by a Store for a mixin, version or file it does
// not hold.
var ErrNotFound = errors.New("not found")

// RepositoryDir is the path segment below a mirror prefix that holds one
// repository per mixin: PREFIX/porter-mixins/NAME.
const RepositoryDir = "porter-mixins"

// Stored is one mixin version a Store holds.
type Stored struct {
	// Name and Version identify the mixin version.
	Name, Version string
	// Updated is written as the feed entry's <updated>.
	Updated time.Time
	// Files are the binary file names (NAME-OS-ARCH[.exe]), sorted.
	Files []string
	// Digests maps a file name to the digest the store records for it,
	// when the store knows it without reading the file.
	Digests map[string]digest.Digest
}

// Store is what Porter's mirror protocol is answered from.
type Store interface {
	// List returns every stored mixin version.
	List(ctx context.Context) ([]Stored, error)
	// Open returns the binary file of mixin name at version and its size;
	// ErrNotFound (wrapped) when there is no such file.
	Open(ctx context.Context, name, version, file string) (io.ReadCloser, int64, error)
}

// NewHandler returns an http.Handler answering Porter's mirror protocol
// from store, so that `porter mixins install NAME --mirror URL` works
// offline:
//
//	GET /mixins/atom.xml                     an Atom feed of every stored version
//	GET /mixins/VERSION/NAME-OS-ARCH[.exe]   one binary
//
// Download links in the feed point back at the request's host, over https
// when the request came over TLS (or X-Forwarded-Proto says so).
func NewHandler(store Store) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /mixins/atom.xml", func(w http.ResponseWriter, r *http.Request) {
		serveFeed(w, r, store)
	})
	mux.HandleFunc("GET /mixins/{version}/{file}", func(w http.ResponseWriter, r *http.Request) {
		serveBinary(w, r, store)
	})
	return mux
}

const atomNS = "http://www.w3.org/2005/Atom"

type outFeed struct {
	XMLName    xml.Name       `xml:"feed"`
	NS         string         `xml:"xmlns,attr"`
	ID         string         `xml:"id"`
	Title      string         `xml:"title"`
	Updated    string         `xml:"updated"`
	Link       atomLink       `xml:"link"`
	Author     outAuthor      `xml:"author"`
	Categories []atomCategory `xml:"category"`
	Entries    []outEntry     `xml:"entry"`
}

type outAuthor struct {
	Name string `xml:"name"`
}

type outEntry struct {
	ID         string         `xml:"id"`
	Title      string         `xml:"title"`
	Updated    string         `xml:"updated"`
	Categories []atomCategory `xml:"category"`
	Content    string         `xml:"content"`
	Links      []atomLink     `xml:"link"`
}

func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mixins"
}

func serveFeed(w http.ResponseWriter, r *http.Request, store Store) {
	stored, err := store.List(r.Context())
	if err != nil {
		http.Error(w, "listing mixins: "+err.Error(), http.StatusBadGateway)
		return
	}
	base := baseURL(r)
	f := outFeed{
		NS:     atomNS,
		ID:     base,
		Title:  "Porter mixins mirrored by ferry",
		Link:   atomLink{Rel: "self", Href: base + "/atom.xml"},
		Author: outAuthor{Name: "ferry"},
	}
	updated := time.Unix(0, 0)
	names := map[string]bool{}
	for _, s := range stored {
		if !names[s.Name] {
			names[s.Name] = true
			f.Categories = append(f.Categories, atomCategory{Term: s.Name})
		}
		if s.Updated.After(updated) {
			updated = s.Updated
		}
		e := outEntry{
			ID:         base + "/" + s.Version + "/" + s.Name,
			Title:      s.Name + " @ " + s.Version,
			Updated:    s.Updated.UTC().Format(time.RFC3339),
			Categories: []atomCategory{{Term: s.Name}},
			Content:    s.Version,
		}
		for _, file := range s.Files {
			e.Links = append(e.Links, atomLink{Rel: "download", Href: base + "/" + s.Version + "/" + file})
		}
		f.Entries = append(f.Entries, e)
	}
	f.Updated = updated.UTC().Format(time.RFC3339)
	out, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/atom+xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(xml.Header)+len(out)))
	io.WriteString(w, xml.Header)
	w.Write(out)
}

func serveBinary(w http.ResponseWriter, r *http.Request, store Store) {
	version, file := r.PathValue("version"), r.PathValue("file")
	name, _, _, ok := splitBinaryName(file)
	if !ok || CheckName(version) != nil {
		http.NotFound(w, r)
		return
	}
	rc, size, err := store.Open(r.Context(), name, version, file)
	if errors.Is(err, ErrNotLocked) {
		// Say why, so that whoever runs porter sees it is not a typo.
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if errors.Is(err, ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, rc); err != nil {
		// The status is sent; cut the connection so that the client sees
		// a truncated download rather than a complete one.
		panic(http.ErrAbortHandler)
	}
}

// RegistryStore is a Store over the mixin artifacts that `ferry mirror`
// pushed to a registry: repositories PREFIX/porter-mixins/NAME, found
// through the registry's catalog (/v2/_catalog), one tag per version.
type RegistryStore struct {
	// Registry is the registry to read, for example from
	// client.Client.Registry.
	Registry *remote.Registry
	// Prefix is the mirror's path prefix ("" or, for --to HOST/mirror,
	// "mirror").
	Prefix string
	// AnyPrefix serves every repository whose path ends in
	// porter-mixins/NAME, whatever comes before it; Prefix is then
	// ignored. When one version of a mixin is stored under several
	// prefixes, the first repository in catalog order answers.
	AnyPrefix bool
	// Names, when set, lists the mixins to serve instead of reading the
	// catalog, for registries that do not offer /v2/_catalog.
	Names []string
}

// repoPrefix returns "PREFIX/porter-mixins/".
func (s *RegistryStore) repoPrefix() string {
	return path.Join(strings.Trim(s.Prefix, "/"), RepositoryDir) + "/"
}

// repositories returns the repositories that may hold each mixin, by
// name; only, when non-empty, restricts it to that one mixin. explicit
// reports whether the names came from s.Names rather than the catalog.
func (s *RegistryStore) repositories(ctx context.Context, only string) (repos map[string][]string, explicit bool, err error) {
	repos = map[string][]string{}
	prefix := s.repoPrefix()
	if len(s.Names) > 0 && !s.AnyPrefix {
		for _, n := range s.Names {
			if CheckName(n) == nil && (only == "" || n == only) {
				repos[n] = append(repos[n], prefix+n)
			}
		}
		return repos, true, nil
	}
	if only != "" && !s.AnyPrefix {
		// One repository can hold it: no need for the catalog.
		return map[string][]string{only: {prefix + only}}, true, nil
	}
	err = s.Registry.Repositories(ctx, "", func(list []string) error {
		for _, r := range list {
			name, ok := s.mixinOf(r, prefix)
			if ok && (only == "" || name == only) {
				repos[name] = append(repos[name], r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("listing repositories of %s: %w", s.Registry.Reference.Registry, err)
	}
	for _, rs := range repos {
		sort.Strings(rs)
	}
	return repos, false, nil
}

// mixinOf returns the mixin name a repository holds, if it is a mixin
// repository this store serves.
func (s *RegistryStore) mixinOf(repo, prefix string) (string, bool) {
	if !s.AnyPrefix {
		name, ok := strings.CutPrefix(repo, prefix)
		return name, ok && CheckName(name) == nil
	}
	i := strings.LastIndexByte(repo, '/')
	if i < 0 {
		return "", false
	}
	parent, name := repo[:i], repo[i+1:]
	if parent != RepositoryDir && !strings.HasSuffix(parent, "/"+RepositoryDir) {
		return "", false
	}
	return name, CheckName(name) == nil
}

// List implements Store: every tag of every PREFIX/porter-mixins/NAME
// repository that holds a mixin artifact.
func (s *RegistryStore) List(ctx context.Context) ([]Stored, error) {
	repos, explicit, err := s.repositories(ctx, "")
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(repos))
	for n := range repos {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Stored
	for _, name := range names {
		seen := map[string]bool{}
		var versions []Stored
		for _, repoName := range repos[name] {
			repo, err := s.Registry.Repository(ctx, repoName)
			if err != nil {
				return nil, fmt.Errorf("mixin %s: %w", name, err)
			}
			tags, err := client.ListTags(ctx, repo)
			if isNotFound(err) && explicit {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("listing tags of %s: %w", repoName, err)
			}
			for _, tag := range tags {
				a, err := readArtifact(ctx, repo, tag)
				if err != nil {
					continue // not a mixin artifact
				}
				st := Stored{Name: name, Version: versionOfTag(tag)}
				if seen[st.Version] {
					continue
				}
				seen[st.Version] = true
				if t, err := time.Parse(time.RFC3339, a.manifest.Annotations[ocispec.AnnotationCreated]); err == nil {
					st.Updated = t
				}
				st.Digests = map[string]digest.Digest{}
				for title, l := range a.layers {
					if _, _, err := ParseBinaryName(name, title); err == nil {
						st.Files = append(st.Files, title)
						st.Digests[title] = l.Digest
					}
				}
				sort.Strings(st.Files)
				versions = append(versions, st)
			}
		}
		sort.Slice(versions, func(i, j int) bool { return lessVersion(versions[i].Version, versions[j].Version) })
		out = append(out, versions...)
	}
	return out, nil
}

// Open implements Store.
func (s *RegistryStore) Open(ctx context.Context, name, version, file string) (io.ReadCloser, int64, error) {
	if CheckName(name) != nil {
		return nil, 0, fmt.Errorf("mixin %q: %w", name, ErrNotFound)
	}
	tag, err := Tag(version)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrNotFound, err)
	}
	repos, _, err := s.repositories(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	for _, repoName := range repos[name] {
		repo, err := s.Registry.Repository(ctx, repoName)
		if err != nil {
			return nil, 0, fmt.Errorf("mixin %s: %w", name, err)
		}
		a, err := readArtifact(ctx, repo, tag)
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("mixin %s %s: %w", name, version, err)
		}
		l, ok := a.layers[file]
		if !ok {
			return nil, 0, fmt.Errorf("mixin %s %s: %s: %w", name, version, file, ErrNotFound)
		}
		rc, err := repo.Fetch(ctx, l)
		if err != nil {
			return nil, 0, fmt.Errorf("mixin %s %s: %s: %w", name, version, file, err)
		}
		return &describedReader{ReadCloser: rc, digest: l.Digest}, l.Size, nil
	}
	return nil, 0, fmt.Errorf("mixin %s %s: %w", name, version, ErrNotFound)
}

// versionOfTag undoes Tag: "_" is read as "+" when that gives a semver
// version.
func versionOfTag(tag string) string {
	if strings.Contains(tag, "_") {
		v := strings.ReplaceAll(tag, "_", "+")
		if _, err := semver.NewVersion(v); err == nil {
			return v
		}
	}
	return tag
}

func lessVersion(a, b string) bool {
	vs := []Version{{Version: a}, {Version: b}}
	sortVersions(vs)
	return vs[0].Version == a && a != b
}

// isNotFound reports whether err says that a repository, tag or blob does
// not exist.
func isNotFound(err error) bool {
	if errors.Is(err, errdef.ErrNotFound) {
		return true
	}
	var er *errcode.ErrorResponse
	return errors.As(err, &er) && er.StatusCode == http.StatusNotFound
}

// describedReader is a binary opened from a store that records its
// digest, so that a LockedStore can refuse it before sending a byte.
type describedReader struct {
	io.ReadCloser
	digest digest.Digest
}

// Digest returns the digest the store records for the file.
func (r *describedReader) Digest() digest.Digest { return r.digest }

// ErrNotLocked is returned (wrapped) by a LockedStore for a mixin version
// or binary that the lock does not hold, or whose content differs from
// the lock's. The mirror protocol answers it with 404 and its message.
var ErrNotLocked = errors.New("not served: this server was started with a lock and serves only what the lock holds")

// LockedStore is a Store that serves only the mixin versions and binaries
// a lock holds (`mixins[]` of ferry.lock), each only when its content has
// the lock's digest and size: `ferry serve --lock`. A version or binary
// the mirror holds and the lock does not is left out of the feed and
// answered 404; so is a binary whose digest the store records differently,
// and one whose bytes turn out to differ is cut off before its last byte.
type LockedStore struct {
	// Store is what is served from.
	Store Store
	// Locked are the lock's mixin entries.
	Locked []Locked
	// Log, when set, receives one line per refused version or binary.
	Log func(format string, args ...any)
}

// lockedEntry returns the lock entry of mixin name at version: versions
// are compared as OCI tags ("+" as "_"), since the store reads them from
// tags.
func (s *LockedStore) lockedEntry(name, version string) *Locked {
	want, err := Tag(version)
	if err != nil {
		return nil
	}
	for i := range s.Locked {
		if s.Locked[i].Name != name {
			continue
		}
		if t, err := Tag(s.Locked[i].Version); err == nil && t == want {
			return &s.Locked[i]
		}
	}
	return nil
}

func (s *LockedStore) logf(format string, args ...any) {
	if s.Log != nil {
		s.Log(format, args...)
	}
}

// List implements Store: the stored versions the lock holds, with only
// their locked binaries, and of those only the ones whose recorded digest
// is the lock's.
func (s *LockedStore) List(ctx context.Context) ([]Stored, error) {
	stored, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Stored
	for _, st := range stored {
		l := s.lockedEntry(st.Name, st.Version)
		if l == nil {
			s.logf("mixin feed: leaving out %s %s: not in the lock", st.Name, st.Version)
			continue
		}
		var files []string
		for _, f := range st.Files {
			b, ok := l.Binaries[f]
			switch {
			case !ok:
				s.logf("mixin feed: leaving out %s %s %s: not in the lock", st.Name, st.Version, f)
			case st.Digests[f] != "" && st.Digests[f].String() != b.Digest:
				s.logf("mixin feed: leaving out %s %s %s: the mirror holds %s, the lock %s", st.Name, st.Version, f, st.Digests[f], b.Digest)
			default:
				files = append(files, f)
			}
		}
		if len(files) == 0 {
			continue
		}
		st.Files = files
		out = append(out, st)
	}
	return out, nil
}

// Open implements Store: the binary only when the lock holds it, and
// with its bytes checked against the lock's digest and size while they
// are read; the last bytes of a binary that differs are never returned.
func (s *LockedStore) Open(ctx context.Context, name, version, file string) (io.ReadCloser, int64, error) {
	l := s.lockedEntry(name, version)
	if l == nil {
		s.logf("mixin download refused: %s %s is not in the lock", name, version)
		return nil, 0, fmt.Errorf("mixin %s %s is %w", name, version, ErrNotLocked)
	}
	want, ok := l.Binaries[file]
	if !ok {
		s.logf("mixin download refused: %s %s %s is not in the lock", name, version, file)
		return nil, 0, fmt.Errorf("mixin %s %s: %s is %w", name, version, file, ErrNotLocked)
	}
	rc, size, err := s.Store.Open(ctx, name, version, file)
	if err != nil {
		return nil, 0, err
	}
	refuse := func(format string, args ...any) (io.ReadCloser, int64, error) {
		rc.Close()
		msg := fmt.Sprintf(format, args...)
		s.logf("mixin download refused: %s %s %s: %s", name, version, file, msg)
		return nil, 0, fmt.Errorf("mixin %s %s: %s: %s: %w", name, version, file, msg, ErrNotLocked)
	}
	if d, ok := rc.(interface{ Digest() digest.Digest }); ok && d.Digest().String() != want.Digest {
		return refuse("the mirror holds %s, the lock %s", d.Digest(), want.Digest)
	}
	if size != want.Size {
		return refuse("the mirror holds %d bytes, the lock %d", size, want.Size)
	}
	wd, err := digest.Parse(want.Digest)
	if err != nil {
		return refuse("the lock's digest %q is invalid", want.Digest)
	}
	what := name + " " + version + " " + file
	return &lockedReader{rc: rc, r: formatrepo.VerifiedReader(rc, wd, want.Size), fail: func(msg string) { s.logf("mixin download cut off: %s: %s", what, msg) }}, size, nil
}

// lockedReader reads a binary through formatrepo.VerifiedReader, so that the
// read completing it returns only when the whole matches the lock, and
// logs and marks a mismatch with ErrNotLocked.
type lockedReader struct {
	rc   io.ReadCloser
	r    io.Reader
	fail func(msg string)
	err  error
}

func (r *lockedReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	n, err := r.r.Read(p)
	if errors.Is(err, formatrepo.ErrContentMismatch) {
		r.fail(err.Error())
		r.err = fmt.Errorf("%w: %w", err, ErrNotLocked)
		return n, r.err
	}
	return n, err
}

// Close closes the underlying reader.
func (r *lockedReader) Close() error { return r.rc.Close() }

// BindLocked is Bind for `ferry serve --lock`: it serves only the mixin
// versions and binaries of locked, checked against their digests (see
// LockedStore); log receives a line for each refusal.
func (m *MirrorHandler) BindLocked(registry http.Handler, locked []Locked, log func(format string, args ...any)) error {
	reg, err := remote.NewRegistry("ferry.local")
	if err != nil {
		return err
	}
	reg.PlainHTTP = true
	reg.Client = &http.Client{Transport: formatrepo.HandlerTransport(registry)}
	var h http.Handler = NewHandler(&LockedStore{Store: &RegistryStore{Registry: reg, AnyPrefix: true}, Locked: locked, Log: log})
	m.h.Store(&h)
	return nil
}
