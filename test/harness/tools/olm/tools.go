//go:build tools

// Package tools pins OLM's olm-operator and catalog-operator for the test harness build.
package tools

import (
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/catalog"
	_ "github.com/operator-framework/operator-lifecycle-manager/cmd/olm"
)
