package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	upconfig "github.com/distribution/distribution/v3/configuration"
	uphandlers "github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem" // upstream's "filesystem" driver
	"github.com/opencontainers/go-digest"
	"go.yaml.in/yaml/v2"

	"github.com/ferryhq/ferry/internal/forked/distribution/configuration"
	forkhandlers "github.com/ferryhq/ferry/internal/forked/distribution/registry/handlers"
)

// ferry serve runs its copy of CNCF distribution (internal/forked/distribution).
// The tests here hold that copy to the real upstream module: the same
// configuration, and the same HTTP answers, byte for byte where they are
// not random.

// toUpstream converts the copy's configuration into the real upstream's,
// field by field. It fails when a struct's fields (names or tags) differ,
// so a drift of the copied configuration package shows here.
func toUpstream(cfg *configuration.Configuration) (*upconfig.Configuration, error) {
	var u upconfig.Configuration
	if err := convert(reflect.ValueOf(&u).Elem(), reflect.ValueOf(cfg).Elem(), "Configuration"); err != nil {
		return nil, err
	}
	return &u, nil
}

// convert copies src into dst, two values of identically shaped types.
func convert(dst, src reflect.Value, path string) error {
	switch src.Kind() {
	case reflect.Struct:
		if dst.Kind() != reflect.Struct || dst.NumField() != src.NumField() {
			return fmt.Errorf("%s: %s and %s differ", path, src.Type(), dst.Type())
		}
		for i := range src.NumField() {
			sf, df := src.Type().Field(i), dst.Type().Field(i)
			if sf.Name != df.Name || sf.Tag != df.Tag {
				return fmt.Errorf("%s: field %s %q against upstream's %s %q", path, sf.Name, sf.Tag, df.Name, df.Tag)
			}
			if err := convert(dst.Field(i), src.Field(i), path+"."+sf.Name); err != nil {
				return err
			}
		}
	case reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dst.Type().Elem()))
			return convert(dst.Elem(), src.Elem(), path)
		}
	case reflect.Map:
		if src.IsNil() {
			return nil
		}
		dst.Set(reflect.MakeMapWithSize(dst.Type(), src.Len()))
		for it := src.MapRange(); it.Next(); {
			k := reflect.New(dst.Type().Key()).Elem()
			v := reflect.New(dst.Type().Elem()).Elem()
			if err := convert(k, it.Key(), path); err != nil {
				return err
			}
			if err := convert(v, it.Value(), fmt.Sprintf("%s[%v]", path, it.Key())); err != nil {
				return err
			}
			dst.SetMapIndex(k, v)
		}
	case reflect.Slice:
		if src.IsNil() {
			return nil
		}
		dst.Set(reflect.MakeSlice(dst.Type(), src.Len(), src.Len()))
		for i := range src.Len() {
			if err := convert(dst.Index(i), src.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Interface:
		if !src.IsNil() {
			dst.Set(src.Elem())
		}
	default:
		if src.Kind() != dst.Kind() || !src.Type().ConvertibleTo(dst.Type()) {
			return fmt.Errorf("%s: %s does not convert to %s", path, src.Type(), dst.Type())
		}
		dst.Set(src.Convert(dst.Type()))
	}
	return nil
}

// upstreamApp builds the real upstream distribution handlers from the
// configuration ferry serve gives its copy: put in newApp, Start serves
// ferry serve around upstream's registry.
func upstreamApp(ctx context.Context, opts Options) (registryApp, error) {
	cfg, err := configure(opts)
	if err != nil {
		return nil, err
	}
	ucfg, err := toUpstream(cfg)
	if err != nil {
		return nil, err
	}
	var app *uphandlers.App
	var perr error
	func() {
		defer func() {
			if r := recover(); r != nil {
				perr = fmt.Errorf("upstream registry: %v", r)
			}
		}()
		app = uphandlers.NewApp(ctx, ucfg)
	}()
	return app, perr
}

// startBoth starts ferry serve with its copy of distribution and, with
// opts' settings, ferry serve around the real upstream handlers.
func startBoth(t *testing.T, opts Options) (fork, upstream *Server) {
	t.Helper()
	fork, _ = startWith(t, newApp, opts)
	upstream, _ = startWith(t, upstreamApp, opts)
	return fork, upstream
}

