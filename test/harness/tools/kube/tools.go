//go:build tools

// Package tools pins the Kubernetes commands for the test harness build: the control plane
// and the real node's kubelet and kube-proxy, all from one k8s.io/kubernetes version.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
