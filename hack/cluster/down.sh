#!/usr/bin/env bash
# Stops what up.sh started (by PID), removes mounts, cgroups and RUN_DIR.
#   hack/cluster/down.sh RUN_DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=${1:?usage: down.sh RUN_DIR}
[ -d "$run" ] || exit 0
run=$(cd "$run" && pwd)
BIN=${BIN:-$("$here/../k8s-binaries.sh" --cluster)}
k() { "$BIN/kubectl" --kubeconfig "$run/kc/admin.kubeconfig" --request-timeout=10s "$@"; }
stop() {
  local f=$run/logs/$1.pid p
  [ -f "$f" ] || return 0
  p=$(cat "$f")
  kill "$p" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$p" 2>/dev/null; then kill -9 "$p"; fi
  rm -f "$f"
}
# Let the kubelet stop the pods, so containers end cleanly.
if [ -f "$run/logs/kubelet.pid" ] && [ -f "$run/kc/admin.kubeconfig" ]; then
  k delete deploy,sts,ds,job,rs --all -A --wait=false >/dev/null 2>&1
  k delete pods --all -A --grace-period=5 --timeout=60s >/dev/null 2>&1
fi
stop kubelet
ctr=(ctr -a "$run/containerd/containerd.sock" -n k8s.io)
if [ -S "$run/containerd/containerd.sock" ]; then
  for c in $("${ctr[@]}" tasks ls -q 2>/dev/null); do "${ctr[@]}" tasks kill -s SIGKILL "$c" >/dev/null 2>&1; done
  sleep 1
  for c in $("${ctr[@]}" containers ls -q 2>/dev/null); do
    "${ctr[@]}" tasks delete -f "$c" >/dev/null 2>&1
    "${ctr[@]}" containers delete "$c" >/dev/null 2>&1
  done
fi
for d in containerd scheduler controller-manager apiserver etcd; do stop "$d"; done
# Mounts under RUN (pod volumes, sandbox shm, container rootfs), deepest first.
grep -o " ${run}[^ ]*" /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
# The kubepods cgroups the kubelet created (cgroupfs driver).
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
  [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
done
rm -rf "$run"
echo "cluster: down" >&2
