package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
	"github.com/ferryhq/ferry/internal/clitest"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/kudo"
	"github.com/ferryhq/ferry/lock"
)

// kudoCommunity is the KUDO community repository, the default of
// `kubectl kudo install` and of ferry's kudo.repositories.
const kudoCommunity = "https://kudo-repository.storage.googleapis.com/v1"

// realworldKudoDir holds kudobuilder/operators packages, unchanged
// (testdata/realworld/README.md).
var realworldKudoDir = filepath.Join("..", "..", "testdata", "realworld", "kudo")

// realworldKudoTarball packs a vendored package folder as `kubectl kudo
// package create` does (pkg/kudoctl/packages/writer/writer_tar.go: the
// files at the tarball's root, operator.yaml, params.yaml, templates/),
// in name order.
func realworldKudoTarball(t *testing.T, dir string) []byte {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// realworldKudoOperators are the roots locked (operators: entries of the
// community repository), with what KUDO gives for each: the version
// `kubectl kudo install NAME [--operator-version V]` installs (the first
// index entry, newest appVersion then operatorVersion first, matching the
// versions asked: pkg/kudoctl/util/repo/index.go FindFirstMatch) and the
// images its templates deploy with params.yaml's defaults passed as KUDO
// passes them (strings; kudo/images.go cites the rules), Docker-normalised.
var realworldKudoOperators = []struct {
	name, operatorVersion, version string
	images                         []string
}{
	{"cassandra", "", "3.11.6_1.0.1", []string{"docker.io/bitnami/kubectl:1.18.4", "docker.io/mesosphere/cassandra:3.11.6-1.0.1", "docker.io/mesosphere/kudo-cassandra-recovery:0.0.2-1.0.1"}},
	{"confluent-rest-proxy", "", "5.3.2_0.3.0", []string{"docker.io/confluentinc/cp-kafka-rest:5.3.2"}},
	{"confluent-schema-registry", "", "5.3.2_0.3.0", []string{"docker.io/confluentinc/cp-schema-registry:5.3.2"}},
	{"cowsay", "", "0.2.0", []string{"docker.io/library/busybox:latest", "docker.io/library/nginx:1.7.9"}},
	{"elastic", "", "7.0.0_0.2.2", []string{"docker.io/library/busybox:latest", "docker.io/library/elasticsearch:7.0.0"}},
	{"first-operator", "", "0.2.0", []string{"docker.io/library/nginx:1.7.9"}},
	{"flink", "", "1.7.2_0.2.1", []string{"docker.io/kudobuilder/flink:1.7.2"}},
	// The repository has kafka 2.5.1_1.3.2 and 2.5.0_1.3.1: the newest.
	{"kafka", "", "2.5.1_1.3.2", []string{"docker.io/library/busybox:1.31.1", "docker.io/mesosphere/cruise-control:2.0.77-1.3.0", "docker.io/mesosphere/kafka:2.5.1-1.3.1", "docker.io/mesosphere/kafka:workload", "docker.io/shubhanilbag/kafka:2.4.0-1.3.0", "quay.io/prometheus/node-exporter:v0.18.1"}},
	{"mysql", "", "5.7_0.3.0", []string{"docker.io/library/mysql:5.7"}},
	{"rabbitmq", "", "3.8.0_0.1.1", []string{"docker.io/library/rabbitmq:3.8"}},
	{"redis", "", "5.0.1_0.2.0", []string{"docker.io/library/redis:5.0.1-alpine"}},
	{"spark", "", "3.0.0_1.1.0", []string{"docker.io/mesosphere/kudo-spark-operator:3.0.0-1.1.0"}},
	// zookeeper 3.6.2_0.3.3 and 3.4.14_0.3.1: the newest, and with
	// --operator-version 0.3.1 that one.
	{"zookeeper", "", "3.6.2_0.3.3", []string{"docker.io/library/zookeeper:3.6.2"}},
	{"zookeeper", "0.3.1", "3.4.14_0.3.1", []string{"docker.io/library/zookeeper:3.4.14"}},
	// The financial-fraud demo pins kafka 2.5.0_1.3.1, zookeeper
	// 3.4.14_0.3.1 and flink 1.7.2_0.2.1 in its KudoOperator tasks.
	{"flink-demo", "", "0.1.6", []string{"docker.io/dcoslabs/flink-demo-actor:0.3", "docker.io/library/bash:latest", "docker.io/mesosphere/flink-generator:0.1"}},
	{"kafka", "1.3.1", "2.5.0_1.3.1", []string{"docker.io/library/busybox:1.31.1", "docker.io/mesosphere/cruise-control:2.0.77-1.3.0", "docker.io/mesosphere/kafka:2.5.0-1.3.0", "docker.io/mesosphere/kafka:workload", "docker.io/shubhanilbag/kafka:2.4.0-1.3.0", "quay.io/prometheus/node-exporter:v0.18.1"}},
}

// TestRealworldKudoLockOffline publishes every vendored kudobuilder/operators
// package, unedited, as the KUDO community repository would serve it, on
// a loopback server reached only through ferry.yaml `mirrors:` (its
// index.yaml as `kubectl kudo repo index --url` wrote it for the
// community repository, with absolute URLs there, copied unchanged: the
// tarballs are read at the mirror), and every image its templates deploy at its Docker Hub
// or Quay name's place in a loopback registry; `ferry lock --offline`
// reads nothing else. The lock names the community repository and
// docker.io/quay.io, never the mirrors; each operator is locked at the
// version KUDO installs, as the artifact of the repository's tarball,
// with the images KUDO's parameter rules give; the financial-fraud demo
// brings its pinned kafka, zookeeper and flink, and `ferry resolve -o
// plan` orders and names their instances as KEP-29 does (the deploy
// plan's order, zookeeper first; instanceName under the parent).
func TestRealworldKudoLockOffline(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(realworldKudoDir)
	if err != nil {
		t.Fatal(err)
	}
	srv := indexrepotest.New(t)
	mirrorURL := srv.URL + "/v1"
	idx := kudo.IndexFile{APIVersion: "v1", Entries: map[string][]*kudo.IndexVersion{}}
	tarballs := map[string][]byte{} // by NAME:VERSION
	for _, e := range ents {
		data := realworldKudoTarball(t, filepath.Join(realworldKudoDir, e.Name()))
		p, err := kudo.LoadArchive(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		o := p.Operator
		file := o.Name + "-" + p.Version() + ".tgz"
		srv.Put("/v1/"+file, data)
		tarballs[o.Name+":"+p.Version()] = data
		sum := sha256.Sum256(data)
		idx.Entries[o.Name] = append(idx.Entries[o.Name], &kudo.IndexVersion{Name: o.Name, AppVersion: o.AppVersion, OperatorVersion: o.OperatorVersion, URLs: []string{kudoCommunity + "/" + file}, Digest: hex.EncodeToString(sum[:])})
	}
	ib, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	srv.Put("/v1/index.yaml", ib)

	// Every image, at its public name's place in the mirror.
	mir := registrytest.New(t)
	c := registrytest.Client(t)
	hostPath := map[string]string{"docker.io": "dockerhub", "quay.io": "quay"}
	var wantImages, wantOps []string
	for _, o := range realworldKudoOperators {
		wantImages = append(wantImages, o.images...)
		wantOps = append(wantOps, o.name+":"+o.version)
	}
	// flink-demo's pins that no root asks.
	wantOps = append(wantOps, "flink:1.7.2_0.2.1", "zookeeper:3.4.14_0.3.1")
	slices.Sort(wantImages)
	wantImages = slices.Compact(wantImages)
	slices.Sort(wantOps)
	wantOps = slices.Compact(wantOps)
	pushMirroredImages(t, c, mir.Host, hostPath, wantImages, "kudo-realworld")

	env := clitest.New(t)
	var y strings.Builder
	y.WriteString("apiVersion: ferry.dev/v1alpha1\nkind: MirrorSet\noperators:\n")
	for _, o := range realworldKudoOperators {
		fmt.Fprintf(&y, "  - package: %s\n", o.name)
		if o.operatorVersion != "" {
			fmt.Fprintf(&y, "    operatorVersion: %q\n", o.operatorVersion)
		}
	}
	fmt.Fprintf(&y, "mirrors:\n  %q: %s\n", kudoCommunity, mirrorURL)
	for host, p := range hostPath {
		fmt.Fprintf(&y, "  %s: %s/%s\n", host, mir.Host, p)
	}
	env.WriteFile("ferry.yaml", y.String())
	r := env.MustRun("lock", "--offline")
	l, err := lock.Read(env.Path("ferry.lock"))
	if err != nil {
		t.Fatal(err)
	}
	var gotOps, gotImages []string
	for _, p := range l.Packages {
		if strings.Contains(p.Source, "127.0.0.1") {
			t.Errorf("the lock names the mirror %s, not the public source", p.Source)
		}
		switch p.Kind {
		case "kudo.operator":
			name, ok := strings.CutPrefix(p.Source, kudo.SourcePrefix+kudoCommunity+"/")
			if !ok {
				t.Errorf("lock: operator source %s is not the community repository's", p.Source)
				continue
			}
			gotOps = append(gotOps, name+":"+p.Version)
			// The artifact of the repository's exact tarball, as read from
			// the repository itself: the mirror is not part of it.
			data := tarballs[name+":"+p.Version]
			pk, err := kudo.LoadArchive(data)
			if err != nil {
				t.Fatalf("lock: %s:%s is no vendored package", name, p.Version)
			}
			_, desc, err := kudo.Artifact(data, kudo.Config{Name: name, AppVersion: pk.Operator.AppVersion, OperatorVersion: pk.Operator.OperatorVersion, Repository: kudoCommunity})
			if err != nil {
				t.Fatal(err)
			}
			if p.Digest != desc.Digest.String() {
				t.Errorf("lock: %s:%s is %s, want the community repository's artifact %s", name, p.Version, p.Digest, desc.Digest)
			}
		case "image":
			for _, tag := range append([]string{p.Version}, p.Tags...) {
				gotImages = append(gotImages, p.Source+":"+tag)
			}
		default:
			t.Errorf("lock: %s of kind %s", p.Source, p.Kind)
		}
	}
	slices.Sort(gotOps)
	gotOps = slices.Compact(gotOps)
	slices.Sort(gotImages)
	if !slices.Equal(gotOps, wantOps) {
		t.Errorf("operators locked:\n  %s\nwant (KUDO's picks):\n  %s\nstderr:\n%s", strings.Join(gotOps, "\n  "), strings.Join(wantOps, "\n  "), r.Stderr)
	}
	if !slices.Equal(gotImages, wantImages) {
		t.Errorf("images locked:\n  %s\nwant (KUDO's parameter rules):\n  %s", strings.Join(gotImages, "\n  "), strings.Join(wantImages, "\n  "))
	}

	// KEP-29's plan for the demo: its deploy plan's order (zookeeper,
	// kafka, then flink), each instance its task's instanceName under
	// the parent, the parent last.
	plan := env.MustRun("resolve", "--offline", "-o", "plan").Stdout
	var demo []string
	line := regexp.MustCompile(`^\d+\. kudo\.operator ` + regexp.QuoteMeta(kudo.SourcePrefix+kudoCommunity+"/") + `(\S+)@sha256:[0-9a-f]{64} instance (flink-demo\S*)`)
	for _, s := range strings.Split(plan, "\n") {
		if m := line.FindStringSubmatch(s); m != nil {
			demo = append(demo, m[1]+" "+m[2])
		}
	}
	want := []string{"zookeeper:3.4.14_0.3.1 flink-demo.zk", "kafka:2.5.0_1.3.1 flink-demo.kafka", "flink:1.7.2_0.2.1 flink-demo.flink", "flink-demo:0.1.6 flink-demo"}
	if !slices.Equal(demo, want) {
		t.Errorf("flink-demo's plan:\n  %s\nwant (KEP-29):\n  %s\nferry resolve -o plan:\n%s", strings.Join(demo, "\n  "), strings.Join(want, "\n  "), plan)
	}
}
