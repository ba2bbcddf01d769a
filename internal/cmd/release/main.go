// Command release is the part of `make release` (scripts/release.sh) that
// the shell cannot do well: an SPDX SBOM of each binary, from the build
// information the Go toolchain records in it, and ferry's container image,
// a static binary on an empty base, written as an OCI image layout.
//
//	release sbom BINARY...             writes BINARY.spdx.json beside each
//	release image -out DIR -version V linux/amd64=BIN [linux/arm64=BIN...]
//	release push LAYOUT TAG HOST/REPO:TAG   (loopback, plain HTTP); prints the digest
//
// The image holds what the documented Kubernetes Job needs and nothing
// else: /usr/local/bin/ferry, the CA bundle of the machine that builds it
// (/etc/ssl/certs/ca-certificates.crt), a passwd entry for the non-root
// user 65532 and writable /tmp and /work. ferry itself reads the lock from
// the mirror (--lock oci://…) and computes its shard (--shard auto/N), so
// the Job needs no shell.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "sbom":
		for _, bin := range os.Args[2:] {
			if err = writeSBOM(bin, bin+".spdx.json"); err != nil {
				break
			}
			fmt.Println("release: " + bin + ".spdx.json")
		}
	case "image":
		fs := flag.NewFlagSet("image", flag.ExitOnError)
		out := fs.String("out", "", "OCI layout directory to write")
		version := fs.String("version", "", "the image's tag and version label")
		certs := fs.String("ca-certs", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to put in the image (empty: none)")
		_ = fs.Parse(os.Args[2:])
		if *out == "" || *version == "" || fs.NArg() == 0 {
			usage()
		}
		var desc string
		desc, err = buildImage(imageOptions{Out: *out, Version: *version, CACerts: *certs, Binaries: fs.Args()})
		if err == nil {
			fmt.Printf("release: image %s:%s %s\n", *out, *version, desc)
		}
	case "push":
		if len(os.Args) != 5 {
			usage()
		}
		var d string
		if d, err = pushLayout(os.Args[2], os.Args[3], os.Args[4]); err == nil {
			fmt.Println(d)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release: "+err.Error())
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: release sbom BINARY... | release image -out DIR -version V OS/ARCH=BINARY... | release push LAYOUT TAG HOST/REPO:TAG")
	os.Exit(2)
}
