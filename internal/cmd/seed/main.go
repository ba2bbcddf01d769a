// Command seed publishes ferry's standard fixture catalog (see package
// internal/fixture) to a registry and prints each scenario's root, one per
// line: "NAME REFERENCE". `make demo` runs it with
// `go run ./internal/cmd/seed --registry 127.0.0.1:PORT`.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ferryhq/ferry/client"
	"github.com/ferryhq/ferry/internal/fixture"
	"github.com/ferryhq/ferry/mixin/mixintest"
)

func main() {
	registry := flag.String("registry", "", "registry host to seed, such as 127.0.0.1:5000 (required)")
	registryConfig := flag.String("registry-config", "", "docker config.json with credentials (default $DOCKER_CONFIG or ~/.docker/config.json)")
	feedDir := flag.String("feed-dir", "", "also write a Porter mixin feed (exec, helm3) with file:// links into this directory and print its URL")
	flag.Parse()
	if *registry == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: seed --registry HOST[:PORT] [--registry-config FILE]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *feedDir != "" {
		url, err := mixintest.WriteDir(*feedDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "seed:", err)
			os.Exit(1)
		}
		fmt.Printf("mixin-feed %s\n", url)
	}
	if err := run(ctx, *registry, *registryConfig); err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, registry, registryConfig string) error {
	c, err := client.New(client.Options{RegistryConfig: registryConfig})
	if err != nil {
		return err
	}
	cat, err := fixture.Seed(ctx, c, registry)
	if err != nil {
		return err
	}
	for _, r := range cat.Roots() {
		fmt.Printf("%s %s\n", r[0], r[1])
	}
	xp, err := fixture.SeedCrossplane(ctx, c, registry)
	if err != nil {
		return err
	}
	for _, r := range [][2]string{
		{"crossplane-fully-qualified", xp.FullyQualified},
		{"crossplane-org-qualified", xp.OrgQualified},
		{"crossplane-name-only", xp.NameOnly},
		{"crossplane-transitive", xp.Transitive},
		{"crossplane-moved", xp.Moved},
		{"crossplane-digest-conflict", xp.DigestConflict},
	} {
		fmt.Printf("%s %s\n", r[0], r[1])
	}
	return nil
}
