#!/usr/bin/env bash
# A local duroxide cluster: the host-process single-node Kubernetes of hack/cluster/up.sh,
# the operator (config/e2e) and a PostgreSQL on 127.0.0.1:5432, database duroxide, the URL
# config/samples/postgres-secret.yaml names. Needs root.
#
#   hack/dev.sh up [DIR]     (make dev)       prints the KUBECONFIG to export; then
#                                             kubectl apply -f config/samples/
#   hack/dev.sh down [DIR]   (make dev-down)  stops everything and removes DIR
#
# DIR defaults to /tmp/duroxide-dev. DUROXIDE_PG_PORT moves PostgreSQL off 5432 (then
# edit the Secret's URL to match).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
cmd=${1:?usage: dev.sh up|down [DIR]}
dir=${2:-/tmp/duroxide-dev}
BIN=$(hack/k8s-binaries.sh --cluster)
export BIN

up() {
  if [ -e "$dir" ]; then echo "dev.sh: $dir exists: is a cluster up? (hack/dev.sh down $dir)" >&2; exit 1; fi
  make -s images >&2
  mkdir -p "$dir"
  chmod 755 "$dir" # the PostgreSQL server runs as user postgres
  PG_PORT=${DUROXIDE_PG_PORT:-5432} PG_DATABASE=duroxide hack/test-postgres.sh start "$dir/pg" >"$dir/postgres-url"
  echo "dev: PostgreSQL at $(sed 's/?.*//' "$dir/postgres-url")" >&2
  hack/cluster/up.sh "$dir/c" bin/images/operator.tar bin/images/sample-worker.tar >/dev/null
  local k=("$BIN/kubectl" --kubeconfig "$dir/c/kc/admin.kubeconfig")
  "${k[@]}" apply --server-side -k config/e2e >/dev/null
  "${k[@]}" -n duroxide-system rollout status deploy/duroxide-operator --timeout=120s >&2
  echo "dev: operator running; kubectl is $BIN/kubectl" >&2
  echo "export KUBECONFIG=$dir/c/kc/admin.kubeconfig PATH=$BIN:\$PATH"
}

down() {
  hack/cluster/down.sh "$dir/c"
  hack/test-postgres.sh stop "$dir/pg"
  rm -rf "$dir"
}

case $cmd in
  up) up ;;
  down) down ;;
  *) echo "usage: dev.sh up|down [DIR]" >&2; exit 2 ;;
esac
