//go:build tools

// Package tools pins kwok for the test harness build.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
