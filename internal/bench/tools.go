package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Peer is a copy tool ferry is compared with.
type Peer struct {
	// Name is the tool and its copy command, as reported ("crane copy").
	Name string
	// Bin is the executable's name on PATH.
	Bin string
	// Args are the arguments before the source and destination.
	Args []string
	// Scheme prefixes both references ("docker://" for skopeo).
	Scheme string
	// VersionArgs print the tool's version.
	VersionArgs []string
	// Path is the executable found; empty when unavailable.
	Path string
	// Version is the tool's version output, first line.
	Version string
	// Unavailable says why the tool cannot run here; empty when it can.
	Unavailable string
	// Env is added to the tool's environment.
	Env []string
	// Prepare runs before each copy into a new registry, untimed (regctl
	// must be told a host speaks plain HTTP).
	Prepare func(ctx context.Context, hosts ...string) error
}

// Peers returns the peer tools of PRODUCT.md's W1, looked up on PATH.
// reasons maps a tool's binary name to why the setup script could not
// install it. workDir holds tool configuration (regctl's).
func Peers(ctx context.Context, reasons map[string]string, workDir string) []*Peer {
	regctlConfig := "REGCTL_CONFIG=" + workDir + "/regctl-config.json"
	peers := []*Peer{
		{Name: "crane copy", Bin: "crane", Args: []string{"copy"}, VersionArgs: []string{"version"}},
		{Name: "oras copy", Bin: "oras", Args: []string{"copy", "--from-plain-http", "--to-plain-http"}, VersionArgs: []string{"version"}},
		{Name: "regctl image copy", Bin: "regctl", Args: []string{"image", "copy"}, VersionArgs: []string{"version", "--format", "{{.VCSTag}}"}, Env: []string{regctlConfig}},
		{
			Name: "skopeo copy --all", Bin: "skopeo", Scheme: "docker://", VersionArgs: []string{"--version"},
			Args: []string{"--insecure-policy", "copy", "--all", "--preserve-digests", "--quiet", "--src-tls-verify=false", "--dest-tls-verify=false"},
		},
	}
	for _, p := range peers {
		if r := reasons[p.Bin]; r != "" {
			p.Unavailable = r
			continue
		}
		path, err := exec.LookPath(p.Bin)
		if err != nil {
			p.Unavailable = p.Bin + " not found on PATH"
			continue
		}
		p.Path = path
		cmd := exec.CommandContext(ctx, path, p.VersionArgs...)
		cmd.Env = append(os.Environ(), p.Env...)
		out, _ := cmd.CombinedOutput()
		p.Version, _, _ = strings.Cut(strings.TrimSpace(string(out)), "\n")
	}
	for _, p := range peers {
		if p.Bin == "regctl" && p.Path != "" {
			path := p.Path
			p.Prepare = func(ctx context.Context, hosts ...string) error {
				for _, h := range hosts {
					cmd := exec.CommandContext(ctx, path, "registry", "set", h, "--tls", "disabled")
					cmd.Env = append(os.Environ(), regctlConfig)
					if out, err := cmd.CombinedOutput(); err != nil {
						return fmt.Errorf("regctl registry set %s: %v: %s", h, err, out)
					}
				}
				return nil
			}
		}
	}
	return peers
}

// Line is one copy as xargs -L 1 passes it: "SRC DST".
func (p *Peer) Line(src, dst string) string { return p.Scheme + src + " " + p.Scheme + dst }

// Exec is one measured command run.
type Exec struct {
	// Wall is the elapsed time.
	Wall time.Duration
	// MaxRSS is the peak resident set size in bytes of the process and
	// every descendant it waited for (ru_maxrss, as GNU time reports it
	// with %M: see TimeBin).
	MaxRSS int64
	// CPU is the user and system CPU time of the process and every
	// descendant it waited for (wait4's rusage): unlike Wall, it hardly
	// changes with what else the machine runs.
	CPU time.Duration
	// Err is set when the command failed; Stderr holds its last output.
	Err    error
	Stdout []byte
	Stderr string
}

// TimeBin is GNU time, through which Run starts commands to measure their
// peak RSS; empty falls back to wait4's ru_maxrss. A Go program's children
// start as a CLONE_VM copy of it, and Linux carries that address space's
// high-water mark into the exec'd program's ru_maxrss, so without a small
// intermediate process every figure would be at least the driver's own
// RSS. GNU time forks from its own small address space.
var TimeBin string

// Run runs argv in dir with extra environment and stdin, measuring wall
// time and peak RSS.
func Run(ctx context.Context, dir string, env []string, stdin []byte, argv ...string) Exec {
	var rssFile string
	if TimeBin != "" {
		f, err := os.CreateTemp("", "bench-rss-")
		if err == nil {
			rssFile = f.Name()
			f.Close()
			defer os.Remove(rssFile)
			argv = append([]string{TimeBin, "-f", "%M", "-o", rssFile}, argv...)
		}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	e := Exec{Wall: time.Since(start), Stdout: stdout.Bytes()}
	if cmd.ProcessState != nil {
		e.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if rssFile != "" {
		if b, err := os.ReadFile(rssFile); err == nil {
			lines := strings.Fields(string(b))
			if len(lines) > 0 {
				if kb, err := strconv.ParseInt(lines[len(lines)-1], 10, 64); err == nil {
					e.MaxRSS = kb * 1024
				}
			}
		}
	} else if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			e.MaxRSS = ru.Maxrss * 1024
		}
	}
	if err != nil {
		e.Err = err
		s := strings.TrimSpace(stderr.String())
		if len(s) > 600 {
			s = "…" + s[len(s)-600:]
		}
		e.Stderr = s
	}
	return e
}
