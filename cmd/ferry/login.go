package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ferryhq/ferry/exitcode"
)

func newLoginCmd(g *globalFlags) *cobra.Command {
	var user string
	var passwordStdin bool
	c := &cobra.Command{
		Use:   "login HOST -u USER --password-stdin",
		Short: "Log in to a registry and store the credentials",
		Long: `Login checks USER and the password read from standard input against the
registry at HOST and, when the registry accepts them, stores them the way
"docker login" does: in the credential helper the config names for HOST
(credHelpers or credsStore), else in the "auths" section of
--registry-config, $DOCKER_CONFIG/config.json or ~/.docker/config.json.
Rejected credentials are not stored. The password is never taken from the
command line, where other users and shell history could see it.`,
		Example: `  echo "$MIRROR_PASSWORD" | ferry login registry.internal -u ci --password-stdin
  ferry login 127.0.0.1:5443 -u admin --password-stdin --ca-file ca.pem < password.txt`,
		Args: cobraExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			host, err := loginHost(args[0])
			if err != nil {
				return err
			}
			if user == "" {
				return exitcode.BadInput("login: -u USER is required")
			}
			if !passwordStdin {
				return exitcode.BadInput("login: pass the password on standard input with --password-stdin")
			}
			password, err := readPassword(cmd.InOrStdin())
			if err != nil {
				return err
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
	c.Flags().StringVarP(&user, "username", "u", "", "user name")
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
			if err := c.Logout(cmd.Context(), host); err != nil {
				return err
			}
			g.progress("removed the credentials for %s (config %s)", host, c.ConfigPath())
			return nil
		},
	}
}

// loginHost returns the HOST[:PORT] of a login argument. Like docker, it
// accepts an https:// URL of the registry ("https://host/v2/"). It refuses
// credentials in the argument without quoting them.
func loginHost(arg string) (string, error) {
	host := arg
	if strings.Contains(host, "@") {
		return "", exitcode.BadInput("registry host must not contain credentials (user:password@host); pass -u USER and --password-stdin")
	}
	if rest, ok := strings.CutPrefix(host, "https://"); ok {
		host = rest
		for _, suffix := range []string{"/v2/", "/v1/", "/v2", "/v1", "/"} {
			host = strings.TrimSuffix(host, suffix)
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
