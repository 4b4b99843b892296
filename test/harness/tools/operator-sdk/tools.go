//go:build tools

// Package tools pins operator-sdk, whose `bundle validate` is the OLM bundle validator the
// bundle tests run.
package tools

import _ "github.com/operator-framework/operator-sdk/cmd/operator-sdk"
