// Package kubeimages finds the images Kubernetes objects deploy: those a
// Helm chart's rendered templates hold (package helm) and those of a
// folder of manifests (ferry.yaml's `images: [{manifests: DIR}]`, as
// `zarf dev find-images` finds them).
package kubeimages

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"sigs.k8s.io/yaml"

	"github.com/ferryhq/ferry/internal/lazyregexp"
	"github.com/ferryhq/ferry/ociref"
)

// Images in objects. Objects deploy images in three ways (a chart's
// rendered templates, or a folder of manifests):
//
//   - in the pod template of a workload (Pod, Deployment, StatefulSet,
//     DaemonSet, ReplicaSet, ReplicationController, Job, CronJob): the
//     containers, initContainers and ephemeralContainers of a PodSpec
//     (k8s.io/api/core/v1 types.go), as the kubelet pulls them;
//   - in a custom resource an operator turns into pods: the
//     prometheus-operator's Prometheus, PrometheusAgent, Alertmanager and
//     ThanosRuler take `spec.image` and `spec.containers`/
//     `spec.initContainers` (prometheus-operator
//     pkg/apis/monitoring/v1/prometheus_types.go CommonPrometheusFields,
//     alertmanager_types.go AlertmanagerSpec, thanos_types.go
//     ThanosRulerSpec), a Prometheus also `spec.thanos.image` (ThanosSpec);
//     any other custom resource is searched for the shapes charts write
//     images in (an `image:` string, an `image:` mapping of
//     registry/repository/tag/digest, a mapping of repository and tag), as
//     kbld's default search rules find them; and ferry.yaml's
//     `helm: {imagePaths: …}` names further paths for a kind;
//   - as a command-line flag of an operator's container
//     (`--prometheus-config-reloader=IMAGE`), which the operator deploys at
//     run time: those are reported, not locked, since nothing in the
//     chart says when or whether they are pulled.

// ImagePath is a user-declared place of an image in objects of one kind
// (ferry.yaml `helm: {imagePaths: [{apiVersion, kind, path}]}`).
type ImagePath struct {
	// APIVersion, when set, limits the path to objects of this apiVersion
	// ("example.com/v1"); empty matches any.
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	// Kind is the object kind the path applies to.
	Kind string `yaml:"kind" json:"kind"`
	// Path is the field holding the image, dotted from the object's root;
	// "[]" after a name walks every element of a list:
	// "spec.workers[].image". The field may be a reference string or a
	// mapping of registry, repository, tag and digest.
	Path string `yaml:"path" json:"path"`
}

// workloadPodSpecs are the paths to the PodSpec of each pod-bearing kind.
// It and operatorImagePaths are lists, not maps: a package-level map is
// built by an initialiser at every start of every command (issue 29).
var workloadPodSpecs = []kindPaths{
	{"Pod", []string{"spec"}},
	{"Deployment", []string{"spec", "template", "spec"}},
	{"StatefulSet", []string{"spec", "template", "spec"}},
	{"DaemonSet", []string{"spec", "template", "spec"}},
	{"ReplicaSet", []string{"spec", "template", "spec"}},
	{"ReplicationController", []string{"spec", "template", "spec"}},
	{"Job", []string{"spec", "template", "spec"}},
	{"CronJob", []string{"spec", "jobTemplate", "spec", "template", "spec"}},
}

// kindPaths are paths of one kind's objects.
type kindPaths struct {
	kind  string
	paths []string
}

// pathsOf returns the paths list gives kind, and whether it names kind.
func pathsOf(list []kindPaths, kind string) ([]string, bool) {
	for _, k := range list {
		if k.kind == kind {
			return k.paths, true
		}
	}
	return nil, false
}

// monitoringGroup is the prometheus-operator's API group.
const monitoringGroup = "monitoring.coreos.com"

