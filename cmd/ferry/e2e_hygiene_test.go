package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"

	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

// marker is a password no message may show.
const marker = "s3cr3t-MARKER"

// TestE2ENoCredentialInMessages puts a password in every input a message
// may quote (a lock's source and mirror, a ferry.yaml root, mirror.to,
// replace and mixin feed, a ROOT argument, --to, --mirror, the mixin feed
// variable), runs each case through the binary, and greps stdout and
// stderr of every run for it.
func TestE2ENoCredentialInMessages(t *testing.T) {
	t.Parallel()
	src, cat := e2eSeed(t)
	h := src.Host
	stopped := registrytest.New(t)
	stopped.Stop()
	feed := mixintest.NewFeed(t, mixintest.Options{Platforms: []string{"linux/amd64"}})
	feed.Malformed(true)
	userinfo := "user:" + marker + "@"
	withCreds := func(url string) string { return strings.Replace(url, "://", "://"+userinfo, 1) }
	d := digest.FromString("app").String()
	lockWith := func(source, mirror string) string {
		l := &lock.Lock{APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: digest.FromString("inputs").String(), Roots: []string{source},
			Packages: []lock.Package{{Source: source, Version: "v1.0.0", Digest: d, MediaType: "application/vnd.oci.image.index.v1+json", Size: 10, Mirror: mirror}}}
		b, err := l.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	yaml := func(body string) string { return "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n" + body }
	cases := []struct {
		name string
		// files are written first (name → content).
		files map[string]string
		vars  []string
		runs  [][]string
	}{
		{
			name:  "lock source",
			files: map[string]string{"ferry.lock": lockWith(userinfo+stopped.Host+"/acme/app", stopped.Host+"/mirror/acme/app")},
			runs: [][]string{{"verify"}, {"verify", "--deep", "-o", "json"}, {"install", "--dest", "out"}, {"mirror", "--lock", "ferry.lock"},
				{"why", "app"}, {"diff", "ferry.lock", "ferry.lock"}, {"mirror", "--lock", "ferry.lock", "--to-archive", "x.tar"}},
		},
		{
			name:  "lock mirror",
			files: map[string]string{"ferry.lock": lockWith(stopped.Host+"/acme/app", userinfo+stopped.Host+"/mirror/acme/app")},
			runs:  [][]string{{"verify"}, {"verify", "-o", "json"}, {"install", "--dest", "out"}, {"--log-level", "debug", "verify"}},
		},
		{
			name:  "ferry.yaml root",
			files: map[string]string{"ferry.yaml": yaml("packages:\n  - ref: " + userinfo + cat.Diamond + "\n")},
			runs:  [][]string{{"lock"}, {"resolve"}, {"mirror", "--to", stopped.Host + "/m"}, {"verify"}, {"--log-level", "debug", "lock"}},
		},
		{
			name:  "ferry.yaml root as a URL",
			files: map[string]string{"ferry.yaml": yaml("packages:\n  - ref: https://" + userinfo + cat.Diamond + "\n")},
			runs:  [][]string{{"lock"}, {"resolve", "-o", "json"}},
		},
		{
			name:  "ferry.yaml mirror.to",
			files: map[string]string{"ferry.yaml": yaml("packages:\n  - ref: " + cat.Diamond + "\nmirror:\n  to: " + userinfo + stopped.Host + "/mirror\n")},
			runs:  [][]string{{"mirror"}, {"--log-level", "debug", "mirror"}},
		},
		{
			name:  "ferry.yaml replace",
			files: map[string]string{"ferry.yaml": yaml("packages:\n  - ref: " + cat.Diamond + "\nreplace:\n  - from: " + h + "/fixtures/diamond/db\n    to: " + userinfo + h + "/fixtures/diamond/db2\n")},
			runs:  [][]string{{"lock"}, {"resolve"}},
		},
		{
			name:  "ferry.yaml mixin feed",
			files: map[string]string{"ferry.yaml": yaml("mixins:\n  - name: exec\n    feed: " + withCreds(feed.URL) + "\n    version: \"1.x\"\n")},
			runs:  [][]string{{"lock"}, {"--log-level", "debug", "lock"}, {"mirror", "--to", stopped.Host + "/m"}},
		},
		{
			name:  "ferry.yaml mixin feed, unreachable",
			files: map[string]string{"ferry.yaml": yaml("mixins:\n  - name: exec\n    feed: https://" + userinfo + stopped.Host + "/atom.xml\n    version: \"1.x\"\n")},
			runs:  [][]string{{"lock"}},
		},
		{
			name:  "mixin feed variable",
			vars:  []string{mixin.FeedEnv + "=" + withCreds(feed.URL)},
			files: map[string]string{"ferry.yaml": yaml("packages:\n  - ref: " + cat.Mixins + "\n")},
			runs:  [][]string{{"lock", "--bundle-mixins"}, {"--log-level", "debug", "lock", "--bundle-mixins"}},
		},
		{
			name: "ROOT argument",
			runs: [][]string{{"resolve", userinfo + cat.Diamond}, {"lock", userinfo + cat.Diamond}, {"mirror", "--to", stopped.Host + "/m", userinfo + cat.Diamond},
				{"resolve", "https://" + userinfo + cat.Diamond}, {"resolve", userinfo + stopped.Host + "/acme/app:v1"}},
		},
		{
			name: "--to",
			runs: [][]string{{"mirror", "--to", userinfo + stopped.Host + "/mirror", cat.Diamond}, {"mirror", "--to", "https://" + userinfo + stopped.Host, cat.Diamond},
				{"mirror", "--to=" + userinfo + stopped.Host + "/m", cat.Diamond}},
		},
		{
			name:  "--mirror",
			files: map[string]string{"ferry.lock": lockWith(stopped.Host+"/acme/app", "")},
			runs:  [][]string{{"verify", "--mirror", userinfo + stopped.Host + "/m"}, {"install", "--dest", "out", "--mirror", userinfo + stopped.Host + "/m"}},
		},
		{
			name: "login",
			runs: [][]string{{"login", userinfo + stopped.Host, "-u", "user", "-p", marker}, {"logout", userinfo + stopped.Host}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := clitest.New(t)
			env.Vars = append(env.Vars, tc.vars...)
			for name, content := range tc.files {
				env.WriteFile(name, content)
			}
			for _, args := range tc.runs {
				r := env.Run(args...)
				if r.Code == 0 {
					t.Errorf("ferry %s succeeded; every case is a bad input", strings.Join(args, " "))
				}
				if strings.Contains(r.Stdout+r.Stderr, marker) {
					t.Errorf("ferry %s (exit %d) shows the password:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
				}
			}
		})
	}
}

// sparse writes a file of size bytes without holding them: a hole.
func sparse(t *testing.T, path string, head string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

// TestE2EHugeInputs: an input file just over its cap (ferry.yaml,
// porter.yaml, crossplane.yaml, ferry.lock) is refused from its size,
// before it is read, with exit 2 naming the file, its size and the cap.
func TestE2EHugeInputs(t *testing.T) {
	t.Parallel()
	over := func(max int64) int64 { return max + 1 }
	cases := []struct {
		file string
		head string
		size int64
		runs [][]string
	}{
		{"ferry.yaml", "apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\n", over(mirrorset.MaxFileSize), [][]string{{"lock"}, {"resolve"}, {"mirror", "--to", "127.0.0.1:1/m"}}},
		{"porter.yaml", "name: app\n", over(mirrorset.MaxFileSize), [][]string{{"lock", "porter.yaml"}, {"lock", "--porter-lock", "porter.yaml"}, {"resolve", "porter.yaml"}}},
		{"crossplane.yaml", "apiVersion: meta.pkg.crossplane.io/v1\n", over(mirrorset.MaxFileSize), [][]string{{"lock", "crossplane.yaml"}}},
		{"ferry.lock", "apiVersion: ferry.dev/v1alpha1\n", over(lock.MaxFileSize), [][]string{{"verify"}, {"install", "--dest", "out"}, {"mirror", "--lock", "ferry.lock"}, {"why", "x"}}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			env := clitest.New(t)
			sparse(t, env.Path(tc.file), tc.head, tc.size)
			for _, args := range tc.runs {
				want := []string{tc.file, fmt.Sprintf("(%d bytes)", tc.size), "larger than the 64.0 MiB"}
				env.Expect(2, args, want...)
			}
		})
	}
}
