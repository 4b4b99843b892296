#!/usr/bin/env bash
# Builds the real Kubernetes components the test harness runs (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok, and the real node's kubelet and kube-proxy),
# OLM's own validators (operator-sdk, opm), OLM itself (olm), krew (krew,
# validate-krew-manifest), Prometheus (prometheus), Helm 3 (helm), promtool (promtool) and
# prometheus-operator's CRDs (monitoring-crds), and the bench's controller-runtime peer
# (go-peer, test/bench/go-peer: a module with its own source) from Go modules, once, into a cache
# directory outside the repository, and prints that directory. `all` builds the control plane
# and the real node's two; `control-plane` the control plane alone (what the test environment
# starts), `node` the real node's kubelet and kube-proxy alone (what the real-node harness adds:
# .ci/run builds it after the control plane, so the tests start without waiting for it); the
# others are built on request.
#
# Each tool has its own committed wrapper module under test/harness/tools/<name>
# (go.mod + go.sum + a tools.go blank import): k8s.io/kubernetes and etcd's server module
# carry `replace` directives, so `go install pkg@version` is refused, and one module per
# tool keeps their dependency pins apart. The cache key is a hash of the wrapper's
# go.mod and go.sum, so binaries are rebuilt only when a pinned version changes.
#
# Env: AIOPS_CACHE (default ~/.cache/aiops).
# Usage: build-control-plane.sh [all|control-plane|node|etcd|kube|kwok|operator-sdk|opm|validators|olm|krew|prometheus|helm|promtool|monitoring-crds|go-peer]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${AIOPS_CACHE:-$HOME/.cache/aiops}"
BIN="$CACHE/bin"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=readonly -tags=tools"
# The compiler and linker are Go programs: with GOGC 400 they collect a quarter as often. Building
# helm from an empty GOCACHE took 148 CPU-s instead of 186 (-20 %) side by side on this 2-core
# machine, at 952 MiB peak RSS instead of 867. GOMEMLIMIT caps each compile's heap so the biggest
# generated packages still collect in time (two lanes of two compiles stay under 12 GiB).
export GOGC="${GOGC:-400}" GOMEMLIMIT="${GOMEMLIMIT:-3GiB}"
mkdir -p "$BIN"
log() { printf '[build-control-plane] %s\n' "$*" >&2; }

key() { cat "$HERE/tools/$1/go.mod" "$HERE/tools/$1/go.sum" | sha256sum | cut -c1-12; }

# build NAME[@MODULE] OUTPUT_NAMES... -- GO_BUILD_ARGS...
# Builds from the wrapper module tools/MODULE (default NAME) into $BIN/NAME-<key>.
# Every binary is linked with -s -w (no symbol table, no DWARF): nothing here debugs them, and
# the linker skips writing and compressing debug sections (a quarter of a link's time for the
# largest). Go's own tables stay, so a panic still prints a full stack.
build() {
  local name="${1%@*}" mod="${1#*@}"; shift
  local outs=() args=() k dest strip=1
  while [[ "$1" != "--" ]]; do outs+=("$1"); shift; done; shift
  while (( $# )); do
    if [[ "$1" == -ldflags ]]; then args+=(-ldflags "-s -w $2"); strip=0; shift 2; else args+=("$1"); shift; fi
  done
  (( strip )) && args=(-ldflags "-s -w" "${args[@]}")
  set -- "${args[@]}"
  k="$(key "$mod")"; dest="$BIN/$name-$k"
  # One build per tool at a time: concurrent `npm test` runs would otherwise delete each
  # other's output directory.
  exec 9>"$BIN/.$name.lock"; flock 9
  local missing=0
  for o in "${outs[@]}"; do [[ -x "$dest/$o" ]] || missing=1; done
  if (( missing )); then
    log "building $name ($k): ${outs[*]}"
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
    (cd "$HERE/tools/$mod" && go build -trimpath -o "$dest.tmp/" "$@")
    rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  for o in "${outs[@]}"; do ln -sfn "$dest/$o" "$BIN/$o"; done
  exec 9>&-
}

kube_ldflags() {
  local v minor date ld=""
  v=$(awk '$1=="require" && $2=="k8s.io/kubernetes" {print $3}' "$HERE/tools/kube/go.mod")
  minor=$(printf '%s' "$v" | cut -d. -f2)
  date="2000-01-01T00:00:00Z"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $pkg.gitVersion=$v -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    ld+=" -X $pkg.gitCommit=0000000000000000000000000000000000000000 -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  printf '%s' "$ld"
}

what="${1:-all}"
case "$what" in
  all|control-plane|node|etcd|kube|kwok|operator-sdk|opm|validators|olm|krew|prometheus|helm|promtool|monitoring-crds|go-peer) ;;
  *) echo "usage: $0 [all|control-plane|node|etcd|kube|kwok|operator-sdk|opm|validators|olm|krew|prometheus|helm|promtool|monitoring-crds|go-peer]" >&2; exit 2 ;;
