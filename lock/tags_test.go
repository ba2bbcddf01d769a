package lock_test

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/resolve"
)

// tagged is a lock of one image package with an extra tag besides its
// version, and another package of the same source at another digest.
func tagged(tags ...string) *lock.Lock {
	return &lock.Lock{
		APIVersion: lock.APIVersion, Kind: lock.Kind, Inputs: digest.FromString("inputs").String(),
		Roots: []string{"r.io/web@" + dWeb, "r.io/web@" + dAPI},
		Packages: []lock.Package{
			{Source: "r.io/web", Kind: "image", Version: "1.0", Tags: tags, Digest: dWeb},
			{Source: "r.io/web", Kind: "image", Version: "2.0.0", Digest: dAPI},
		},
	}
}

// TestTagsMarshal: the lock writes `tags:` after `version` only when a
// package has tags besides its version, sorted and each once whatever
// order they were given in, so two runs write the same bytes; a lock
// without the key (written before ferry kept tags) still reads, and
// round-trips unchanged.
func TestTagsMarshal(t *testing.T) {
	tests := []struct {
		name string
		tags []string
		want string // the YAML of the first package's tags, "" for none
	}{
		{"no tags", nil, ""},
		{"empty list", []string{}, ""},
		{"one tag", []string{"1.0.0"}, "    version: \"1.0\"\n    tags:\n      - 1.0.0\n"},
		{"sorted", []string{"latest", "1", "1.0.0"}, "    tags:\n      - \"1\"\n      - 1.0.0\n      - latest\n"},
		{"each once, never the version", []string{"1.0.0", "1.0", "1.0.0"}, "    tags:\n      - 1.0.0\n    digest"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := mustMarshal(t, tagged(tt.tags...))
			if tt.want == "" {
				if strings.Contains(string(data), "tags:") {
					t.Fatalf("lock has tags:\n%s", data)
				}
			} else if !strings.Contains(string(data), tt.want) {
				t.Fatalf("lock lacks %q:\n%s", tt.want, data)
			}
			// Byte-identical: again, and after a parse.
			if again := mustMarshal(t, tagged(tt.tags...)); !bytes.Equal(again, data) {
				t.Fatalf("second marshal differs:\n%s\n---\n%s", data, again)
			}
			l, err := lock.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if again := mustMarshal(t, l); !bytes.Equal(again, data) {
				t.Fatalf("parsed and marshalled again differs:\n%s\n---\n%s", data, again)
			}
		})
	}
	// A lock written before ferry kept tags has no key: it reads, with no
	// tags.
	old := strings.Replace(string(mustMarshal(t, tagged("1.0.0"))), "    tags:\n      - 1.0.0\n", "", 1)
	l, err := lock.Parse([]byte(old))
	if err != nil {
		t.Fatalf("old lock: %v", err)
	}
	if p := l.PackageAt("r.io/web", dWeb); p == nil || p.Tags != nil || !slices.Equal(p.AllTags(), []string{"1.0"}) {
		t.Fatalf("old lock's package %+v", p)
	}
}

