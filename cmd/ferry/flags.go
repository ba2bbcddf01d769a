package main

import (
	"errors"
	"github.com/ferryhq/ferry/trust"

	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/ferryhq/ferry"
	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/crossplane"
	"github.com/ferryhq/ferry/exitcode"
	"github.com/ferryhq/ferry/format"
	"github.com/ferryhq/ferry/formats"
	"github.com/ferryhq/ferry/mirrorset"
	"github.com/ferryhq/ferry/mixin"
	"github.com/ferryhq/ferry/ociref"
	"github.com/ferryhq/ferry/porter"
	"github.com/ferryhq/ferry/progress"
	"github.com/ferryhq/ferry/redact"
	"github.com/ferryhq/ferry/relocate"
	"github.com/ferryhq/ferry/resolve"
)

// globalFlags are the flags every command shares.
type globalFlags struct {
	output         string
	jobs           int
	metadataJobs   int
	plainHTTP      []string
	caFile         string
	registryConfig string
	quiet          bool
	logLevel       string
	// defaultRegistry qualifies crossplane.yaml dependencies written
	// without a registry.
	defaultRegistry string
	// versionStrategy is Porter's version strategy.
	versionStrategy string
	// bundleMixins locks the mixins every resolved bundle records.
	bundleMixins bool
	// retries, retryMaxTime, connectTimeout and readTimeout shape the
	// registry client's retries and timeouts (client.Options).
	retries        int
	retryMaxTime   time.Duration
	connectTimeout time.Duration
	readTimeout    time.Duration
	// verifyKeys (--verify-key) and trustedRoot (--trusted-root) add to
	// ferry.yaml's trust policy (package trust).
	verifyKeys  []string
	trustedRoot string
	// untrusted are the packages of this run no trust rule matches, under
	// trust.default: warn (checkTrustDefault); reports list them.
	untrusted []trust.Unmatched
	// config (--config) is the ferry.yaml whose settings apply to ROOTs
	// given on the command line.
	config string
	// mirrorSources (--mirror-source HOST=LOCATION) read a source from
	// its mirrors first; offline (--offline) never reads a source itself.
	mirrorSources []string
	offline       bool
	// sel are the tag selection flags of lock, mirror and resolve
	// (registerSelection).
	sel selectionFlags

	// rep draws the progress of the running command (startProgress);
	// while it is set, progress lines and log lines go through it. Log
	// lines come from the client's goroutines: it is read atomically.
	rep atomic.Pointer[progress.Reporter]
}

