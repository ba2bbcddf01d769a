package authtest

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// HelperName is the credential helper WriteCredHelper and WriteCredsStore
// install: docker-credential-ferrytest.
const HelperName = "ferrytest"

// WriteDockerConfig writes dir/config.json with an "auths" entry for host
// holding user and pass, the way `docker login` does without a credential
// store, and returns its path.
func WriteDockerConfig(t testing.TB, dir, host, user, pass string) string {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	return writeConfig(t, dir, map[string]any{"auths": map[string]any{host: map[string]string{"auth": auth}}})
}

// WriteCredHelper installs a fake credential helper,
// dir/docker-credential-ferrytest, that knows user and pass for host, puts
// dir first on PATH for the rest of the test, and writes dir/config.json
// naming the helper for host in "credHelpers". It returns the config path.
// The helper keeps what it is given with "store" and forgets it with
// "erase"; every call is appended to HelperLog(dir). It changes this
// process's PATH (t.Setenv), so a parallel test, which may not, uses
// CredHelper and PathEnv instead.
func WriteCredHelper(t testing.TB, dir, host, user, pass string) string {
	t.Helper()
	t.Setenv("PATH", strings.TrimPrefix(PathEnv(dir), "PATH="))
	return CredHelper(t, dir, host, user, pass, false)
}

// WriteCredsStore is WriteCredHelper with the helper named in "credsStore"
// (the store for every host) instead of "credHelpers".
func WriteCredsStore(t testing.TB, dir, host, user, pass string) string {
	t.Helper()
	t.Setenv("PATH", strings.TrimPrefix(PathEnv(dir), "PATH="))
	return CredHelper(t, dir, host, user, pass, true)
}

// CredHelper writes WriteCredHelper's helper and config into dir (naming
// the helper in "credsStore" when store is set, else in "credHelpers"
// for host) without touching this process's environment, and returns the
// config path. A test that runs ferry as a process gives it PathEnv(dir),
// and so may run in parallel.
func CredHelper(t testing.TB, dir, host, user, pass string, store bool) string {
	t.Helper()
	writeHelper(t, dir, host, user, pass)
	cfg := map[string]any{"credHelpers": map[string]string{host: HelperName}}
	if store {
		cfg = map[string]any{"credsStore": HelperName}
	}
	return writeConfig(t, dir, cfg)
}

// PathEnv is the environment entry under which a process finds the
// helpers CredHelper writes in dir: "PATH=" with dir first, then this
// process's PATH.
func PathEnv(dir string) string {
	return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
}

// HelperLog returns the path of the log of helper calls ("get HOST",
// "store", "erase HOST", "list"), one a line.
func HelperLog(dir string) string { return filepath.Join(dir, "helper.log") }

func writeConfig(t testing.TB, dir string, cfg map[string]any) string {
	t.Helper()
	b, err := json.MarshalIndent(cfg, "", "\t")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return path
}

func writeHelper(t testing.TB, dir, host, user, pass string) {
	t.Helper()
	store := filepath.Join(dir, "helper-store.json")
	entry, err := json.Marshal(map[string]string{"ServerURL": host, "Username": user, "Secret": pass})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(store, entry, 0o600); err != nil {
		t.Fatal(err)
	}
	script := `#!/bin/sh
# Fake docker credential helper for tests (ferry internal/authtest).
store=` + shQuote(store) + `
log=` + shQuote(HelperLog(dir)) + `
case "$1" in
get)
	server=$(cat)
	echo "get $server" >>"$log"
	if [ ! -f "$store" ] || ! grep -q "\"ServerURL\":\"$server\"" "$store"; then
		echo "credentials not found in native keychain"
		exit 1
	fi
	cat "$store"
	;;
store)
	echo "store" >>"$log"
	cat >"$store"
	;;
erase)
	server=$(cat)
	echo "erase $server" >>"$log"
	rm -f "$store"
	;;
list)
	echo "list" >>"$log"
	echo "{}"
	;;
*)
	echo "unknown command $1" >&2
	exit 1
	;;
esac
`
	if err := os.WriteFile(filepath.Join(dir, "docker-credential-"+HelperName), []byte(script), 0o700); err != nil {
		t.Fatalf("authtest: %v", err)
	}
}

func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
