package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// flagList is testdata/flags.txt: every long flag ferry's commands
// register, kept current by cmd/ferry's TestFlagListCurrent.
func flagList(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "flags.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// libraryFiles returns the module's non-test Go files outside cmd/ and
// internal/ (test helpers), relative to the module root.
func libraryFiles(t *testing.T) []string {
	t.Helper()
	root := moduleRoot(t)
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch {
			case rel == "cmd", rel == "internal", rel == "testdata", strings.HasPrefix(d.Name(), "."), strings.HasSuffix(rel, string(filepath.Separator)+"testdata"):
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// moduleRoot is the directory of go.mod, two levels above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// otherTool matches the text before a flag when that flag belongs to the
// command line of another tool the message tells the user to run:
// "cosign sign-blob --key", "`cosign public-key --key", "helm repo add
// --username": the tool's name, then only words of that command line
// (subcommands, arguments, other flags; no punctuation that ends a clause:
// backtick, comma, semicolon, parenthesis) up to the flag.
var otherTool = regexp.MustCompile("(^|[^A-Za-z0-9-])(cosign|helm|porter|oras|crane|kubectl|htpasswd)( +[^\\s`;,()]+)* +$")

// TestLibrariesNameNoFlags: only cmd names CLI flags. A library message
// that needs one returns a typed error (or a sentinel) that cmd words with
// the flag, as package ferry's OverwriteError is worded by cmd/ferry's
// flagError; a library cannot know which flag, if any, a caller exposes.
//
// Only string literals are read, so Go comments may name flags. A flag
// on another tool's command line that a message quotes ("cosign sign-blob
// --key cosign.key") is that tool's, not ferry's, and is not counted
// (otherTool). Every occurrence in a literal counts, not only the first.
func TestLibrariesNameNoFlags(t *testing.T) {
	flags := flagList(t)
	if len(flags) == 0 {
		t.Fatal("testdata/flags.txt lists no flag")
	}
	quoted := make([]string, len(flags))
	for i, f := range flags {
		quoted[i] = regexp.QuoteMeta(f)
	}
	// --FLAG not followed by another letter, digit or dash: --to, not
	// --to-archive's prefix of it, nor a flag of another tool's name.
	re := regexp.MustCompile(`(^|[^A-Za-z0-9-])--(` + strings.Join(quoted, "|") + `)([^A-Za-z0-9-]|$)`)
	debt := flagDebt(t)
	seen := map[string]bool{}
	root := moduleRoot(t)
	for _, rel := range libraryFiles(t) {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, m := range re.FindAllStringSubmatchIndex(s, -1) {
				flag := s[m[4]:m[5]]
				if otherTool.MatchString(s[:m[4]-2]) {
					continue
				}
				key := filepath.ToSlash(rel) + " --" + flag
				seen[key] = true
				if !debt[key] {
					t.Errorf("%s: a library message names the flag --%s: %q", fset.Position(lit.Pos()), flag, s)
				}
			}
			return true
		})
	}
	for key := range debt {
		if !seen[key] {
			t.Errorf("testdata/flag-debt.txt lists %q, which no longer occurs: remove the line", key)
		}
	}
}

// flagDebt is testdata/flag-debt.txt: the "FILE --FLAG" pairs that name a
// flag in a library message today, left to be turned into typed errors
// that cmd words. The list only shrinks: a new pair fails the test, and
// a pair that no longer occurs must be removed.
func flagDebt(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "flag-debt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	return out
}

// TestOnlyCmdImportsExitcode: exit codes are the CLI's; libraries mark a
// failure's kind with package errkind (exitcode.Of maps it).
func TestOnlyCmdImportsExitcode(t *testing.T) {
	for path, p := range listModule(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if rel == "exitcode" || rel == "cmd" || strings.HasPrefix(rel, "cmd/") || strings.HasPrefix(rel, "internal/") {
			continue
		}
		for _, imp := range p.Imports {
			if imp == module+"/exitcode" {
				t.Errorf("%s imports %s: mark the error's kind with package errkind instead", path, imp)
			}
		}
	}
}

// TestOtherTool pins which text before a flag makes it another tool's.
func TestOtherTool(t *testing.T) {
	for _, tc := range []struct {
		before string
		other  bool
	}{
		{"sign with cosign sign-blob ", true},
		{"export the public key with `cosign public-key ", true},
		{"cosign ", true},
		{"run helm repo add x URL ", true},
		{"add it with `helm repo add %s URL`, name it in ferry.yaml or ", false},
		{"use ferry login or ", false},
		{"pass ", false},
		{"(cosign), or pass ", false},
		{"notcosign sign ", false},
	} {
		if got := otherTool.MatchString(tc.before); got != tc.other {
			t.Errorf("otherTool(%q) = %v, want %v", tc.before, got, tc.other)
		}
	}
}