// settings returns the format sections the flags set, merged over what an
// input file says (mirrorset.FromArgs).
func (g *globalFlags) settings() (*mirrorset.MirrorSet, error) {
	m := &mirrorset.MirrorSet{Config: g.config}
	if g.versionStrategy != "" {
		if err := m.SetSection("porter", map[string]string{"versionStrategy": g.versionStrategy}); err != nil {
			return nil, err
		}
	}
	if g.defaultRegistry != "" {
		if err := m.SetSection("crossplane", map[string]string{"defaultRegistry": g.defaultRegistry}); err != nil {
			return nil, err
		}
	}
	if g.bundleMixins {
		if err := m.SetSection(mixin.KeyBundleMixins, true); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// inputs returns the MirrorSet named by ROOTs (see mirrorset.FromArgs),
// with the flags' settings.
func (g *globalFlags) inputs(args []string, version string) (*mirrorset.MirrorSet, string, error) {
	settings, err := g.settings()
	if err != nil {
		return nil, "", err
	}
	ms, input, err := mirrorset.FromArgs(args, version, formats.All(), settings)
	if err != nil {
		return nil, "", err
	}
	if err := g.tarballRoots(ms, input); err != nil {
		return nil, "", err
	}
	if err := checkConstraints(ms, input); err != nil {
		return nil, "", err
	}
	if err := g.applySelection(ms, input); err != nil {
		return nil, "", err
	}
	return ms, input, nil
}

// selectionFlags select tags of ROOT repositories given on the command
// line, as ferry.yaml's `images:` entries do (match, exclude, newest;
// --version is then their range).
type selectionFlags struct {
	match   []string
	exclude []string
	newest  int
}

func (s selectionFlags) set() bool {
	return len(s.match) > 0 || len(s.exclude) > 0 || s.newest != 0
}

// registerSelection adds the tag selection flags to c.
func (g *globalFlags) registerSelection(c *cobra.Command) {
	f := c.Flags()
	f.StringArrayVar(&g.sel.match, "match", nil, "select every tag of each ROOT repository matching this regular expression (repeatable: any of them), as ferry.yaml images: match; with --version, among the tags in that range")
	f.StringArrayVar(&g.sel.exclude, "exclude-tags", nil, "leave out the tags matching this regular expression (repeatable), as ferry.yaml images: exclude")
	f.IntVar(&g.sel.newest, "newest", 0, "keep the newest N tags selected (by version), as ferry.yaml images: newest")
}

// applySelection turns every ROOT reference of ms into a tag selection
// of its repository, locked as images, when selection flags are given.
func (g *globalFlags) applySelection(ms *mirrorset.MirrorSet, input string) error {
	if !g.sel.set() {
		return nil
	}
	if input != "" {
		return exitcode.BadInput("--match, --exclude-tags and --newest select tags of ROOT references; in %s, write them in an images: entry", input)
	}
	for i, p := range ms.Packages {
		sel := &resolve.TagSelection{Match: g.sel.match, Exclude: g.sel.exclude, Newest: g.sel.newest}
		if p.Version != "" {
			sel.Ranges = []string{p.Version}
		}
		if err := sel.Check(); err != nil {
			return exitcode.BadInput("%s: %w", p.Ref, err)
		}
		if r, err := ociref.ParseNormalized(p.Ref, ""); err != nil || r.Tag != "" || r.Digest != "" {
			return exitcode.BadInput("%s: --match, --exclude-tags and --newest select tags of a repository: name it without tag or digest", p.Ref)
		}
		ms.Packages[i].Version, ms.Packages[i].Kind, ms.Packages[i].Select = "", format.KindImage, sel
	}
	return nil
}

// checkConstraints rejects, before any registry is contacted, a root's
// version constraint that does not parse (exit 2): from --version, or
// from the input file. "latest" is every version, as resolve reads it
// (resolve/version.go constraintOf).
func checkConstraints(ms *mirrorset.MirrorSet, input string) error {
	for _, p := range ms.Packages {
		c := strings.TrimSpace(p.Version)
		if c == "" || c == "latest" {
			continue
		}
		if _, err := semver.NewConstraint(c); err != nil {
			from := "--version"
			if input != "" {
				from = input
			}
			return exitcode.BadInput("%s: %s: invalid version constraint %q: %w", from, p.Ref, p.Version, err)
		}
	}
	return nil
}

func (g *globalFlags) register(c *cobra.Command) {
	f := c.PersistentFlags()
	f.StringVarP(&g.output, "output", "o", "", "output format: text or json (resolve: tree, json, dot or plan)")
	f.IntVarP(&g.jobs, "jobs", "j", 8, "maximum concurrent registry operations")
	f.IntVar(&g.metadataJobs, "metadata-jobs", resolve.DefaultConcurrency, "maximum registry reads in flight while resolving the closure (tag lists, manifests, package metadata), apart from -j")
	f.StringArrayVar(&g.plainHTTP, "plain-http", nil, "speak plain HTTP to every registry (a switch, as in oras), or with --plain-http=HOST to that host only (repeatable; loopback hosts need no flag)")
	// A bare --plain-http is a switch: NoOptDefVal keeps it from taking
	// the next argument (a ROOT) as its value, as oras's bool flag does
	// (oras cmd/oras/internal/option/remote.go); --plain-http=HOST still
	// names one host.
	f.Lookup("plain-http").NoOptDefVal = client.PlainHTTPAll
	f.StringVar(&g.caFile, "ca-file", "", "PEM file of extra root certificates for registry TLS")
	f.StringVar(&g.registryConfig, "registry-config", "", "docker config.json with registry credentials (default $DOCKER_CONFIG/config.json or ~/.docker/config.json)")
	f.BoolVarP(&g.quiet, "quiet", "q", false, "print only results and errors")
	f.StringVar(&g.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&g.versionStrategy, "version-strategy", "", "how a Porter dependency's version is chosen in its range: exact (the reference's tag; Porter's default), max-patch, max-minor, min or highest (default: ferry.yaml porter.versionStrategy, else $"+porter.StrategyEnv+", else exact)")
	f.StringVar(&g.defaultRegistry, "default-registry", "", "registry for crossplane.yaml dependencies written without one (default: the one the Crossplane versions of its spec.crossplane.version give, else "+crossplane.DefaultRegistry+"; ferry.yaml: crossplane.defaultRegistry)")
	f.IntVar(&g.retries, "retries", 5, "retries of a registry request or blob copy that fails transiently (connection lost, timeout, 408, 429, 5xx; never a full disk or quota); 0 disables retries")
	f.DurationVar(&g.retryMaxTime, "retry-max-time", 2*time.Minute, "stop retrying one request or blob copy this long after its first try")
	f.DurationVar(&g.connectTimeout, "connect-timeout", client.DefaultConnectTimeout, "limit for opening a connection to a registry, and for its TLS handshake")
	f.DurationVar(&g.readTimeout, "read-timeout", client.DefaultReadTimeout, "limit for waiting for a registry's response headers, and for any byte of a response body (a stalled blob download is resumed)")
	f.StringArrayVar(&g.verifyKeys, "verify-key", nil, "cosign public key (repeatable): lock and mirror require every package to be signed with one of them, unless a ferry.yaml trust rule covers it")
	f.StringVar(&g.trustedRoot, "trusted-root", "", "Sigstore trusted_root.json for keyless trust rules (default: ferry.yaml trust.trustedRoot)")
	f.StringVar(&g.config, "config", "", "ferry.yaml whose settings (mirrors, values, replace, exclude, trust, repositories…) apply to the ROOTs given (default: the ferry.yaml beside a local ROOT, else the working directory's); with no ROOT, the input file")
	f.StringArrayVar(&g.mirrorSources, "mirror-source", nil, "read a source from a mirror first: HOST=LOCATION, HOST/PATH=LOCATION or REPOURL=URL (repeatable, tried in order, the source itself last; replaces ferry.yaml mirrors: for that HOST)")
	f.BoolVar(&g.offline, "offline", false, "never read a source itself, only its mirrors (ferry.yaml mirrors:, --mirror-source)")
	f.BoolVar(&g.bundleMixins, "bundle-mixins", false, "lock the Porter mixins every resolved bundle records, not only those ferry.yaml names (ferry.yaml: bundleMixins: true)")
}

// env builds the pipeline environment from the flags.
func (g *globalFlags) env() (*ferry.Env, error) {
	if g.jobs < 1 {
		return nil, exitcode.BadInput("-j must be at least 1")
	}
	if g.metadataJobs < 1 {
		return nil, exitcode.BadInput("--metadata-jobs must be at least 1")
	}
	c, err := g.client()
	if err != nil {
		return nil, err
	}
	sources, err := g.mirrorSourceFlags()
	if err != nil {
		return nil, err
	}
	return &ferry.Env{Client: c, Formats: formats.All(), Concurrency: g.jobs, MetadataConcurrency: g.metadataJobs, Warn: func(msg string) { warn([]string{msg}) }, Progress: g.reporter,
		MirrorSources: sources, Offline: g.offline}, nil
}

// mirrorSourceFlags parses --mirror-source HOST=LOCATION: the locations
// of one HOST in the order given.
func (g *globalFlags) mirrorSourceFlags() (map[string][]string, error) {
	if len(g.mirrorSources) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, s := range g.mirrorSources {
		host, loc, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(host) == "" || strings.TrimSpace(loc) == "" {
			return nil, exitcode.BadInput("--mirror-source %q: want HOST=LOCATION (docker.io=registry.internal/dockerhub)", s)
		}
		out[host] = append(out[host], loc)
	}
	return out, nil
}

// client builds the registry client from --plain-http, --ca-file,
// --registry-config, --log-level, --retries, --retry-max-time,
// --connect-timeout and --read-timeout.
func (g *globalFlags) client() (*client.Client, error) {
	log, err := g.logger()
	if err != nil {
		return nil, err
	}
	if g.retries < 0 {
		return nil, exitcode.BadInput("--retries %d: want 0 or more", g.retries)
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"--retry-max-time", g.retryMaxTime}, {"--connect-timeout", g.connectTimeout}, {"--read-timeout", g.readTimeout}} {
		if d.d <= 0 {
			return nil, exitcode.BadInput("%s %s: want a positive duration", d.name, d.d)
		}
	}
	c, err := client.New(client.Options{PlainHTTP: g.plainHTTP, CAFile: g.caFile, RegistryConfig: g.registryConfig, Log: log,
		Retry:       client.RetryPolicy{Attempts: g.retries + 1, MaxTime: g.retryMaxTime},
		DialTimeout: g.connectTimeout, TLSHandshakeTimeout: g.connectTimeout,
		ResponseHeaderTimeout: g.readTimeout, IdleReadTimeout: g.readTimeout})
	var caFile *client.CAFileError
	if errors.As(err, &caFile) {
		return nil, exitcode.BadInput("--ca-file %s: %w", caFile.Path, caFile.Err)
	}
	if err != nil {
		return nil, exitcode.With(exitcode.Usage, err)
	}
	return c, nil
}

// logger returns a logger on stderr at --log-level. Log lines never carry
// credentials: the registry client logs no header values.
func (g *globalFlags) logger() (*slog.Logger, error) {
	var level slog.Level
	switch strings.ToLower(g.logLevel) {
	case "debug":
		level = slog.LevelDebug
	case "info", "":
		level = slog.LevelInfo
	case "warn", "warning":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	default:
		return nil, exitcode.BadInput("--log-level %q: want debug, info, warn or error", g.logLevel)
	}
	// Each record is one line, redacted before it reaches the terminal.
	return slog.New(slog.NewTextHandler(redact.NewWriter(stderr{g}), &slog.HandlerOptions{Level: level})), nil
}

// checkOutput rejects an -o value the command does not know.
func (g *globalFlags) checkOutput(allowed ...string) error {
	if g.output == "" {
		return nil
	}
	for _, a := range allowed {
		if g.output == a {
			return nil
		}
	}
	return exitcode.BadInput("-o %s: want one of %v", g.output, allowed)
}

func (g *globalFlags) json() bool { return g.output == "json" }

// progress writes a progress line to stderr unless --quiet.
func (g *globalFlags) progress(format string, args ...any) {
	if g.quiet || !logEnabled(slog.LevelInfo) {
		return
	}
	if rep := g.rep.Load(); rep != nil {
		(*rep).Line(redact.String(fmt.Sprintf(format, args...)))
		return
	}
	fmt.Fprintln(os.Stderr, redact.String(fmt.Sprintf(format, args...)))
}

// startProgress returns the Reporter of the command's long work, on
// stderr: live bars on a terminal, plain lines when stderr is a pipe or a
// file, TERM=dumb or -o json, nothing with --quiet (see
// progress.Choose). stopProgress ends it.
func (g *globalFlags) startProgress() progress.Reporter {
	return g.startPhase(progress.Transfer)
}

// startResolving starts the Reporter of a resolution, whose overall line
// counts packages read and queued (progress.Resolution). It must be
// stopped (stopProgress) before the transfer's Reporter starts.
func (g *globalFlags) startResolving() progress.Reporter {
	return g.startPhase(progress.Resolution)
}

// reporter returns the running Reporter, or progress.Discard: what
// ferry.Env reports to (Env.Progress).
func (g *globalFlags) reporter() progress.Reporter {
	if rep := g.rep.Load(); rep != nil {
		return *rep
	}
	return progress.Discard
}

// startPhase starts the Reporter of phase (see startProgress).
func (g *globalFlags) startPhase(phase progress.Phase) progress.Reporter {
	// --log-level warn or error silences progress as --quiet does.
	mode := progress.Choose(term.IsTerminal(int(os.Stderr.Fd())), g.quiet || !logEnabled(slog.LevelInfo), g.json(), os.Getenv)
	rep := progress.NewPhase(os.Stderr, mode, phase)
	if mode != progress.Silent { // --quiet still lets log lines through
		g.rep.Store(&rep)
	}
	return rep
}

// stopProgress draws the last overall line and returns stderr to plain
// writes.
func (g *globalFlags) stopProgress() {
	if rep := g.rep.Swap(nil); rep != nil {
		(*rep).Close()
	}
}

// stderr writes log lines through the progress Reporter while one runs
// (above the bars), else to os.Stderr.
type stderr struct{ g *globalFlags }

func (w stderr) Write(b []byte) (int, error) {
	if rep := w.g.rep.Load(); rep != nil {
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			(*rep).Line(line)
		}
		return len(b), nil
	}
	return os.Stderr.Write(b)
}

