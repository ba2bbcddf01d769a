package kudo

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"

	"oras.land/oras-go/v2"

	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/internal/registrytest"
	"github.com/ferryhq/ferry/resolve"
)

// pushImage pushes a small artifact standing for an image to HOST/REPO:TAG.
func pushImage(t *testing.T, ref string) {
	t.Helper()
	ctx := context.Background()
	i := strings.LastIndexByte(ref, ':')
	repo := registrytest.Repository(t, registrytest.Client(t), ref[:i])
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, "application/vnd.example.image", oras.PackManifestOptions{ManifestAnnotations: map[string]string{"org.opencontainers.image.ref.name": ref, "org.opencontainers.image.created": "2020-01-01T00:00:00Z"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, ref[i+1:]); err != nil {
		t.Fatal(err)
	}
}

// TestResolve resolves the KEP's Kafka → Zookeeper example through the
// pipeline's resolver: the repository opened as an Origin, Kafka's two
// tasks locking Zookeeper at two versions, the images deployed, and the
// install plan of the closure. A cycle between repository packages is an
// error naming it.
func TestResolve(t *testing.T) {
	reg := registrytest.New(t)
	kafkaImage := reg.Host + "/acme/kafka"
	zkOld := zookeeper("3.4.14", "0.3.0")
	zkNew := zookeeper("3.6.2", "0.1.0")
	// Two images of one repository at two tags would be refused by the
	// resolver (an image has no format, and the default policy shares one
	// version per repository): the two versions deploy two repositories.
	zkOld.templates = map[string]string{"sts.yaml": "image: " + reg.Host + "/acme/zookeeper-legacy:{{ .AppVersion }}\n"}
	zkNew.templates = map[string]string{"sts.yaml": "image: " + reg.Host + "/acme/zookeeper:{{ .AppVersion }}\n"}
	k := kafka("2.5.0", "1.3.1", TaskSpec{Package: "zookeeper"})
	k.tasks = append(k.tasks, Task{Name: "legacy-zk", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "zookeeper", AppVersion: "3.4.14", InstanceName: "legacy"}})
	k.params[1].Default = kafkaImage
	aa := fixture{name: "aa", opv: "0.1.0", tasks: []Task{{Name: "bb", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "bb"}}}}
	bb := fixture{name: "bb", opv: "0.1.0", tasks: []Task{{Name: "aa", Kind: TaskKindKudoOperator, Spec: TaskSpec{Package: "aa"}}}}
	repo := newRepo(t, []fixture{k, zkOld, zkNew, aa, bb}, nil)
	pushImage(t, kafkaImage+":2.5.0-1.3.1")
	pushImage(t, reg.Host+"/acme/zookeeper-legacy:3.4.14")
	pushImage(t, reg.Host+"/acme/zookeeper:3.6.2")

	ctx := context.Background()
	opts := resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{New()}}
	g, err := resolve.Resolve(ctx, []resolve.Root{{Ref: Source(repo.URL, "kafka"), Format: "kudo"}}, opts)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	var got []string
	for _, p := range g.Packages {
		got = append(got, p.Kind+" "+strings.TrimPrefix(p.Source, SourcePrefix+repo.URL+"/")+":"+p.Version)
	}
	sort.Strings(got)
	want := []string{
		"image " + reg.Host + "/acme/kafka:2.5.0-1.3.1",
		"image " + reg.Host + "/acme/zookeeper-legacy:3.4.14",
		"image " + reg.Host + "/acme/zookeeper:3.6.2",
		"kudo.operator kafka:2.5.0_1.3.1",
		"kudo.operator zookeeper:3.4.14_0.3.0",
		"kudo.operator zookeeper:3.6.2_0.1.0",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("closure:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	pg, err := ResolvedGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	steps, err := Plan(pg, g.Roots[0], "")
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for _, s := range steps {
		plan = append(plan, s.Operator+"="+s.Instance+"@"+g.Packages[s.Key].Version)
	}
	if want := "zookeeper=kafka.zookeeper@3.6.2_0.1.0 zookeeper=kafka.legacy@3.4.14_0.3.0 kafka=kafka@2.5.0_1.3.1"; strings.Join(plan, " ") != want {
		t.Fatalf("plan = %s\nwant %s", strings.Join(plan, " "), want)
	}

	_, err = resolve.Resolve(ctx, []resolve.Root{{Ref: Source(repo.URL, "aa"), Format: "kudo"}}, resolve.Options{Registry: registrytest.Client(t), Formats: []format.Format{New()}})
	t.Logf("cycle error: %v", err)
	var ce *resolve.CycleError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "/aa:0.1.0 -> ") || !strings.Contains(err.Error(), "/bb:0.1.0 -> ") {
		t.Fatalf("cycle: %v", err)
	}
}
