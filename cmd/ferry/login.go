package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/exitcode"
)

func newLoginCmd(g *globalFlags) *cobra.Command {
	var user, passwordFlag string
	var passwordStdin bool
	c := &cobra.Command{
		Use:   "login HOST [-u USER] [-p PASSWORD | --password-stdin]",
		Short: "Log in to a registry and store the credentials",
		Long: `Login checks USER and the password against the registry at HOST and, when
the registry accepts them, stores them the way "docker login" does: in the
credential helper the config names for HOST (credHelpers or credsStore),
else in the "auths" section of --registry-config, $DOCKER_CONFIG/config.json
or ~/.docker/config.json. Rejected credentials are not stored.

As with docker and oras: --password-stdin reads the password from standard
input; on a terminal, the user name (without -u) and the password are
prompted for, the password without echo; -p PASSWORD works but is
warned about, since other users and shell history can see it. HOST is
HOST[:PORT], or a URL of the registry: https://, or http:// for a loopback
host.`,
		Example: `  ferry login registry.internal                 # prompts for user name and password
  echo "$MIRROR_PASSWORD" | ferry login registry.internal -u ci --password-stdin
  ferry login 127.0.0.1:5443 -u admin --password-stdin --ca-file ca.pem < password.txt`,
		Args: cobraExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := loginHost(args[0])
			if err != nil {
				return err
			}
			if passwordStdin && passwordFlag != "" {
				return exitcode.BadInput("login: give -p or --password-stdin, not both")
			}
			tty := isTerminal(cmd.InOrStdin())
			if user == "" {
				if passwordStdin || !tty {
					return exitcode.BadInput("login: -u USER is required (standard input is not a terminal to prompt on)")
				}
				if user, err = promptLine(cmd, "Username: "); err != nil {
					return err
				}
			}
			var password string
			switch {
			case passwordFlag != "":
				// docker cli/command/registry/login.go warns the same way.
				warn([]string{"using -p on the command line is insecure: other users and shell history can see it; use --password-stdin"})
				password = passwordFlag
			case passwordStdin:
				if password, err = readPassword(cmd.InOrStdin()); err != nil {
					return err
				}
			case tty:
				if password, err = promptPassword(cmd); err != nil {
					return err
				}
			default:
				return exitcode.BadInput("login: standard input is not a terminal: pass the password with --password-stdin (or -p)")
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if err := c.Login(cmd.Context(), host, user, password); err != nil {
				return err
			}
			g.progress("login succeeded: credentials for %s stored (config %s)", host, c.ConfigPath())
			return nil
		},
	}
	c.Flags().StringVarP(&user, "username", "u", "", "user name (prompted for on a terminal)")
	c.Flags().StringVarP(&passwordFlag, "password", "p", "", "password (insecure: prefer --password-stdin, or the prompt on a terminal)")
	c.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from standard input")
	return c
}

func newLogoutCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "logout HOST",
		Short: "Remove the stored credentials for a registry",
		Long: `Logout removes the credentials for HOST from where login stored them: the
credential helper the config names for HOST, or the "auths" section of
--registry-config, $DOCKER_CONFIG/config.json or ~/.docker/config.json.`,
		Example: `  ferry logout registry.internal`,
		Args:    cobraExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := loginHost(args[0])
			if err != nil {
				return err
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			cred, err := c.Credentials().Get(cmd.Context(), credentials.ServerAddressFromRegistry(host))
			if err == nil && cred == auth.EmptyCredential {
				// docker says "Not logged in to HOST" and exits 0.
				g.progress("not logged in to %s: no credentials stored for it (config %s)", host, c.ConfigPath())
				return nil
			}
			if err := c.Logout(cmd.Context(), host); err != nil {
				return err
			}
			g.progress("removed the credentials for %s (config %s)", host, c.ConfigPath())
			return nil
		},
	}
}

// loginHost returns the HOST[:PORT] of a login argument. Like docker, it
// accepts an https:// URL of the registry ("https://host/v2/"), and an
// http:// one for a loopback host (which is spoken to over plain HTTP
// anyway). It refuses credentials in the argument without quoting them.
func loginHost(arg string) (string, error) {
	host := arg
	if strings.Contains(host, "@") {
		return "", exitcode.BadInput("registry host must not contain credentials (user:password@host); pass -u USER and --password-stdin")
	}
	scheme, rest, isURL := strings.Cut(host, "://")
	if isURL && (scheme == "https" || scheme == "http") {
		host = rest
		for _, suffix := range []string{"/v2/", "/v1/", "/v2", "/v1", "/"} {
			host = strings.TrimSuffix(host, suffix)
		}
		if scheme == "http" && !client.IsLoopback(host) {
			return "", exitcode.BadInput("registry %q: http:// only for a loopback host; for another host write HOST and pass --plain-http=HOST", arg)
		}
	}
	switch {
	case strings.Contains(host, "://"):
		return "", exitcode.BadInput("registry host %q: write HOST or HOST:PORT (or an https:// URL)", arg)
	case host == "" || strings.Contains(host, "/"):
		return "", exitcode.BadInput("registry host %q: want HOST or HOST:PORT", arg)
	}
	return host, nil
}

// isTerminal reports whether r is a terminal the user can be prompted on.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// promptLine prompts on stderr and reads one line from the terminal.
func promptLine(cmd *cobra.Command, prompt string) (string, error) {
	fmt.Fprint(cmd.ErrOrStderr(), prompt)
	line, err := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("login: reading the user name: %w", err)
	}
	v := strings.TrimSpace(line)
	if v == "" {
		return "", exitcode.BadInput("login: empty user name")
	}
	return v, nil
}

// promptPassword prompts on stderr and reads the password from the
// terminal without echo, as docker and oras do.
func promptPassword(cmd *cobra.Command) (string, error) {
	fmt.Fprint(cmd.ErrOrStderr(), "Password: ")
	b, err := term.ReadPassword(int(cmd.InOrStdin().(*os.File).Fd()))
	fmt.Fprintln(cmd.ErrOrStderr())
	if err != nil {
		return "", fmt.Errorf("login: reading the password: %w", err)
	}
	if len(b) == 0 {
		return "", exitcode.BadInput("login: empty password")
	}
	return string(b), nil
}

// readPassword reads the first line of r, without its line ending.
func readPassword(r io.Reader) (string, error) {
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("login: reading the password from standard input: %w", err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", exitcode.BadInput("login: empty password on standard input")
	}
	return pw, nil
}
