package mixin

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferryhq/ferry/exitcode"
)

const realworldFeed = "../testdata/realworld/porter/mixins-atom.xml"

func TestParseFeedRealworld(t *testing.T) {
	f, err := os.Open(realworldFeed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	feed, err := ParseFeed(f, "https://cdn.porter.sh/mixins/atom.xml")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(feed.Mixins, " "); got != "exec helm" {
		t.Errorf("Mixins = %q", got)
	}
	if got := strings.Join(feed.Names(), " "); got != "exec helm" {
		t.Errorf("Names = %q", got)
	}
	if want := time.Date(2013, 2, 10, 0, 0, 0, 0, time.UTC); !feed.Updated.Equal(want) {
		t.Errorf("Updated = %v", feed.Updated)
	}
	if len(feed.Warnings) != 0 {
		t.Errorf("Warnings = %q", feed.Warnings)
	}
	tests := []struct {
		mixin, version string
		updated        string
		files          []string
	}{
		{"exec", "canary", "2013-02-10T00:00:00Z", []string{"exec-darwin-amd64", "exec-linux-amd64", "exec-windows-amd64.exe"}},
		{"exec", "v1.2.3", "2013-02-02T00:00:00Z", []string{"exec-darwin-amd64", "exec-linux-amd64", "exec-windows-amd64.exe"}},
		{"helm", "v1.2.4", "2013-02-04T00:00:00Z", []string{"helm-darwin-amd64", "helm-linux-amd64", "helm-windows-amd64.exe"}},
		{"helm", "v1.2.3", "2013-02-03T00:00:00Z", []string{"helm-darwin-amd64", "helm-darwin-arm64", "helm-linux-amd64", "helm-linux-arm64", "helm-windows-amd64.exe", "helm-windows-arm64.exe"}},
	}
	for _, tt := range tests {
		t.Run(tt.mixin+"@"+tt.version, func(t *testing.T) {
			v, ok := feed.Lookup(tt.mixin, tt.version)
			if !ok {
				t.Fatalf("no %s %s", tt.mixin, tt.version)
			}
			if got := v.Updated.Format(time.RFC3339); got != tt.updated {
				t.Errorf("Updated = %s, want %s", got, tt.updated)
			}
			var names []string
			for _, f := range v.Files {
				names = append(names, f.Name)
				if want := "https://cdn.porter.sh/mixins/" + tt.version + "/" + f.Name; f.URL != want {
					t.Errorf("URL = %s, want %s", f.URL, want)
				}
			}
			if got, want := strings.Join(names, " "), strings.Join(tt.files, " "); got != want {
				t.Errorf("files = %q, want %q", got, want)
			}
		})
	}
	if v, _ := feed.Lookup("helm", "v1.2.3"); true {
		f, ok := v.File("windows", "arm64")
		if !ok || f.OS != "windows" || f.Arch != "arm64" || f.Name != "helm-windows-arm64.exe" {
			t.Errorf("File(windows, arm64) = %+v, %v", f, ok)
		}
	}
	var versions []string
	for _, v := range feed.Versions("exec") {
		versions = append(versions, v.Version)
	}
	if got := strings.Join(versions, " "); got != "v1.2.3 canary" {
		t.Errorf("Versions(exec) = %q", got)
	}
}

func entry(name, version, updated string, links ...string) string {
	var b strings.Builder
	b.WriteString("<entry><id>" + name + "/" + version + "</id>")
	if updated != "" {
		b.WriteString("<updated>" + updated + "</updated>")
	}
	if name != "" {
		b.WriteString(`<category term="` + name + `"/><category term="other"/>`)
	}
	b.WriteString("<content>" + version + "</content>")
	for _, l := range links {
		b.WriteString(`<link rel="download" href="` + l + `"/>`)
	}
	b.WriteString(`<link rel="alternate" href="https://example.com/page"/></entry>`)
	return b.String()
}

func feedXML(entries ...string) string {
	return `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><category term="exec"/>` + strings.Join(entries, "") + `</feed>`
}

func TestParseFeed(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		wantErr  string
		check    string // "NAME VERSION" expected to exist
		wantURL  string // URL of its first file
		warnings int
	}{
		{
			name: "duplicate version: newer updated wins",
			doc: feedXML(
				entry("exec", "v1.0.0", "2020-01-01T00:00:00Z", "https://a.example/old/exec-linux-amd64"),
				entry("exec", "v1.0.0", "2021-01-01T00:00:00Z", "https://a.example/new/exec-linux-amd64"),
				entry("exec", "v1.0.0", "2020-06-01T00:00:00Z", "https://a.example/mid/exec-linux-amd64"),
			),
			check: "exec v1.0.0", wantURL: "https://a.example/new/exec-linux-amd64",
		},
		{
			name:  "relative link resolved against the feed",
			doc:   feedXML(entry("exec", "v1.0.0", "2020-01-01T00:00:00Z", "v1.0.0/exec-linux-amd64")),
			check: "exec v1.0.0", wantURL: "https://feed.example/mixins/v1.0.0/exec-linux-amd64",
		},
		{
			name: "entries without name, version or RFC3339 updated are skipped",
			doc: feedXML(
				entry("", "v1.0.0", "2020-01-01T00:00:00Z", "https://a.example/exec-linux-amd64"),
				entry("exec", "", "2020-01-01T00:00:00Z", "https://a.example/exec-linux-amd64"),
				entry("exec", "v2.0.0", "yesterday", "https://a.example/exec-linux-amd64"),
				entry("exec", "v1.0.0", "2020-01-01T00:00:00Z", "https://a.example/exec-linux-amd64", "https://a.example/README.md", "https://a.example/helm-linux-amd64"),
			),
			check: "exec v1.0.0", wantURL: "https://a.example/exec-linux-amd64", warnings: 5,
		},
		{
			name:  "links with credentials are skipped, never quoted",
			doc:   feedXML(entry("exec", "v1.0.0", "2020-01-01T00:00:00Z", "https://u:link-s3cret@a.example/exec-linux-arm64", "https://a.example/exec-linux-amd64")),
			check: "exec v1.0.0", wantURL: "https://a.example/exec-linux-amd64", warnings: 1,
		},
		{name: "truncated XML", doc: `<feed xmlns="http://www.w3.org/2005/Atom"><entry><category term="exec">`, wantErr: "not an Atom feed"},
		{name: "HTML page", doc: `<html><body>oops</body></html>`, wantErr: "not an Atom feed"},
		{name: "empty body", doc: ``, wantErr: "not an Atom feed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := ParseFeed(strings.NewReader(tt.doc), "https://feed.example/mixins/atom.xml")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			name, version, _ := strings.Cut(tt.check, " ")
			v, ok := f.Lookup(name, version)
			if !ok {
				t.Fatalf("no %s", tt.check)
			}
			if len(v.Files) == 0 || v.Files[0].URL != tt.wantURL {
				t.Errorf("files = %+v, want first %s", v.Files, tt.wantURL)
			}
			if len(v.Files) > 0 && strings.Contains(fmt.Sprint(v.Files, f.Warnings), "s3cret") {
				t.Errorf("a password survived parsing: %v %q", v.Files, f.Warnings)
			}
			if len(f.Warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", f.Warnings, tt.warnings)
			}
		})
	}
}

