// Command benchbound is W1's bound in `make bench` (issue 14): the minimal
// client of package internal/bench/bound, as a process of its own so that
// its time, like every tool's, includes starting up. It imports only that
// package, so it starts in milliseconds.
//
//	benchbound --from HOST[/PREFIX] --to HOST[/PREFIX] REPO:TAG...
//
// Both registries speak plain HTTP and need no credentials; the mirror
// must be empty.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/ferryhq/ferry/internal/bench/bound"
)

func main() {
	from := flag.String("from", "", "source registry, HOST[/PREFIX]")
	to := flag.String("to", "", "mirror registry, HOST[/PREFIX]")
	flag.Parse()
	if *from == "" || *to == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: benchbound --from HOST[/PREFIX] --to HOST[/PREFIX] REPO:TAG...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := bound.Copy(ctx, *from, *to, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "benchbound:", err)
		os.Exit(1)
	}
}
