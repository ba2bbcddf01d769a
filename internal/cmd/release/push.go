package main

import (
	"context"
	"fmt"

	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content/oci"
	"oras.land/oras-go/v2/registry/remote"
)

// pushLayout copies the layout's tag to ref (HOST/REPO:TAG) on a loopback
// registry over plain HTTP — `ferry serve` during `make release`, where
// cosign signs the image and `ferry mirror --to-archive` then carries the
// image and its signature into the release archive.
func pushLayout(layout, tag, ref string) (string, error) {
	ctx := context.Background()
	store, err := oci.New(layout)
	if err != nil {
		return "", err
	}
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return "", err
	}
	repo.PlainHTTP = true
	desc, err := oras.Copy(ctx, store, tag, repo, repo.Reference.Reference, oras.DefaultCopyOptions)
	if err != nil {
		return "", fmt.Errorf("pushing %s:%s to %s: %w", layout, tag, ref, err)
	}
	return desc.Digest.String(), nil
}