func TestLoadFeed(t *testing.T) {
	doc, err := os.ReadFile(realworldFeed)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mixins/atom.xml" {
			http.NotFound(w, r)
			return
		}
		w.Write(doc)
	}))
	defer srv.Close()
	abs, err := filepath.Abs(realworldFeed)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		url      string
		allow    func(string) bool
		wantErr  string
		wantCode int
	}{
		{name: "http loopback", url: srv.URL + "/mixins/atom.xml"},
		{name: "file", url: "file://" + filepath.ToSlash(abs)},
		{name: "http not found", url: srv.URL + "/nope.xml", wantErr: "404", wantCode: exitcode.Failure},
		{name: "plain http to a remote host refused", url: "http://feed.invalid/mixins/atom.xml", wantErr: "refusing plain HTTP", wantCode: exitcode.Usage},
		{name: "plain http allowed but unreachable", url: "http://feed.invalid/mixins/atom.xml", allow: func(h string) bool { return h == "feed.invalid" }, wantErr: "GET http://feed.invalid", wantCode: exitcode.Failure},
		{name: "unsupported scheme", url: "ftp://feed.example/atom.xml", wantErr: "unsupported scheme", wantCode: exitcode.Usage},
		{name: "missing file", url: "file:///nonexistent/atom.xml", wantErr: "no such file", wantCode: exitcode.Failure},
		{name: "credentials refused", url: "https://carl:feed-s3cret@127.0.0.1:1/atom.xml", wantErr: "credentials in feed URLs", wantCode: exitcode.Usage},
		{name: "credentials in an unparsable URL refused", url: "https://carl:feed-s3cret@127.0.0.1:bad/atom.xml", wantErr: "credentials in feed URLs", wantCode: exitcode.Usage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := LoadFeed(context.Background(), srv.Client(), tt.url, tt.allow)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error quotes the password: %v", err)
				}
				if got := exitcode.Of(err); got != tt.wantCode {
					t.Errorf("exit code %d, want %d", got, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.URL != tt.url {
				t.Errorf("URL = %s", f.URL)
			}
			if _, ok := f.Lookup("exec", "v1.2.3"); !ok {
				t.Error("exec v1.2.3 missing")
			}
		})
	}
}
