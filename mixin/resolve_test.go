package mixin

import (
	"os"
	"strings"
	"testing"

	"github.com/ferryhq/ferry/exitcode"
)

func TestChoose(t *testing.T) {
	doc := feedXML(
		entry("exec", "v1.0.0", "2020-01-01T00:00:00Z", "https://a.example/v1.0.0/exec-linux-amd64"),
		entry("exec", "v1.2.3", "2020-02-01T00:00:00Z", "https://a.example/v1.2.3/exec-linux-amd64"),
		entry("exec", "v1.3.0-beta.1", "2020-03-01T00:00:00Z", "https://a.example/v1.3.0-beta.1/exec-linux-amd64"),
		entry("exec", "canary", "2020-04-01T00:00:00Z", "https://a.example/canary/exec-linux-amd64"),
		entry("exec", "v0.9.0", "2019-01-01T00:00:00Z", "https://a.example/v0.9.0/exec-linux-amd64"),
	)
	feed, err := ParseFeed(strings.NewReader(doc), "https://a.example/atom.xml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, constraint string
		want             string
		wantErr          string
		wantCode         int
	}{
		{name: "exec", constraint: "", want: "v1.2.3"},
		{name: "exec", constraint: "latest", want: "v1.2.3"},
		{name: "exec", constraint: "1.x", want: "v1.2.3"},
		{name: "exec", constraint: "~1.0", want: "v1.0.0"},
		{name: "exec", constraint: "<1", want: "v0.9.0"},
		{name: "exec", constraint: "v1.0.0", want: "v1.0.0"},
		{name: "exec", constraint: "1.0.0", want: "v1.0.0"},
		{name: "exec", constraint: ">=1.3.0-0", want: "v1.3.0-beta.1"},
		{name: "exec", constraint: "v1.3.0-beta.1", want: "v1.3.0-beta.1"},
		{name: "exec", constraint: "canary", want: "canary"},
		{name: "exec", constraint: "2.x", wantErr: `mixin exec: no version satisfies "2.x" in https://a.example/atom.xml (versions: v0.9.0 v1.0.0 v1.2.3 v1.3.0-beta.1 canary)`, wantCode: exitcode.Failure},
		{name: "exec", constraint: ">=1.2.4", wantErr: `no version satisfies ">=1.2.4"`, wantCode: exitcode.Failure},
		{name: "exec", constraint: "not a range!", wantErr: `invalid version constraint "not a range!"`, wantCode: exitcode.Usage},
		{name: "helm", constraint: "", wantErr: "mixin helm: not in feed https://a.example/atom.xml (mixins: exec)", wantCode: exitcode.Failure},
	}
	for _, tt := range tests {
		t.Run(tt.name+" "+tt.constraint, func(t *testing.T) {
			v, err := feed.Choose(tt.name, tt.constraint)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if got := exitcode.Of(err); got != tt.wantCode {
					t.Errorf("exit code %d, want %d", got, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != tt.want {
				t.Errorf("Choose(%q) = %s, want %s", tt.constraint, v.Version, tt.want)
			}
		})
	}
}

func TestChooseRealworld(t *testing.T) {
	f, err := os.Open(realworldFeed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	feed, err := ParseFeed(f, "https://cdn.porter.sh/mixins/atom.xml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, constraint, want string }{
		{"exec", "latest", "v1.2.3"},
		{"exec", "1.x", "v1.2.3"},
		{"exec", "canary", "canary"},
		{"helm", "", "v1.2.4"},
		{"helm", "~1.2.3", "v1.2.4"},
		{"helm", "v1.2.3", "v1.2.3"},
	}
	for _, tt := range tests {
		v, err := feed.Choose(tt.name, tt.constraint)
		if err != nil {
			t.Errorf("Choose(%s, %q): %v", tt.name, tt.constraint, err)
			continue
		}
		if v.Version != tt.want {
			t.Errorf("Choose(%s, %q) = %s, want %s", tt.name, tt.constraint, v.Version, tt.want)
		}
	}
}
