#!/usr/bin/env bash
# Kubeconfigs for the test cluster's clients.   kubeconfigs.sh PKI_DIR OUT_DIR SERVER_URL  (KUBECTL=path)
set -euo pipefail
pki=$1 out=$2 server=$3 k=${KUBECTL:-kubectl}
mkdir -p "$out"
for n in admin controller-manager scheduler kubelet; do
  f=$out/$n.kubeconfig
  rm -f "$f"
  "$k" config --kubeconfig="$f" set-cluster test --server="$server" --certificate-authority="$pki/ca.crt" --embed-certs=true >/dev/null
  "$k" config --kubeconfig="$f" set-credentials "$n" --client-certificate="$pki/$n.crt" --client-key="$pki/$n.key" --embed-certs=true >/dev/null
  "$k" config --kubeconfig="$f" set-context default --cluster=test --user="$n" >/dev/null
  "$k" config --kubeconfig="$f" use-context default >/dev/null
done
