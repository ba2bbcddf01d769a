package main

import (
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
)

// TestMain makes this test binary the ferry the end-to-end tests run
// (clitest.Binary links it under the name "ferry"), and removes that link
// afterwards.
func TestMain(m *testing.M) { clitest.Main(m, main) }