// result writes a line of the command's result to stdout: what was
// resolved, locked, mirrored, verified or installed. Unlike progress, it
// is printed with --quiet and at any --log-level (-o json prints the
// result as JSON instead).
func (g *globalFlags) result(format string, args ...any) {
	fmt.Fprintln(os.Stdout, redact.String(fmt.Sprintf(format, args...)))
}

// minLevel is --log-level: progress lines are info, warnings warn
// (checkLogLevel sets it before a command runs).
var minLevel slog.LevelVar

// logEnabled reports whether --log-level lets lines of level through.
func logEnabled(level slog.Level) bool { return level >= minLevel.Level() }

// checkLogLevel validates --log-level before any command runs (exit 2)
// and sets the level progress lines and warnings are filtered at.
func (g *globalFlags) checkLogLevel() error {
	level, err := parseLogLevel(g.logLevel)
	if err != nil {
		return err
	}
	minLevel.Set(level)
	return nil
}

// parseLogLevel reads a --log-level value.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, exitcode.BadInput("--log-level %q: want debug, info, warn or error", s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func warn(warnings []string) {
	if !logEnabled(slog.LevelWarn) {
		return
	}
	for _, w := range warnings {
		fmt.Fprintln(os.Stderr, "warning: "+redact.String(w))
	}
}

// cobraExactArgs is cobra.ExactArgs with ferry's usage exit code.
func cobraExactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			if n == 0 {
				err = fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)
				if len(args) == 1 && strings.HasSuffix(args[0], ".lock") && cmd.Flags().Lookup("lock") != nil {
					err = fmt.Errorf("%w: to name the lock, pass --lock %s", err, args[0])
				}
			}
			return exitcode.BadInput("%w\nusage: %s (see %s --help)", err, cmd.UseLine(), cmd.CommandPath())
		}
		return nil
	}
}

// fileExists reports whether path names an existing file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// mirrorFlag parses --mirror: nil when it is not given.
func mirrorFlag(mirror string) (*relocate.Mapping, error) {
	if mirror == "" {
		return nil, nil
	}
	m, err := relocate.ParseMapping(mirror)
	if err != nil {
		return nil, err
	}
	m = m.WithFormats(formats.All())
	return &m, nil
}
