//go:build tools

// Package tools pins opm, which renders the bundle and validates the file-based catalog in
// the bundle tests.
package tools

import _ "github.com/operator-framework/operator-registry/cmd/opm"