// TestConfigurationMatchesUpstream pins the copied configuration package to
// upstream's: ferry serve's configuration converts field by field and
// marshals to the same YAML.
func TestConfigurationMatchesUpstream(t *testing.T) {
	for _, opts := range []Options{
		{Root: "/srv/r"},
		{Root: "/srv/r", ReadOnly: true},
		{Root: "/srv/r", TokenAuth: &TokenAuth{Realm: "https://auth.example/token", Service: "reg", Issuer: "iss", RootCertBundle: "/srv/certs.pem"}},
	} {
		cfg, err := configure(opts)
		if err != nil {
			t.Fatal(err)
		}
		u, err := toUpstream(cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		want, err := yaml.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("ferry's copy marshals\n%s\nupstream marshals\n%s", got, want)
		}
	}
}

// TestCopyRefusesWhatItLacks pins the patches of the copy's
// registry/handlers: a configuration that asks for redis, the redis blob
// descriptor cache, the pull-through proxy or Prometheus metrics is refused
// with an error naming it, where upstream would use code the copy does not
// link. ferry serve's own configuration asks for none of them.
func TestCopyRefusesWhatItLacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(*configuration.Configuration)
		want string
	}{
		{"redis", func(c *configuration.Configuration) { c.Redis.Options.Addrs = []string{"127.0.0.1:6379"} }, "redis is configured (redis.addrs), but redis is not built into ferry's registry"},
		{"redis cache", func(c *configuration.Configuration) {
			c.Storage["cache"] = configuration.Parameters{"blobdescriptor": "redis"}
		}, "redis configuration required to use for layerinfo cache: the redis blob descriptor cache is not built into ferry's registry"},
		{"proxy", func(c *configuration.Configuration) { c.Proxy.RemoteURL = "https://registry-1.docker.io" }, "proxy.remoteurl is set, but the pull-through cache is not built into ferry's registry"},
		{"prometheus", func(c *configuration.Configuration) { c.HTTP.Debug.Prometheus.Enabled = true }, "http.debug.prometheus is enabled, but Prometheus metrics are not built into ferry's registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := configure(Options{Root: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Redis.Options.Addrs != nil || cfg.Proxy.RemoteURL != "" || cfg.HTTP.Debug.Prometheus.Enabled || cfg.Storage["cache"] != nil {
				t.Fatal("ferry serve's configuration asks for what its copy of distribution lacks")
			}
			tc.set(cfg)
			got := func() (msg string) {
				defer func() { msg = fmt.Sprint(recover()) }()
				app := newForkApp(cfg)
				_ = app.Shutdown()
				return ""
			}()
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// exchange is one request of the parity sequence and its normalised answer.
type exchange struct {
	Step   string
	Status int
	Header map[string]string
	Body   string
}

// paritySession drives one registry through the parity sequence.
type paritySession struct {
	t    *testing.T
	base string
	log  []exchange
}

// comparedHeaders are the answer headers the parity test holds equal.
var comparedHeaders = []string{
	"Content-Type", "Content-Length", "Content-Range", "Range", "Location", "Link",
	"Docker-Content-Digest", "Docker-Upload-Uuid", "Docker-Distribution-Api-Version",
	"Oci-Subject", "Oci-Filters-Applied", "Accept-Ranges", "Etag", "Www-Authenticate",
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// normalise hides what differs between two registries by chance: their
// address, upload UUIDs and the signed upload state.
func (s *paritySession) normalise(v string) string {
	v = strings.ReplaceAll(v, s.base, "BASE")
	v = uuidRE.ReplaceAllString(v, "UUID")
	if i := strings.Index(v, "_state="); i >= 0 {
		end := strings.IndexByte(v[i:], '&')
		if end < 0 {
			v = v[:i] + "_state=STATE"
		} else {
			v = v[:i] + "_state=STATE" + v[i+end:]
		}
	}
	return v
}

// do sends one request (path relative to the registry, or an absolute
// Location it answered), records the answer and returns it with its body.
func (s *paritySession) do(step, method, path string, hdr map[string]string, body []byte) (*http.Response, []byte) {
	s.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = s.base + path
	}
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if body == nil {
		req.Body = http.NoBody
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	e := exchange{Step: step, Status: resp.StatusCode, Header: map[string]string{}, Body: s.normalise(string(b))}
	for _, h := range comparedHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			e.Header[h] = s.normalise(strings.Join(v, ", "))
		}
	}
	s.log = append(s.log, e)
	return resp, b
}

// location resolves a Location header against the registry.
func (s *paritySession) location(resp *http.Response) string {
	s.t.Helper()
	loc, err := resp.Location()
	if err != nil {
		s.t.Fatalf("no Location: %v", err)
	}
	return loc.String()
}

