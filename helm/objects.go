package helm

import "github.com/ferryhq/ferry/kubeimages"

// ImagePath is a user-declared place of an image in objects of one kind
// (ferry.yaml `helm: {imagePaths: [{apiVersion, kind, path}]}`); see
// kubeimages.ImagePath.
type ImagePath = kubeimages.ImagePath

// objectImages returns the images one rendered document deploys, and the
// images its containers' flags name for an operator to deploy at run
// time (kubeimages.Images, shared with ferry.yaml's `images: [{manifests:
// DIR}]`).
func objectImages(doc string, paths []ImagePath) (images, runtime []string, err error) {
	return kubeimages.Images(doc, paths)
}
