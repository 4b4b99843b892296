//go:build tools

// Package tools pins etcd for the test harness build.
package tools

import _ "go.etcd.io/etcd/server/v3"