func withQuery(loc string, kv ...string) string {
	u, _ := url.Parse(loc)
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}

const ociManifest = "application/vnd.oci.image.manifest.v1+json"

// paritySequence pushes, mounts, tags, lists, refers to and deletes
// content, and asks for what is not there, in one repository layout.
func paritySequence(s *paritySession) {
	layer1 := bytes.Repeat([]byte("ferry parity layer one\n"), 300)
	layer2 := bytes.Repeat([]byte("ferry parity layer two, pushed in chunks\n"), 500)
	config := []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}`)
	d1, d2, dc := digest.FromBytes(layer1), digest.FromBytes(layer2), digest.FromBytes(config)
	octet := map[string]string{"Content-Type": "application/octet-stream"}

	s.do("base", "GET", "/v2/", nil, nil)
	s.do("head unknown blob", "HEAD", "/v2/parity/a/blobs/"+d1.String(), nil, nil)
	s.do("get unknown blob", "GET", "/v2/parity/a/blobs/"+d1.String(), nil, nil)
	s.do("tags of unknown repository", "GET", "/v2/parity/nothing/tags/list", nil, nil)
	s.do("manifest of unknown repository", "GET", "/v2/parity/nothing/manifests/latest", nil, nil)

	// A POST with a digest and no body: a session (202), as a plain POST.
	// (With the blob as its body, the spec's single-request push, ferry
	// serve completes it where distribution opens a session:
	// TestSinglePostPush.)
	resp, _ := s.do("POST with a digest, no body", "POST", "/v2/parity/a/blobs/uploads/?digest="+d1.String(), nil, nil)
	s.do("cancel that upload", "DELETE", s.location(resp), nil, nil)

	// Monolithic push (POST, then one PUT with the whole blob), and the
	// config the same way.
	for _, b := range []struct {
		name string
		data []byte
		d    digest.Digest
	}{{"layer", layer1, d1}, {"config", config, dc}} {
		resp, _ := s.do("start monolithic push of the "+b.name, "POST", "/v2/parity/a/blobs/uploads/", nil, nil)
		s.do("monolithic push of the "+b.name, "PUT", withQuery(s.location(resp), "digest", b.d.String()), octet, b.data)
	}

	// Chunked push: POST, two PATCHes, a status GET, then PUT.
	resp, _ = s.do("start chunked upload", "POST", "/v2/parity/a/blobs/uploads/", nil, nil)
	loc := s.location(resp)
	half := len(layer2) / 2
	resp, _ = s.do("first chunk", "PATCH", loc, map[string]string{"Content-Type": "application/octet-stream", "Content-Range": fmt.Sprintf("0-%d", half-1)}, layer2[:half])
	loc = s.location(resp)
	resp, _ = s.do("upload status", "GET", loc, nil, nil)
	loc = s.location(resp)
	resp, _ = s.do("second chunk", "PATCH", loc, map[string]string{"Content-Type": "application/octet-stream", "Content-Range": fmt.Sprintf("%d-%d", half, len(layer2)-1)}, layer2[half:])
	loc = s.location(resp)
	s.do("finish chunked upload", "PUT", withQuery(loc, "digest", d2.String()), nil, nil)

	// A digest that does not match what was sent.
	resp, _ = s.do("start upload for a wrong digest", "POST", "/v2/parity/a/blobs/uploads/", nil, nil)
	s.do("put with a wrong digest", "PUT", withQuery(s.location(resp), "digest", d1.String()), octet, []byte("not layer one"))
	s.do("invalid digest", "GET", "/v2/parity/a/blobs/sha256:0123", nil, nil)

	s.do("head blob", "HEAD", "/v2/parity/a/blobs/"+d2.String(), nil, nil)
	s.do("get blob", "GET", "/v2/parity/a/blobs/"+d2.String(), nil, nil)
	s.do("get blob range", "GET", "/v2/parity/a/blobs/"+d2.String(), map[string]string{"Range": "bytes=10-99"}, nil)

	// Cross-repository mount, of a blob that exists and of one that does not.
	s.do("mount", "POST", "/v2/parity/b/blobs/uploads/?mount="+d1.String()+"&from=parity/a", nil, nil)
	s.do("mount of an unknown blob", "POST", "/v2/parity/b/blobs/uploads/?mount="+digest.FromString("nothing").String()+"&from=parity/a", nil, nil)
	s.do("mounted blob", "HEAD", "/v2/parity/b/blobs/"+d1.String(), nil, nil)

	manifest := fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":%q,"size":%d},{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":%q,"size":%d}]}`,
		ociManifest, dc, len(config), d1, len(layer1), d2, len(layer2))
	dm := digest.FromBytes(manifest)
	mt := map[string]string{"Content-Type": ociManifest}
	accept := map[string]string{"Accept": ociManifest}
	s.do("put manifest by tag", "PUT", "/v2/parity/a/manifests/v1", mt, manifest)
	s.do("put manifest by digest", "PUT", "/v2/parity/a/manifests/"+dm.String(), mt, manifest)
	for _, tag := range []string{"v2", "v3", "v4"} {
		s.do("tag "+tag, "PUT", "/v2/parity/a/manifests/"+tag, mt, manifest)
	}
	s.do("get manifest by tag", "GET", "/v2/parity/a/manifests/v1", accept, nil)
	s.do("get manifest by digest", "GET", "/v2/parity/a/manifests/"+dm.String(), accept, nil)
	s.do("head manifest by tag", "HEAD", "/v2/parity/a/manifests/v1", accept, nil)
	s.do("head manifest by digest", "HEAD", "/v2/parity/a/manifests/"+dm.String(), accept, nil)
	s.do("unknown tag", "GET", "/v2/parity/a/manifests/v9", accept, nil)
	s.do("unknown manifest digest", "GET", "/v2/parity/a/manifests/"+digest.FromString("none").String(), accept, nil)

	s.do("tag list", "GET", "/v2/parity/a/tags/list", nil, nil)
	s.do("tag list n=2", "GET", "/v2/parity/a/tags/list?n=2", nil, nil)
	s.do("tag list n=2 last=v2", "GET", "/v2/parity/a/tags/list?n=2&last=v2", nil, nil)
	s.do("tag list n=0", "GET", "/v2/parity/a/tags/list?n=0", nil, nil)
	s.do("catalog", "GET", "/v2/_catalog", nil, nil)
	s.do("catalog n=1", "GET", "/v2/_catalog?n=1", nil, nil)

	// Invalid manifests.
	s.do("manifest that is not JSON", "PUT", "/v2/parity/a/manifests/bad", mt, []byte("{not json"))
	missing := digest.FromString("missing layer")
	bad := fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":%q,"size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":%q,"size":5}]}`,
		ociManifest, dc, len(config), missing)
	s.do("manifest naming an unknown blob", "PUT", "/v2/parity/a/manifests/bad", mt, bad)
	s.do("manifest whose digest is not the URL's", "PUT", "/v2/parity/a/manifests/"+digest.FromString("other").String(), mt, manifest)

	// Referrers: an artifact whose subject is the manifest.
	empty := []byte("{}")
	de := digest.FromBytes(empty)
	resp, _ = s.do("start push of the empty config", "POST", "/v2/parity/a/blobs/uploads/", nil, nil)
	s.do("push the empty config", "PUT", withQuery(s.location(resp), "digest", de.String()), octet, empty)
	artifact := fmt.Appendf(nil, `{"schemaVersion":2,"mediaType":%q,"artifactType":"application/vnd.example.sbom","config":{"mediaType":"application/vnd.oci.empty.v1+json","digest":%q,"size":2},"layers":[{"mediaType":"application/vnd.oci.empty.v1+json","digest":%q,"size":2}],"subject":{"mediaType":%q,"digest":%q,"size":%d},"annotations":{"org.example":"parity"}}`,
		ociManifest, de, de, ociManifest, dm, len(manifest))
	da := digest.FromBytes(artifact)
	s.do("put referrer", "PUT", "/v2/parity/a/manifests/"+da.String(), mt, artifact)
	s.do("referrers", "GET", "/v2/parity/a/referrers/"+dm.String(), nil, nil)
	s.do("referrers filtered", "GET", "/v2/parity/a/referrers/"+dm.String()+"?artifactType=application/vnd.example.sbom", nil, nil)
	s.do("referrers of nothing", "GET", "/v2/parity/a/referrers/"+digest.FromString("none").String(), nil, nil)

	// Deletes.
	s.do("delete tag", "DELETE", "/v2/parity/a/manifests/v4", nil, nil)
	s.do("delete manifest", "DELETE", "/v2/parity/a/manifests/"+dm.String(), nil, nil)
	s.do("deleted manifest", "GET", "/v2/parity/a/manifests/"+dm.String(), accept, nil)
	s.do("tag of a deleted manifest", "GET", "/v2/parity/a/manifests/v1", accept, nil)
	s.do("delete again", "DELETE", "/v2/parity/a/manifests/"+dm.String(), nil, nil)
	s.do("delete blob", "DELETE", "/v2/parity/a/blobs/"+d2.String(), nil, nil)
	s.do("deleted blob", "GET", "/v2/parity/a/blobs/"+d2.String(), nil, nil)
	s.do("delete unknown blob", "DELETE", "/v2/parity/a/blobs/"+d2.String(), nil, nil)
	s.do("tag list after deletes", "GET", "/v2/parity/a/tags/list", nil, nil)
}

