#!/usr/bin/env bash
# The operator and the samples on a kind cluster, for machines with Docker (kind needs
# privileged containers, which some VMs refuse; there, use `make dev`).
#
#   hack/kind-up.sh          (make kind-deploy)   KIND_CLUSTER names the cluster (duroxide)
#
# Builds the images (make images), creates the cluster if missing, loads the images with
# `kind load image-archive`, starts a throwaway PostgreSQL (config/samples/kind), installs
# the operator (config/kind) and applies config/samples with the in-cluster database URL.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
cluster=${KIND_CLUSTER:-duroxide}
for tool in docker kind kubectl; do
  command -v "$tool" >/dev/null || { echo "kind-up.sh: $tool is required" >&2; exit 1; }
done
if ! docker info >/dev/null 2>&1; then echo "kind-up.sh: the Docker daemon is not reachable" >&2; exit 1; fi

make -s images
if ! kind get clusters | grep -qx "$cluster"; then
  kind create cluster --name "$cluster" --wait 120s
fi
kubectl config use-context "kind-$cluster" >/dev/null
for tar in bin/images/operator.tar bin/images/sample-worker.tar; do
  kind load image-archive "$tar" --name "$cluster"
done

kubectl apply -f config/samples/kind/postgres.yaml
kubectl rollout status deploy/postgres --timeout=180s
kubectl apply --server-side -k config/kind
kubectl -n duroxide-system rollout status deploy/duroxide-operator --timeout=180s

kubectl apply -f config/samples/
# The samples' Secret names make dev's host database; on kind the database is the Service.
kubectl create secret generic duroxide-postgres \
  --from-literal=url='postgres://duroxide@postgres.default.svc:5432/duroxide?sslmode=disable' \
  --dry-run=client -o yaml | kubectl apply -f -
for pool in samples gpu; do
  kubectl wait --for=create "deploy/$pool" --timeout=60s
  kubectl rollout restart "deploy/$pool"
  kubectl rollout status "deploy/$pool" --timeout=180s
done
kubectl wait --for=condition=Succeeded orchestration --all --timeout=300s
kubectl get orchestrations
echo "kind cluster $cluster is up: kubectl get orch,wp; kind delete cluster --name $cluster removes it"
