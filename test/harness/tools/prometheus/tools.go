//go:build tools

// Package tools pins Prometheus for `npm start` and the operator tests on machines without
// a packaged one: build-control-plane.sh prometheus builds cmd/prometheus from this module.
// v0.315.1 is Prometheus 3.15.1 (its Go module versions are v0.3MM.P for release 3.MM.P),
// the newest whose go line (1.26.0) stays within the README's Go floor.
package tools

import _ "github.com/prometheus/prometheus/cmd/prometheus"
