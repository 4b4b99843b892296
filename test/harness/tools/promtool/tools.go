//go:build tools

// Package tools pins promtool for the monitoring tests (test/monitoring/): build-control-plane.sh
// promtool builds cmd/promtool from the same Prometheus module version as tools/prometheus
// (v0.315.1 = Prometheus 3.15.1; test/monitoring/promtool.test.ts checks the two agree), in
// a module of its own because promtool needs a few modules Prometheus does not (jsondiff, pprof).
package tools

import _ "github.com/prometheus/prometheus/cmd/promtool"
