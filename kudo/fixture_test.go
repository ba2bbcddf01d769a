package kudo

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ferryhq/ferry/indexrepo/indexrepotest"
)

// fixture is a KUDO package built by code.
type fixture struct {
	name, app, opv string
	tasks          []Task
	params         []Parameter
	templates      map[string]string
	// extra are more files by path (nested dependency folders).
	extra map[string]string
	// apiVersion overrides operator.yaml's.
	apiVersion string
	// rawOperator replaces operator.yaml.
	rawOperator string
}

// files returns the package's files by path, operator.yaml written with
// a deploy plan running every task in order, as KUDO's packages do.
func (f fixture) files(t *testing.T) map[string]string {
	t.Helper()
	op := OperatorFile{APIVersion: APIVersion, Name: f.name, AppVersion: f.app, OperatorVersion: f.opv, KUDOVersion: "0.17.0", Tasks: f.tasks}
	if f.apiVersion != "" {
		op.APIVersion = f.apiVersion
	}
	var steps []StepSpec
	for _, tk := range f.tasks {
		steps = append(steps, StepSpec{Name: tk.Name, Tasks: []string{tk.Name}})
	}
	for name := range f.templates {
		op.Tasks = append(op.Tasks, Task{Name: "apply-" + strings.TrimSuffix(name, ".yaml"), Kind: "Apply", Spec: TaskSpec{Resources: []string{name}}})
	}
	op.Plans = map[string]PlanSpec{"deploy": {Strategy: "serial", Phases: []PhaseSpec{{Name: "main", Strategy: "serial", Steps: steps}}}}
	ob, err := yaml.Marshal(op)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := yaml.Marshal(ParamsFile{APIVersion: APIVersion, Parameters: f.params})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{OperatorFileName: string(ob), ParamsFileName: string(pb)}
	if f.rawOperator != "" {
		out[OperatorFileName] = f.rawOperator
	}
	for n, s := range f.templates {
		out[TemplatesDir+"/"+n] = s
	}
	for n, s := range f.extra {
		out[n] = s
	}
	return out
}

// tgz writes files as KUDO's writer_tar.go TgzDir does: regular files
// only, at the archive's root, zero times, root owner; dotSlash prefixes
// "./" as `tar -C dir -czf x.tgz .` does (reader_tar.go reads both).
func tgz(t *testing.T, files map[string]string, dotSlash bool) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		name := n
		if dotSlash {
			name = "./" + n
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, Uname: "root", Gname: "root"}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
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

// writeDir writes files below dir.
func writeDir(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for n, s := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// repoServer is a KUDO repository on 127.0.0.1: index.yaml and
// tarballs, laid out as `kubectl kudo repo index` writes them.
type repoServer struct {
	srv *indexrepotest.Server
	URL string
	// tarballs are the tarballs served, by file name.
	tarballs map[string][]byte
}

func (r *repoServer) count(path string) int { return r.srv.Count(path) }

// newRepo serves pkgs; edit may change the index before it is written
// (a wrong digest).
func newRepo(t *testing.T, pkgs []fixture, edit func(idx *IndexFile)) *repoServer {
	t.Helper()
	srv := indexrepotest.New(t)
	r := &repoServer{srv: srv, URL: srv.URL + "/v1", tarballs: map[string][]byte{}}
	idx := &IndexFile{APIVersion: "v1", Entries: map[string][]*IndexVersion{}}
	for i, p := range pkgs {
		data := tgz(t, p.files(t), i%2 == 1)
		file := p.name + "-" + versionTag(p.app, p.opv) + ".tgz"
		srv.Put("/v1/"+file, data)
		r.tarballs[file] = data
		sum := sha256.Sum256(data)
		idx.Entries[p.name] = append(idx.Entries[p.name], &IndexVersion{
			Name: p.name, AppVersion: p.app, OperatorVersion: p.opv,
			URLs: []string{r.URL + "/" + file}, Digest: hex.EncodeToString(sum[:]),
		})
	}
	if edit != nil {
		edit(idx)
	}
	ib, err := yaml.Marshal(idx)
	if err != nil {
		t.Fatal(err)
	}
	srv.Put("/v1/index.yaml", ib)
	return r
}

// tarballOf returns the bytes the repository serves for name-version.
func (r *repoServer) tarballOf(name, tag string) []byte {
	return r.tarballs[name+"-"+tag+".tgz"]
}

// The KEP's Kafka → Zookeeper example (keps/0029-operator-dependencies.md),
// at two versions each.
func kafka(app, opv string, spec TaskSpec) fixture {
	return fixture{
		name: "kafka", app: app, opv: opv,
		tasks:  []Task{{Name: "zookeeper-operator", Kind: TaskKindOperator, Spec: spec}},
		params: []Parameter{{Name: "BROKER_COUNT", Default: 3}, {Name: "KAFKA_IMAGE", Default: "mesosphere/kafka"}},
		templates: map[string]string{
			"statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Name }}-kafka
  namespace: {{ .Namespace }}
spec:
  replicas: {{ .Params.BROKER_COUNT }}
  template:
    spec:
      containers:
        - name: k8skafka
          image: {{ .Params.KAFKA_IMAGE }}:{{ .AppVersion }}-{{ .OperatorVersion | lower }}
`,
		},
	}
}

func zookeeper(app, opv string) fixture {
	return fixture{
		name: "zookeeper", app: app, opv: opv,
		params: []Parameter{{Name: "NODE_COUNT", Default: 3}},
		templates: map[string]string{
			"statefulset.yaml": `apiVersion: apps/v1
kind: StatefulSet
spec:
  template:
    spec:
      initContainers:
        - name: init
          image: "busybox:1.36"
      containers:
        - name: kubernetes-zookeeper
          image: "zookeeper:{{ .AppVersion }}"
`,
			// Reads a pipe's output: not renderable with defaults alone.
			"validation.yaml": `apiVersion: batch/v1
kind: Job
spec:
  template:
    spec:
      containers:
        - name: check
          image: bitnami/kubectl:1.29
          args: ["{{ .Pipes.missing.value }}"]
`,
		},
	}
}
