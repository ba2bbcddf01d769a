package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestDocs checks that docs/reference (a Markdown page per command) and
// docs/man (a man page per command) are what the cobra tree says today.
// `make docs` regenerates them (FERRY_UPDATE_DOCS=1); CI runs this test, so
// a flag or help text changed without `make docs` fails it.
//
// The pages are written here rather than with cobra/doc, which would bring
// go-md2man and blackfriday into go.mod for two short formats; they carry
// no date, so the same tree always gives the same bytes.
func TestDocs(t *testing.T) {
	root := newRootCmd()
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	want := map[string][]byte{}
	walkCommands(root, func(c *cobra.Command) {
		base := strings.ReplaceAll(c.CommandPath(), " ", "_")
		want[filepath.Join("reference", base+".md")] = markdownPage(c)
		want[filepath.Join("man", strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")] = manPage(c)
	})
	var index bytes.Buffer
	index.WriteString("# ferry command reference\n\nGenerated from the command tree by `make docs`; do not edit.\n\n")
	walkCommands(root, func(c *cobra.Command) {
		depth := strings.Count(c.CommandPath(), " ")
		fmt.Fprintf(&index, "%s- [%s](%s.md): %s\n", strings.Repeat("  ", depth), c.CommandPath(), strings.ReplaceAll(c.CommandPath(), " ", "_"), c.Short)
	})
	want[filepath.Join("reference", "README.md")] = index.Bytes()

	dir := filepath.Join("..", "..", "docs")
	if os.Getenv("FERRY_UPDATE_DOCS") != "" {
		for _, sub := range []string{"reference", "man"} {
			if err := os.RemoveAll(filepath.Join(dir, sub)); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	var stale []string
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			stale = append(stale, name)
		}
	}
	for _, sub := range []string{"reference", "man"} {
		entries, _ := os.ReadDir(filepath.Join(dir, sub))
		for _, e := range entries {
			if _, ok := want[filepath.Join(sub, e.Name())]; !ok {
				stale = append(stale, filepath.Join(sub, e.Name())+" (no such command)")
			}
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Fatalf("docs/ is not what the command tree gives; run `make docs` and commit:\n  %s", strings.Join(stale, "\n  "))
	}
}

// walkCommands calls f on c and every available command below it, in
// name order.
func walkCommands(c *cobra.Command, f func(*cobra.Command)) {
	if !c.IsAvailableCommand() && c.HasParent() {
		return
	}
	f(c)
	for _, sub := range c.Commands() {
		walkCommands(sub, f)
	}
}

func markdownPage(c *cobra.Command) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	if c.Long != "" {
		fmt.Fprintf(&b, "### Synopsis\n\n%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Runnable() {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", c.UseLine())
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "### Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "### Options\n\n```\n%s```\n\n", fs.FlagUsages())
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		fmt.Fprintf(&b, "### Options inherited from parent commands\n\n```\n%s```\n\n", fs.FlagUsages())
	}
	b.WriteString("### See also\n\n")
	if c.HasParent() {
		p := c.Parent()
		fmt.Fprintf(&b, "* [%s](%s.md): %s\n", p.CommandPath(), strings.ReplaceAll(p.CommandPath(), " ", "_"), p.Short)
	}
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() {
			continue
		}
		fmt.Fprintf(&b, "* [%s](%s.md): %s\n", sub.CommandPath(), strings.ReplaceAll(sub.CommandPath(), " ", "_"), sub.Short)
	}
	return b.Bytes()
}

// manPage writes c's page in man(7) roff, section 1.
func manPage(c *cobra.Command) []byte {
	var b bytes.Buffer
	name := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".TH %q \"1\" \"\" \"ferry\" \"ferry manual\"\n", strings.ToUpper(name))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roff(name), roff(c.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roff(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roffParagraphs(desc))
	manFlags(&b, "OPTIONS", c.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", c.InheritedFlags())
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLE\n.nf\n%s\n.fi\n", roff(strings.TrimRight(c.Example, "\n")))
	}
	var also []string
	if c.HasParent() {
		also = append(also, fmt.Sprintf("\\fB%s\\fP(1)", roff(strings.ReplaceAll(c.Parent().CommandPath(), " ", "-"))))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			also = append(also, fmt.Sprintf("\\fB%s\\fP(1)", roff(strings.ReplaceAll(sub.CommandPath(), " ", "-"))))
		}
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(also, ", "))
	}
	return b.Bytes()
}

func manFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	if !fs.HasAvailableFlags() {
		return
	}
	fmt.Fprintf(b, ".SH %s\n", title)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		head := "\\fB--" + roff(f.Name) + "\\fP"
		if f.Shorthand != "" {
			head = "\\fB-" + roff(f.Shorthand) + "\\fP, " + head
		}
		varname, usage := pflag.UnquoteUsage(f)
		if varname != "" {
			head += " \\fI" + roff(varname) + "\\fP"
		}
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "[]" && f.DefValue != "0" {
			usage += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(b, ".TP\n%s\n%s\n", head, roff(usage))
	})
}

// roff escapes text for roff: backslashes, and a leading dot or quote that
// would start a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// roffParagraphs turns blank-line-separated text into .PP paragraphs, each
// kept as written (.nf) so lists and commands keep their lines.
func roffParagraphs(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		paras[i] = ".PP\n.nf\n" + roff(p) + "\n.fi"
	}
	return strings.Join(paras, "\n")
}
