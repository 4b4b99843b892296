//go:build tools

// Package tools pins krew and its manifest validator: the tests install the plugin's
// generated krew manifest with krew itself and check it with krew's own validator.
package tools

import (
	_ "sigs.k8s.io/krew/cmd/krew"
	_ "sigs.k8s.io/krew/cmd/validate-krew-manifest"
)
