// Package distribution will define the interfaces for the components of
// docker distribution. The goal is to allow users to reliably package, ship
// and store content related to container images.
//
// This is currently a work in progress. More details are available in the
// README.md.
package distribution
