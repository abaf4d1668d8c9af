#!/usr/bin/env bash
# Builds and caches the Kubernetes test binaries from the Go module proxy (no downloads of
# release tarballs): kube-apiserver, etcd and kubectl for envtest; with --cluster also
# kube-controller-manager, kube-scheduler and kubelet for the host-process cluster.
#
#   hack/k8s-binaries.sh [--cluster]     prints the directory holding the binaries
#
# Binaries are cached per version under ${DUROXIDE_CACHE:-$HOME/.cache/duroxide-go}; a run is a
# no-op when the cached binaries report the wanted version. A cold build takes 5-13 minutes on
# 2 cores. Recipe and pitfalls: docs/k8s-test-env.md (shared docs).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.36.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.8}
CACHE=${DUROXIDE_CACHE:-$HOME/.cache/duroxide-go}
BIN=$CACHE/k8s/$K8S_VERSION/bin
log() { echo "k8s-binaries: $*" >&2; }

want=(kube-apiserver kubectl)
if [ "${1:-}" = "--cluster" ]; then want+=(kube-controller-manager kube-scheduler kubelet); fi

# Version checks capture the output first: `cmd | grep -q` under pipefail fails when grep
# exits early and cmd dies of SIGPIPE.
reports() { local out; out=$("$@" 2>/dev/null) || return 1; [[ $out == *"$WANT"* ]]; }
have() { [ -x "$BIN/$1" ] && WANT=$K8S_VERSION reports "$BIN/$1" --version; }
have_kubectl() { [ -x "$BIN/kubectl" ] && WANT=$K8S_VERSION reports "$BIN/kubectl" version --client; }
have_etcd() { [ -x "$BIN/etcd" ] && WANT=${ETCD_VERSION#v} reports "$BIN/etcd" --version; }

missing=()
for b in "${want[@]}"; do
  if [ "$b" = kubectl ]; then have_kubectl || missing+=("$b"); else have "$b" || missing+=("$b"); fi
done

mkdir -p "$BIN"
if [ ${#missing[@]} -gt 0 ]; then
  src=$CACHE/k8s/$K8S_VERSION/src
  mkdir -p "$src"
  log "building ${missing[*]} $K8S_VERSION (cold: several minutes)"
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  staging=v0.${K8S_VERSION#v1.}
  (
    cd "$src"
    gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    {
      echo "module k8sbuild"; echo; echo "go 1.26.0"; echo; echo "require k8s.io/kubernetes $K8S_VERSION"; echo
      echo "replace ("
      grep -E '=> ./staging/src/k8s.io/' "$gomod" | awk -v v="$staging" '{print "\t"$1" => "$1" "v}'
      echo ")"
    } > go.mod
    {
      echo "//go:build tools"; echo; echo "package tools"; echo; echo "import ("
      for b in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
        echo "	_ \"k8s.io/kubernetes/cmd/$b\""
      done
      echo ")"
    } > tools.go
    go mod tidy >&2
    ldf="-s -w"
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf="$ldf -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
    done
    pkgs=()
    for b in "${missing[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
    CGO_ENABLED=0 go build -o "$BIN/" -ldflags "$ldf" "${pkgs[@]}"
  )
fi

if ! have_etcd; then
  src=$CACHE/etcd/$ETCD_VERSION/src
  mkdir -p "$src"
  log "building etcd $ETCD_VERSION"
  (
    cd "$src"
    printf 'module etcdbuild\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
    go mod tidy >&2
    CGO_ENABLED=0 go build -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3
  )
fi
echo "$BIN"
