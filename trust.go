package ferry

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"oras.land/oras-go/v2/content"

	"github.com/ferryhq/ferry/errkind"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/lock"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/trust"
	"github.com/ferryhq/ferry/verify"
)

// TrustPolicy returns the signature policy of a run: ms's `trust:` section
// (ms may be nil), whose key paths are relative to the directory of file,
// the input file ms was read from, and the --verify-key and --trusted-root
// flags.
func TrustPolicy(ms *mirrorset.MirrorSet, file string, verifyKeys []string, trustedRoot string) (*trust.Policy, error) {
	var cfg *trust.Config
	if ms != nil {
		cfg = ms.Trust
	}
	dir := ""
	if file != "" {
		dir = filepath.Dir(file)
	}
	return trust.New(cfg, trust.Options{Dir: dir, VerifyKeys: verifyKeys, TrustedRoot: trustedRoot})
}

// CheckTrust checks every resolved package of l at its source against pol
// and records in l the signatures, attestations and SBOMs found, with the
// rule that verified each. A package whose lock entry already records
// signatures must find those. It runs before anything is written or
// copied; on a failure, l is left as it was. ferry lock checks every
// package; ferry mirror (mirroring set) only those a rule covers or that
// record signatures, so mirroring a lock with no policy asks the sources
// nothing before the copy. A package that records its signatures but
// not one its rule verified at the source (a lock written before the
// package was signed) gains it; CheckTrustAt returns those additions
// (trust.Unrecorded) for the caller to report, or to refuse when the lock
// is signed and cannot be rewritten.
//
// With source mirrors (Env.Sources), a package's signatures are read at
// the first location of its source.
func (e *Env) CheckTrust(ctx context.Context, pol *trust.Policy, l *lock.Lock, mirroring bool) error {
	regs, _, err := e.sources(nil)
	if err != nil {
		return err
	}
	_, err = pol.Apply(ctx, l, trustSources{Registries: regs, formats: e.Formats}, e.Concurrency, mirroring)
	return err
}

// trustSources opens registry repositories through Registries, and, for
// trust rules that read a package's own content (a Helm chart's
// provenance), the sources outside any registry through the format that
// owns them (trust.SourceOpener).
type trustSources struct {
	format.Registries
	formats []format.Format
}

// OpenSource opens source as format.Open does.
func (s trustSources) OpenSource(source string) (content.Fetcher, error) {
	return format.Open(s.Registries, s.formats, source)
}

// CheckMirrorTrust checks, in the mirror (mirror overrides the locations
// the lock records; it may be nil), every signature, attestation and SBOM
// l records, and pol's required signatures, as ferry verify does. Any
// disagreement is an error that exits with code 3, listing each; install
// calls it before writing anything.
func (e *Env) CheckMirrorTrust(ctx context.Context, pol *trust.Policy, l *lock.Lock, mirror *relocate.Mapping) error {
	var problems []string
	for _, p := range l.Resolved() {
		if p.Signatures == nil && pol.Rule(p.Source) == nil {
			continue
		}
		name := verify.MirrorRepo(p, mirror)
		if name == "" {
			continue // not mirrored: install reports it
		}
		repo, err := e.Client.Repository(name)
		if err != nil {
			return err
		}
		findings, _, err := trust.CheckMirror(ctx, repo, name, p, pol)
		if err != nil {
			return err
		}
		for _, f := range findings {
			problems = append(problems, fmt.Sprintf("%s: %s: %s", p.Source, f.Ref, f.Detail))
		}
	}
	if len(problems) > 0 {
		return errkind.Markf(errkind.Mismatch, "refusing to install: %d signature problems:\n%s", len(problems), strings.Join(problems, "\n"))
	}
	return nil
}
