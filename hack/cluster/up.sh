#!/usr/bin/env bash
# Brings up a single-node Kubernetes cluster from host processes, all on loopback:
# etcd, kube-apiserver (127.0.0.1:443), controller-manager, scheduler, a containerd of its
# own and a kubelet (node "localhost"). Pods must use hostNetwork and local images.
# Recipe: docs/k8s-test-env.md (shared docs).
#
#   hack/cluster/up.sh RUN_DIR [IMAGE.tar...]    images are imported into containerd (k8s.io)
#
# Needs root. BIN holds the binaries (default: hack/k8s-binaries.sh --cluster builds them).
# Installs containerd, runc and the CNI plugins from Debian when missing. Prints
# KUBECONFIG=... last. hack/cluster/down.sh RUN_DIR removes everything again.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
run=${1:?usage: up.sh RUN_DIR [IMAGE.tar...]}
shift
mkdir -p "$run"
run=$(cd "$run" && pwd)
if [ ${#run} -gt 60 ]; then echo "up.sh: RUN_DIR $run is too long for unix sockets; use a short path" >&2; exit 1; fi
BIN=${BIN:-$("$repo/hack/k8s-binaries.sh" --cluster)}
CNI_BIN=${CNI_BIN:-/usr/lib/cni}
node=localhost
t0=$SECONDS
log() { echo "cluster: $* ($((SECONDS - t0))s)" >&2; }

need_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x "$CNI_BIN/loopback" ] || missing+=(containernetworking-plugins)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v curl >/dev/null || missing+=(curl)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}
if [ "$(id -u)" != 0 ]; then echo "up.sh: needs root (containerd, kubelet, mounts, port 443)" >&2; exit 1; fi
for port in 443 2379 2380 10250 10257 10259; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
    echo "up.sh: 127.0.0.1:$port is in use (another cluster running? hack/cluster/down.sh)" >&2; exit 1
  fi
done
need_packages
mkdir -p "$run"/{logs,kc,etcd,kubelet,cni/net.d,containerd,images}

start() { local n=$1; shift; setsid "$@" >"$run/logs/$n.log" 2>&1 </dev/null & echo $! >"$run/logs/$n.pid"; }
waitfor() {
  local what=$1; shift
  for _ in $(seq 1 600); do
    if "$@" >/dev/null 2>&1; then log "$what ready"; return 0; fi
    sleep 0.2
  done
  echo "up.sh: $what not ready; see $run/logs" >&2; return 1
}
k() { "$BIN/kubectl" --kubeconfig "$run/kc/admin.kubeconfig" "$@"; }

"$here/pki.sh" "$run/pki" "$node"
KUBECTL=$BIN/kubectl "$here/kubeconfigs.sh" "$run/pki" "$run/kc" https://127.0.0.1:443
pki=$run/pki

start etcd "$BIN/etcd" --name test --data-dir "$run/etcd" \
  --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster test=http://127.0.0.1:2380 --unsafe-no-fsync
waitfor etcd curl -sf http://127.0.0.1:2379/health

# Service range 127.0.0.0/24 puts the kubernetes Service at 127.0.0.1:443, where the
# apiserver listens: in-cluster clients in hostNetwork pods work unchanged.
start apiserver "$BIN/kube-apiserver" --bind-address=127.0.0.1 --secure-port=443 --advertise-address=127.0.0.1 \
  --etcd-servers=http://127.0.0.1:2379 --service-cluster-ip-range=127.0.0.0/24 --endpoint-reconciler-type=none \
  --client-ca-file="$pki/ca.crt" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
  --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types=Hostname \
  --service-account-issuer=https://kubernetes.default.svc.cluster.local \
  --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
  --authorization-mode=Node,RBAC --allow-privileged=true
waitfor apiserver k get --raw /readyz

start controller-manager "$BIN/kube-controller-manager" --kubeconfig="$run/kc/controller-manager.kubeconfig" \
  --authentication-kubeconfig="$run/kc/controller-manager.kubeconfig" --authorization-kubeconfig="$run/kc/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false --use-service-account-credentials=true \
  --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
  --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key"
start scheduler "$BIN/kube-scheduler" --kubeconfig="$run/kc/scheduler.kubeconfig" \
  --authentication-kubeconfig="$run/kc/scheduler.kubeconfig" --authorization-kubeconfig="$run/kc/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false

# The pause image: built here, imported, never pulled.
pause_image=localhost/duroxide-test/pause:1
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$run/images/pause" "$repo/hack/pause"
(cd "$repo" && go run ./hack/imagebuild -binary "$run/images/pause" -tag "$pause_image" -out "$run/images/pause.tar" >/dev/null)

echo '{ "cniVersion": "1.0.0", "name": "loopback-only", "plugins": [ { "type": "loopback" } ] }' >"$run/cni/net.d/10-loopback-only.conflist"
cat >"$run/containerd.toml" <<EOT
version = 2
root = "$run/containerd/root"
state = "$run/containerd/state"
[grpc]
  address = "$run/containerd/containerd.sock"
[ttrpc]
  address = "$run/containerd/containerd.sock.ttrpc"
[debug]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$pause_image"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN"
    conf_dir = "$run/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$run/containerd/opt"
EOT
start containerd containerd --config "$run/containerd.toml"
ctr=(ctr -a "$run/containerd/containerd.sock" -n k8s.io)
waitfor containerd "${ctr[@]}" version
for tar in "$run/images/pause.tar" "$@"; do
  "${ctr[@]}" images import "$tar" >/dev/null
  log "imported $(basename "$tar")"
done

cat >"$run/kubelet-config.yaml" <<EOT
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
containerRuntimeEndpoint: unix://$run/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
rotateCertificates: false
EOT
start kubelet "$BIN/kubelet" --config="$run/kubelet-config.yaml" --kubeconfig="$run/kc/kubelet.kubeconfig" \
  --hostname-override="$node" --root-dir="$run/kubelet" --cert-dir="$run/kubelet/pki"
waitfor "node registration" k get node "$node"
k wait --for=condition=Ready "node/$node" --timeout=120s >/dev/null
log "node Ready"
waitfor "default service account" k get serviceaccount default -n default
echo "KUBECONFIG=$run/kc/admin.kubeconfig"
