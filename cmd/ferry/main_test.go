package main

import (
	"testing"

	"github.com/ferryhq/ferry/internal/clitest"
)

// TestMain removes the ferry binary the end-to-end tests built.
func TestMain(m *testing.M) { clitest.Main(m) }
