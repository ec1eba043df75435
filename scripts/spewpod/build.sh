#!/bin/bash
# Builds scripts/spewpod/main.go against the Debian Kubernetes 1.20.2 source tree that
# scripts/control-plane.sh unpacks (GOPATH mode, its vendor/ directory, offline), without
# writing into that tree: a private GOPATH whose k8s.io/kubernetes mirrors the tree through
# symlinks and adds cmd/spewpod. Output: ${SPEWPOD_OUT:-/tmp/spewpod}. About 1 minute on 2 cores.
set -euo pipefail
SRC="${KTS_K8S_SRC:-/var/cache/kubelet-ts/kubernetes-1.20.2/src/kubernetes-1.20.2}"
GP="${SPEWPOD_GOPATH:-/tmp/spewpod-gopath}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ -d "$SRC/vendor" ] || { echo "no Kubernetes source tree at $SRC (run scripts/control-plane.sh build first)" >&2; exit 1; }
K="$GP/src/k8s.io/kubernetes"
mkdir -p "$K/cmd/spewpod"
for e in $(ls -A "$SRC"); do [ "$e" = cmd ] || ln -sfn "$SRC/$e" "$K/$e"; done
cp "$HERE/main.go" "$K/cmd/spewpod/main.go"
cd "$K"
GOPATH="$GP" GO111MODULE=off GOCACHE="${GOCACHE:-$GP/cache}" CGO_ENABLED=0 GOFLAGS= go build -o "${SPEWPOD_OUT:-/tmp/spewpod}" ./cmd/spewpod
echo "built ${SPEWPOD_OUT:-/tmp/spewpod}"