esac
control_plane() { [[ "$what" == all || "$what" == control-plane ]]; }
if [[ "$what" == etcd ]] || control_plane; then
  # etcd's main package is its server module root, which `go build` would name "server".
  build etcd etcd -- -o "$BIN/etcd-$(key etcd).tmp/etcd" go.etcd.io/etcd/server/v3
fi
if [[ "$what" == kube ]] || control_plane; then
  build kube kube-apiserver kube-controller-manager kube-scheduler -- -pgo=off -ldflags "$(kube_ldflags)" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
fi
if [[ "$what" == kwok ]] || control_plane; then
  build kwok kwok -- sigs.k8s.io/kwok/cmd/kwok
fi
# The real node's two, from the same wrapper module and flags as kube but into a directory of
# their own: built after the control plane, they reuse its compiled packages (GOCACHE).
if [[ "$what" == node || "$what" == all ]]; then
  build node@kube kubelet kube-proxy -- -pgo=off -ldflags "$(kube_ldflags)" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy
fi
# The validators: upstream builds both with the containers_image_openpgp tag (no gpgme C
# library); opm adds json1 for its sqlite paths, which bundle render/validate never use, so
# CGO stays off. The -X flags stamp `--version` with the pinned tag.
mod_version() { awk -v m="$2" '$1=="require" && $2==m {print $3}' "$HERE/tools/$1/go.mod"; }
if [[ "$what" == operator-sdk || "$what" == validators ]]; then
  v="$(mod_version operator-sdk github.com/operator-framework/operator-sdk)"
  build operator-sdk operator-sdk -- -tags=containers_image_openpgp \
    -ldflags "-X github.com/operator-framework/operator-sdk/internal/version.Version=$v -X github.com/operator-framework/operator-sdk/internal/version.GitVersion=$v" \
    github.com/operator-framework/operator-sdk/cmd/operator-sdk
fi
if [[ "$what" == opm || "$what" == validators ]]; then
  v="$(mod_version opm github.com/operator-framework/operator-registry)"
  build opm opm -- -tags=json1,containers_image_openpgp \
    -ldflags "-X github.com/operator-framework/operator-registry/cmd/opm/version.opmVersion=$v" \
    github.com/operator-framework/operator-registry/cmd/opm
fi
# OLM v0: olm-operator and catalog-operator, plus its CRDs from the same module version
# (deploy/chart/crds, applied server-side by the harness) copied next to the binaries.
if [[ "$what" == olm ]]; then
  build olm olm catalog -- -tags=containers_image_openpgp \
    github.com/operator-framework/operator-lifecycle-manager/cmd/olm \
    github.com/operator-framework/operator-lifecycle-manager/cmd/catalog
  dest="$BIN/olm-$(key olm)"
  if [[ ! -d "$dest/crds" ]]; then
    src="$(cd "$HERE/tools/olm" && go list -m -f '{{.Dir}}' github.com/operator-framework/operator-lifecycle-manager)"
    rm -rf "$dest/crds.tmp"; cp -r "$src/deploy/chart/crds" "$dest/crds.tmp"; chmod -R u+w "$dest/crds.tmp"; mv "$dest/crds.tmp" "$dest/crds"
  fi
  ln -sfn "$dest/crds" "$BIN/olm-crds"
fi
# krew for the plugin's install test. Deliberately not stamped with its tag: krew treats an
# unparseable version as a development build and then never runs its background upgrade
# check (a request to GitHub), even when validate-krew-manifest starts it with a bare env.
if [[ "$what" == krew ]]; then
  build krew krew validate-krew-manifest -- sigs.k8s.io/krew/cmd/krew sigs.k8s.io/krew/cmd/validate-krew-manifest