// TestParityWithUpstream drives the same requests through ferry serve with
// its copy of distribution and through ferry serve around the real
// upstream handlers, and requires the same answers: status, the headers
// that matter and the body, up to the registry's address, upload UUIDs and
// signed upload state. It also checks that the sequence met the errors it
// means to (NAME_UNKNOWN, BLOB_UNKNOWN, MANIFEST_INVALID, ...).
func TestParityWithUpstream(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"ferry serve", Options{}},
		{"distribution only", Options{DistributionOnly: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fork, upstream := startBoth(t, tc.opts)
			fs := &paritySession{t: t, base: fork.URL()}
			us := &paritySession{t: t, base: upstream.URL()}
			paritySequence(fs)
			paritySequence(us)
			if len(fs.log) != len(us.log) {
				t.Fatalf("%d exchanges against upstream's %d", len(fs.log), len(us.log))
			}
			for i := range fs.log {
				if !reflect.DeepEqual(fs.log[i], us.log[i]) {
					f, _ := json.MarshalIndent(fs.log[i], "", "  ")
					u, _ := json.MarshalIndent(us.log[i], "", "  ")
					t.Errorf("%s: ferry's copy answers\n%s\nupstream answers\n%s", fs.log[i].Step, f, u)
				}
			}
			if os.Getenv("PARITY_DUMP") != "" {
				b, _ := json.MarshalIndent(fs.log, "", " ")
				t.Logf("%s", b)
			}
			codes := map[string]string{}
			for _, e := range fs.log {
				codes[e.Step] = fmt.Sprint(e.Status)
				if strings.HasPrefix(e.Body, `{"errors":`) {
					var body struct{ Errors []struct{ Code string } }
					if err := json.Unmarshal([]byte(e.Body), &body); err == nil && len(body.Errors) > 0 {
						codes[e.Step] += " " + body.Errors[0].Code
					}
				}
			}
			want := map[string]string{
				"base":                                   "200",
				"get unknown blob":                       "404 BLOB_UNKNOWN",
				"tags of unknown repository":             "404 NAME_UNKNOWN",
				"manifest of unknown repository":         "404 MANIFEST_UNKNOWN",
				"POST with a digest, no body":            "202",
				"monolithic push of the layer":           "201",
				"first chunk":                            "202",
				"upload status":                          "204",
				"finish chunked upload":                  "201",
				"put with a wrong digest":                "400 DIGEST_INVALID",
				"get blob range":                         "206",
				"mount":                                  "201",
				"mount of an unknown blob":               "202",
				"put manifest by tag":                    "201",
				"get manifest by digest":                 "200",
				"unknown tag":                            "404 MANIFEST_UNKNOWN",
				"tag list n=2 last=v2":                   "200",
				"manifest that is not JSON":              "400 MANIFEST_INVALID",
				"manifest naming an unknown blob":        "400 MANIFEST_BLOB_UNKNOWN",
				"manifest whose digest is not the URL's": "400 DIGEST_INVALID",
				"put referrer":                           "201",
				"delete manifest":                        "202",
				"deleted manifest":                       "404 MANIFEST_UNKNOWN",
				"deleted blob":                           "404 BLOB_UNKNOWN",
			}
			if tc.opts.DistributionOnly {
				want["referrers"] = "404"
			} else {
				want["referrers"] = "200"
			}
			for step, w := range want {
				if codes[step] != w {
					t.Errorf("%s: got %q, want %q", step, codes[step], w)
				}
			}
		})
	}
}

// newForkApp builds ferry's copy of the handlers from cfg.
func newForkApp(cfg *configuration.Configuration) registryApp {
	return forkhandlers.NewApp(context.Background(), cfg)
}