// operatorImagePaths are the image fields of the prometheus-operator's
// resources (see the comment above for the upstream types).
var operatorImagePaths = []kindPaths{
	{"Prometheus", []string{"spec.image", "spec.thanos.image", "spec.containers[].image", "spec.initContainers[].image"}},
	{"PrometheusAgent", []string{"spec.image", "spec.containers[].image", "spec.initContainers[].image"}},
	{"Alertmanager", []string{"spec.image", "spec.containers[].image", "spec.initContainers[].image"}},
	{"ThanosRuler", []string{"spec.image", "spec.containers[].image", "spec.initContainers[].image"}},
}

// Images returns the images one document (one Kubernetes object, YAML or
// JSON) deploys, and the images its containers' flags name for an
// operator to deploy at run time. A document of no kind yields nothing.
func Images(doc string, paths []ImagePath) (images, runtime []string, err error) {
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		return nil, nil, err
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	if kind == "" {
		return nil, nil, nil
	}
	if p, ok := pathsOf(workloadPodSpecs, kind); ok && !isCustomGroup(apiVersion) {
		spec, _ := lookup(obj, p).(map[string]any)
		for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
			cs, _ := spec[list].([]any)
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				if s, ok := cm["image"].(string); ok && strings.TrimSpace(s) != "" {
					images = append(images, strings.TrimSpace(s))
				}
				runtime = append(runtime, flagImages(cm)...)
			}
		}
	} else if isCustomGroup(apiVersion) {
		if group(apiVersion) == monitoringGroup {
			paths, _ := pathsOf(operatorImagePaths, kind)
			for _, p := range paths {
				images = append(images, imagesAt(obj, p)...)
			}
		} else {
			images = append(images, searchImages(obj["spec"])...)
		}
	}
	for _, p := range paths {
		if p.Kind == kind && (p.APIVersion == "" || p.APIVersion == apiVersion) {
			images = append(images, imagesAt(obj, p.Path)...)
		}
	}
	slices.Sort(images)
	slices.Sort(runtime)
	return slices.Compact(images), slices.Compact(runtime), nil
}

// group returns the API group of an apiVersion ("" for the core group).
func group(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

// isCustomGroup reports whether apiVersion is of a custom resource: its
// group has a dot (a CRD's group must, apiextensions-apiserver's
// validation) and is not one of Kubernetes' own (*.k8s.io).
func isCustomGroup(apiVersion string) bool {
	g := group(apiVersion)
	return strings.Contains(g, ".") && !strings.HasSuffix(g, ".k8s.io") && g != "k8s.io"
}

// lookup returns the value at path in obj, nil when a step is missing.
func lookup(obj map[string]any, path []string) any {
	var cur any = obj
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// imagesAt returns the images at a dotted path of obj ("a.b[].c").
func imagesAt(obj map[string]any, path string) []string {
	cur := []any{obj}
	for _, step := range strings.Split(path, ".") {
		name, each := strings.CutSuffix(step, "[]")
		var next []any
		for _, v := range cur {
			m, ok := v.(map[string]any)
			if !ok {
				continue
			}
			x, ok := m[name]
			if !ok {
				continue
			}
			if each {
				list, _ := x.([]any)
				next = append(next, list...)
			} else {
				next = append(next, x)
			}
		}
		cur = next
	}
	var out []string
	for _, v := range cur {
		if r, ok := imageValue(v); ok {
			out = append(out, r)
		}
	}
	return out
}

// imageValue reads an image from a field: a reference string, or a
// mapping of registry, repository (or image/name), tag and digest, the
// shape most charts' values and many operators' resources use.
func imageValue(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		if s == "" || strings.ContainsAny(s, " \t\n") {
			return "", false
		}
		if _, err := ociref.ParseNormalized(s, ""); err != nil {
			return "", false
		}
		return s, true
	case map[string]any:
		return composedImage(x)
	}
	return "", false
}

// composedImage reads {registry, repository, tag, digest} as charts
// compose them (bitnami's common.images.image, kube-prometheus-stack's
// image blocks): REGISTRY/REPOSITORY:TAG, or @DIGEST when a digest is
// given. It needs a repository and a tag or digest.
func composedImage(m map[string]any) (string, bool) {
	repo, _ := m["repository"].(string)
	tag := scalar(m["tag"])
	dig := scalar(m["digest"])
	if dig == "" {
		dig = scalar(m["sha"])
		if dig != "" && !strings.HasPrefix(dig, "sha256:") {
			dig = "sha256:" + dig
		}
	}
	if repo == "" || (tag == "" && dig == "") {
		return "", false
	}
	if reg, _ := m["registry"].(string); reg != "" {
		repo = strings.TrimSuffix(reg, "/") + "/" + repo
	}
	ref := repo
	if dig != "" {
		ref += "@" + dig
	} else {
		ref += ":" + tag
	}
	if _, err := ociref.ParseNormalized(ref, ""); err != nil {
		return "", false
	}
	return ref, true
}

// scalar returns a string or number field as a string.
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64, int, int64:
		return fmt.Sprint(x)
	}
	return ""
}