fi
# Prometheus for `npm start` and the operator tests (scripts/lib/prometheus.ts prefers it to
# one on PATH: the same pinned version everywhere). Only its HTTP API is used, so it is built
# without the builtinassets tag (no web UI, whose assets are not in the module) and with
# remove_all_sd (static and file targets only: no cloud or Kubernetes service discovery
# SDKs, 817 packages to compile instead of 1283). The -X flags stamp `--version` with the
# release (the module's VERSION file) and the module version.
if [[ "$what" == prometheus ]]; then
  v="$(mod_version prometheus github.com/prometheus/prometheus)"
  pv="$(cd "$HERE/tools/prometheus" && go mod download github.com/prometheus/prometheus &&
    cat "$(go list -m -f '{{.Dir}}' github.com/prometheus/prometheus)/VERSION")"
  build prometheus prometheus -- -tags=remove_all_sd \
    -ldflags "-X github.com/prometheus/common/version.Version=$pv -X github.com/prometheus/common/version.Revision=$v -X github.com/prometheus/common/version.Branch=$v" \
    github.com/prometheus/prometheus/cmd/prometheus
fi
# Helm 3 for the chart's tests (lint, template, install/upgrade/uninstall on the real node),
# stamped as upstream's Makefile does: without the version flag `helm version` prints only the
# module's major.minor, and without the Kubernetes ones `helm template` and `helm lint` assume
# Kubernetes 1.20 (the client-go module's minor is the one helm was built against).
if [[ "$what" == helm ]]; then
  v="$(mod_version helm helm.sh/helm/v3)"
  kminor="$(cd "$HERE/tools/helm" && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)"
  ld="-X helm.sh/helm/v3/internal/version.version=$v"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    ld+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$kminor"
  done
  build helm helm -- -ldflags "$ld" helm.sh/helm/v3/cmd/helm
fi
# promtool for the monitoring tests (`promtool check rules`, `promtool test rules` on
# deploy/monitoring/), from the same Prometheus module version as prometheus in a wrapper of
# its own (it needs a few modules Prometheus does not, and prometheus' cache key stays put;
# test/monitoring/promtool.test.ts checks both pin one version). Stamped the same way.
if [[ "$what" == promtool ]]; then
  v="$(mod_version promtool github.com/prometheus/prometheus)"
  pv="$(cd "$HERE/tools/promtool" && go mod download github.com/prometheus/prometheus &&
    cat "$(go list -m -f '{{.Dir}}' github.com/prometheus/prometheus)/VERSION")"
  build promtool promtool -- -tags=remove_all_sd \
    -ldflags "-X github.com/prometheus/common/version.Version=$pv -X github.com/prometheus/common/version.Revision=$v -X github.com/prometheus/common/version.Branch=$v" \
    github.com/prometheus/prometheus/cmd/promtool
fi
# prometheus-operator's ServiceMonitor and PrometheusRule CRDs (the monitoring tests apply
# them to the test apiserver, so the shipped objects meet the real schemas), copied from the
# module's example/prometheus-operator-crd into $BIN/monitoring-crds. v0.85.0 is the newest
# the module proxy serves here. Only downloaded (nothing compiled), outside any module.
if [[ "$what" == monitoring-crds ]]; then
  pov=v0.85.0 dest="$BIN/monitoring-crds-v0.85.0"
  if [[ ! -f "$dest/monitoring.coreos.com_prometheusrules.yaml" ]]; then
    log "downloading prometheus-operator $pov's CRDs"
    src="$(cd "$CACHE" && GOFLAGS= go mod download -json "github.com/prometheus-operator/prometheus-operator@$pov" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
    [[ -n "$src" ]] || { log "go mod download gave no module directory"; exit 1; }
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
    for kind in servicemonitors prometheusrules; do
      cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$dest.tmp/"
    done
    chmod -R u+w "$dest.tmp"; rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  ln -sfn "$dest" "$BIN/monitoring-crds"
fi
# The Go controller-runtime peer of `npm run bench -- peer` (test/bench/go-peer): not a
# wrapper but a module with its own main.go, so its key also hashes the Go sources.
if [[ "$what" == go-peer ]]; then
  peer="$HERE/../bench/go-peer"
  k="$(cat "$peer/go.mod" "$peer/go.sum" "$peer"/*.go | sha256sum | cut -c1-12)"; dest="$BIN/go-peer-$k"
  exec 9>"$BIN/.go-peer.lock"; flock 9
  if [[ ! -x "$dest/go-peer" ]]; then
    log "building go-peer ($k)"
    rm -rf "$dest.tmp"; mkdir -p "$dest.tmp"
    (cd "$peer" && go build -trimpath -o "$dest.tmp/go-peer" .)
    rm -rf "$dest"; mv "$dest.tmp" "$dest"
  fi
  ln -sfn "$dest/go-peer" "$BIN/go-peer"
  exec 9>&-
fi
echo "$BIN"
