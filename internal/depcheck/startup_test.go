package depcheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// initSymbol matches a package initialiser in `go tool nm` output: the
// compiler's PKG.init (package-level variables the compiler could not lay
// out in data), PKG.init.N (a func init) and PKG.map.init.N (a map
// literal).
var initSymbol = regexp.MustCompile(`^(.+?)\.(?:map\.)?init(?:\.[0-9]+)?$`)

// startupInits are the packages of this module that may keep
// initialisers in the binary, with how many. Every initialiser runs at
// each start of every command, `ferry version` included, and reads in the
// page of machine code around it (64 KiB with the kernel's fault-around):
// that, not what initialisers compute, was most of `ferry version`'s
// peak RSS (issue 29; BENCHMARKS.md, Lean binary). ferry's own packages
// keep none but formats' registrations: a package-level regular
// expression is internal/lazyregexp's, a set is a slice or a switch, a
// sentinel error of a kind is errkind.BadInputError. The copies under
// internal/forked keep upstream's where removing one would be more than a
// small patch (UPSTREAM.md of each says which were removed).
var startupInits = map[string]int{
	// One initialiser registers every format's lock keys, provenance
	// check and lock inputs (formats.go).
	"formats": 1,

	// distribution's access controllers and storage driver register
	// themselves in init (serve imports them for that); storage keeps
	// DefaultConcurrencyLimit = runtime.GOMAXPROCS(0) (UPSTREAM.md, patch 5).
	"internal/forked/distribution/registry/auth/htpasswd":             1,
	"internal/forked/distribution/registry/auth/token":                1,
	"internal/forked/distribution/registry/storage":                   1,
	"internal/forked/distribution/registry/storage/driver/filesystem": 1,
	"internal/forked/rekor-tiles/pkg/generated/protobuf":              5,
	// Upstream's UnixZero, DefaultTimeLocation (exported vars set from
	// another package's var or a call), base64Encoding and the ULID
	// override funcs: no allocation, and its page of code holds x/net/idna's,
	// mapstructure's and oklog/ulid's initialisers anyway. The registry,
	// regexps and tables are built on first use (its UPSTREAM.md).
	"internal/forked/strfmt": 1,
}

// TestNoStartupWork builds the ferry binary and checks that no package of
// this module gained an initialiser (startupInits). To find what one
// runs: go tool objdump -s '^PKG\.init$' BINARY, whose lines name the
// source.
func TestNoStartupWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ferry binary")
	}
	bin := filepath.Join(t.TempDir(), "ferry")
	// The build `make` does for bin/ferry, whose build cache it reuses.
	build := exec.Command("go", "build", "-o", bin, "./cmd/ferry")
	build.Dir = moduleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	got := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || (f[1] != "T" && f[1] != "t") {
			continue
		}
		m := initSymbol.FindStringSubmatch(f[2])
		if m == nil {
			continue
		}
		pkg := m[1]
		if strings.ContainsAny(pkg[strings.LastIndex(pkg, "/")+1:], ".()") {
			continue // a method named init, PKG.(*T).init
		}
		if pkg == "main" {
			pkg = "cmd/ferry"
		} else if !own(pkg) {
			continue
		}
		got[rel(pkg)]++
	}
	var pkgs []string
	for p := range got {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		if got[p] > startupInits[p] {
			t.Errorf("%s has %d initialisers in the binary, at most %d allowed: each runs at every start of every command (see startupInits)", p, got[p], startupInits[p])
		}
	}
	for p, n := range startupInits {
		if got[p] < n {
			t.Errorf("%s has %d initialisers, %d allowed: lower startupInits to what it has", p, got[p], n)
		}
	}
}

// moduleRoot returns the module's root directory (two up from here).
func moduleRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(filepath.Dir(wd))
}