// searchImages walks a custom resource's spec for images: every `image`
// field that holds a reference or an image mapping, and every mapping of
// repository and tag.
func searchImages(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		if r, ok := imageValue(x["image"]); ok {
			out = append(out, r)
		} else if _, hasImage := x["image"]; !hasImage {
			if r, ok := composedImage(x); ok {
				out = append(out, r)
			}
		}
		for k, y := range x {
			if k == "image" {
				if _, ok := y.(map[string]any); ok {
					continue
				}
			}
			out = append(out, searchImages(y)...)
		}
	case []any:
		for _, y := range x {
			out = append(out, searchImages(y)...)
		}
	}
	return out
}

// flagImages returns the images a container's args and command name as
// `--NAME=IMAGE` flags whose NAME says image or reloader (the
// prometheus-operator's `--prometheus-config-reloader=` and
// `--thanos-default-base-image=`): images an operator deploys itself.
func flagImages(container map[string]any) []string {
	var out []string
	for _, list := range []string{"command", "args"} {
		items, _ := container[list].([]any)
		for _, it := range items {
			s, _ := it.(string)
			name, val, ok := strings.Cut(strings.TrimSpace(s), "=")
			if !ok || !strings.HasPrefix(name, "--") {
				continue
			}
			lname := strings.ToLower(name)
			if !strings.Contains(lname, "image") && !strings.Contains(lname, "reloader") {
				continue
			}
			r, err := ociref.ParseNormalized(val, "")
			if err != nil || !strings.Contains(val, "/") || (r.Tag == "" && r.Digest == "") {
				continue
			}
			out = append(out, val)
		}
	}
	return out
}

// FileImages returns the images every object of a manifest file (YAML
// documents separated by `---`, split as Helm's
// releaseutil.SplitManifests splits a rendered template) deploys, sorted,
// each once, with the run-time images of their flags apart.
func FileImages(content string, paths []ImagePath) (images, runtime []string, err error) {
	for _, doc := range splitManifests(content) {
		im, rt, err := Images(doc, paths)
		if err != nil {
			return nil, nil, err
		}
		images = append(images, im...)
		runtime = append(runtime, rt...)
	}
	slices.Sort(images)
	slices.Sort(runtime)
	return slices.Compact(images), slices.Compact(runtime), nil
}

// manifestSep separates YAML documents as Helm's
// pkg/release/v1/util/manifest.go sep does (a line starting "---").
var manifestSep = lazyregexp.New(`(?m)^---[ \t]*`)

// splitManifests splits a stream of YAML documents, in order, as Helm's
// releaseutil.SplitManifests does (copied, with its regular expression, so
// that this package does not link Helm's release packages and through
// them Kubernetes' client): leading space trimmed, empty documents
// dropped.
func splitManifests(content string) []string {
	var out []string
	for _, d := range manifestSep.Split(strings.TrimLeftFunc(content, unicode.IsSpace), -1) {
		if strings.TrimSpace(d) == "" {
			continue
		}
		out = append(out, strings.TrimLeftFunc(d, unicode.IsSpace))
	}
	return out
}
