//go:build tools

// Package tools pins Helm 3: the chart under deploy/helm/ is linted, rendered, installed,
// upgraded and uninstalled with the real helm in the tests.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