// TestTagsParseRejects: tags without a version, or one repeating it, are
// refused when a lock is read.
func TestTagsParseRejects(t *testing.T) {
	tests := []struct {
		name string
		edit func(p *lock.Package)
		want string
	}{
		{"tags without a version", func(p *lock.Package) { p.Version = "" }, "tags 1.0.0 without a version"},
		{"a tag that is the version", func(p *lock.Package) { p.Tags = append(p.Tags, "1.0") }, `"1.0" repeats the version`},
		{"an empty tag", func(p *lock.Package) { p.Tags = append(p.Tags, "") }, `"" repeats the version or is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tagged("1.0.0")
			tt.edit(&l.Packages[0])
			// Marshal sorts and cleans the tags: write the bad lock
			// through YAML as a hand would.
			data := mustMarshal(t, tagged("1.0.0"))
			bad := strings.Replace(string(data), "    version: \"1.0\"\n    tags:\n      - 1.0.0\n", badTags(l.Packages[0]), 1)
			if _, err := lock.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v, want %q\n%s", err, tt.want, bad)
			}
		})
	}
}

func badTags(p lock.Package) string {
	var b strings.Builder
	if p.Version != "" {
		b.WriteString("    version: \"" + p.Version + "\"\n")
	}
	b.WriteString("    tags:\n")
	for _, t := range p.Tags {
		b.WriteString("      - \"" + t + "\"\n")
	}
	return b.String()
}

// TestTagsFromGraph: a resolved package's tags reach the lock, the lock's
// graph (plans, why) and the versions kept on the next resolve, where
// every tag of the digest is a locked version of it.
func TestTagsFromGraph(t *testing.T) {
	g := &resolve.Graph{
		Roots:    []string{"r.io/web"},
		Packages: map[string]*resolve.Package{},
	}
	g.Packages["r.io/web"] = &resolve.Package{ID: "r.io/web", Source: "r.io/web", Kind: "image", Version: "1.0", Tags: []string{"1.0.0", "latest"},
		Descriptor: ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.Digest(dWeb), Size: 10}}
	l := lock.FromGraph(g, digest.FromString("inputs").String())
	p := l.Package("r.io/web")
	if !slices.Equal(p.Tags, []string{"1.0.0", "latest"}) || !slices.Equal(p.AllTags(), []string{"1.0", "1.0.0", "latest"}) {
		t.Fatalf("locked tags %q, all %q", p.Tags, p.AllTags())
	}
	if got := l.Graph().Packages["r.io/web"]; got == nil || !slices.Equal(got.Tags, p.Tags) {
		t.Fatalf("lock's graph package %+v", got)
	}
	var kept []string
	for _, k := range l.Locked()["r.io/web"] {
		if k.Digest.String() != dWeb {
			t.Errorf("locked %s at %s, want %s", k.Version, k.Digest, dWeb)
		}
		kept = append(kept, k.Version)
	}
	if want := []string{"1.0", "1.0.0", "latest"}; !reflect.DeepEqual(kept, want) {
		t.Fatalf("Locked versions %q, want %q", kept, want)
	}
}

// TestDiffTags: a tag of a package's digest added or removed is a change
// of kind "tag"; a tag that is a changed version is the package's change
// only, and the tags of a package added or removed go with it.
func TestDiffTags(t *testing.T) {
	// single is a lock of one package of r.io/web, the version 1.0.
	single := func(tags ...string) *lock.Lock {
		l := tagged(tags...)
		l.Packages = l.Packages[:1]
		l.Roots = l.Roots[:1]
		return l
	}
	edit := func(l *lock.Lock, f func(p *lock.Package)) *lock.Lock {
		f(&l.Packages[0])
		return l
	}
	tests := []struct {
		name string
		a, b *lock.Lock
		want []string // Change.String()
	}{
		{"identical", tagged("1.0.0"), tagged("1.0.0"), nil},
		{"a tag added", tagged("1.0.0"), tagged("1.0.0", "latest"), []string{"+ tag r.io/web latest " + dWeb}},
		{"a tag removed", tagged("1.0.0", "latest"), tagged("latest"), []string{"- tag r.io/web 1.0.0 " + dWeb}},
		{"tags added to an old lock", single(), single("1", "1.0.0"), []string{"+ tag r.io/web 1 " + dWeb, "+ tag r.io/web 1.0.0 " + dWeb}},
		{
			name: "the version became an extra tag",
			a:    single("1.0.0"),
			b:    edit(single(), func(p *lock.Package) { p.Version = "1.0.0" }),
			want: []string{"~ package r.io/web 1.0 -> 1.0.0 (" + dWeb + " -> " + dWeb + ")"},
		},
		{
			name: "the version changed and a tag was added",
			a:    single(),
			b:    edit(single("1.0"), func(p *lock.Package) { p.Version = "1" }),
			want: []string{"~ package r.io/web 1.0 -> 1 (" + dWeb + " -> " + dWeb + ")"},
		},
		{
			name: "a package of another digest takes its tags",
			a:    single("1.0.0"),
			b:    edit(single("1.0.0"), func(p *lock.Package) { p.Digest = dAPI }),
			want: []string{"! REPLACED package r.io/web 1.0: digest changed under an unchanged version (" + dWeb + " -> " + dAPI + ")"},
		},
		{
			name: "a package added takes its tags",
			a:    single(),
			b: func() *lock.Lock {
				l := single()
				l.Packages = append(l.Packages, lock.Package{Source: "r.io/other", Kind: "image", Version: "1.0", Tags: []string{"1"}, Digest: dWeb})
				return l
			}(),
			want: []string{"+ package r.io/other 1.0 " + dWeb},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, c := range lock.Diff(tt.a, tt.b) {
				got = append(got, c.String())
				if c.Kind == "tag" && c.Op != lock.OpAdded && c.Op != lock.OpRemoved {
					t.Errorf("tag change %+v", c)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("Diff = %q\nwant   %q", got, tt.want)
			}
		})
	}
}
