#!/usr/bin/env bash
# End-to-end test on a real single-node cluster (hack/cluster/up.sh), kubectl as the client:
# operator and sample workers from images built here, PostgreSQL on host loopback.
#   hack/e2e.sh          (make test-e2e)
# Everything it starts is stopped on exit, pass or fail; the last lines show no process left.
set -eEuo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
t0=$SECONDS
current_step=""
step() { current_step="$*"; printf '\n==> %s (%ds)\n' "$*" $((SECONDS - t0)); }
# why holds the reason of a failure; teardown repeats it as the last line, under the logs.
why=""
fail() { why="$*"; echo "E2E FAIL: $*" >&2; exit 1; }
trap 'why="${why:-line $LINENO exited $?: $BASH_COMMAND}"' ERR
# Outputs are read whole before grep -q looks at them: under pipefail, a grep
# that stops at its first match can fail the writer (SIGPIPE), and the test.

BIN=$(hack/k8s-binaries.sh --cluster)
export BIN
scratch=$(mktemp -d /tmp/dxe2e.XXXX)
cleanup() {
  local rc=$? failed_in=$current_step
  step "teardown"
  if [ $rc -ne 0 ] && [ -f "$scratch/c/kc/admin.kubeconfig" ]; then
    echo "--- operator log (tail)"
    "$BIN/kubectl" --kubeconfig "$scratch/c/kc/admin.kubeconfig" -n duroxide-system logs deploy/duroxide-operator --tail=40 2>/dev/null || true
  fi
  hack/dev.sh down "$scratch"
  left=$(pgrep -a -f "$scratch" || true)
  if [ -n "$left" ]; then echo "left running:"; echo "$left"; rc=1; else echo "teardown clean: pgrep finds no process of $scratch"; fi
  [ $rc -eq 0 ] || echo "E2E FAIL in \"${failed_in:-setup}\": ${why:-exit $rc}" >&2
  exit $rc
}
trap cleanup EXIT
rmdir "$scratch" # hack/dev.sh up creates it

step "images, PostgreSQL on 127.0.0.1:5432, cluster, operator (hack/dev.sh up)"
eval "$(hack/dev.sh up "$scratch")"
pgurl=$(cat "$scratch/postgres-url")
k() { "$BIN/kubectl" "$@"; }
k -n duroxide-system get pods -o wide

step "kubectl apply -f config/samples/ (Secret, WorkerPools samples and gpu on one store, one Orchestration per sample)"
k apply -f config/samples/
# The operator creates a Deployment a moment after its WorkerPool; rollout status needs it to exist.
for pool in samples gpu; do
  k wait --for=create "deploy/$pool" --timeout=60s >/dev/null
  k rollout status "deploy/$pool" --timeout=120s
  k wait --for=condition=Ready pod -l "duroxide.io/pool=$pool" --timeout=60s
done
k get workerpools -o wide
k get pods -l duroxide.io/pool -o wide
pod=$(k get pods -l duroxide.io/pool=samples -o jsonpath='{.items[0].metadata.name}')
for _ in $(seq 1 60); do
  workers=$(DUROXIDE_STORE=$pgurl bin/duroxide --schema duroxide_samples workers)
  grep -q "^$pod " <<<"$workers" && break; sleep 0.5
done
echo "workers announced in the store (duroxide workers):"
echo "$workers"
grep -q "^$pod .*Approval@1.0.0" <<<"$workers" || fail "worker pod $pod did not announce the sample orchestrations"

step "every sample reaches Succeeded"
for o in hello chain fanout approval subfanout counter saga retry cart; do
  k wait --for=condition=Succeeded "orchestration/$o" --timeout=180s >/dev/null || fail "$o did not succeed: $(k get orchestration "$o" -o jsonpath='{.status}')"
  printf '%-10s output=%s customStatus=%s\n' "$o" \
    "$(k get orchestration "$o" -o jsonpath='{.status.output}')" "$(k get orchestration "$o" -o jsonpath='{.status.customStatus}')"
done
k get orchestrations

step "Render's activity, tagged gpu, runs on the gpu pool's worker, never on the samples pool's"
# pods POOL: the names of the pool's pods, one a line.
pods() { k get pods -l "duroxide.io/pool=$1" -o jsonpath='{range .items[*]}{.metadata.name}{"\n"}{end}'; }
# rendered_by ORCHESTRATION: the pod its output names ("frame F rendered by POD").
rendered_by() { k get orchestration "$1" -o jsonpath='{.status.output}' | sed -n 's/^"frame .* rendered by \(.*\)"$/\1/p'; }
k wait --for=condition=Succeeded orchestration/render --timeout=180s >/dev/null ||
  fail "render did not succeed: $(k get orchestration render -o jsonpath='{.status}')"
by=$(rendered_by render) gpu_pods=$(pods gpu) samples_pods=$(pods samples)
echo "render output=$(k get orchestration render -o jsonpath='{.status.output}')"
echo "gpu pool pods: ${gpu_pods//$'\n'/ }; samples pool pods: ${samples_pods//$'\n'/ }"
{ [ -n "$by" ] && grep -qx "$by" <<<"$gpu_pods"; } || fail "render's activity ran on '$by', not on a pod of the gpu pool"
! grep -qx "$by" <<<"$samples_pods" || fail "render's activity ran on $by of the samples pool"
echo "rendered by $by, a pod of the gpu pool"

step "gpu pool at 0: a gpu activity waits while the samples pool runs, and says why; back at 1, it runs"
k scale workerpool gpu --replicas=0
k wait --for=delete pod -l duroxide.io/pool=gpu --timeout=120s >/dev/null
cat <<EOT | k apply -f - >/dev/null
apiVersion: duroxide.io/v1alpha1
kind: Orchestration
metadata: {name: render-later}
spec: {workerPool: samples, orchestration: Render, input: cube}
EOT
# No live worker takes tag gpu (a stopping worker withdraws its announcement): the operator says so.
k wait --for=condition=ActivitiesServed=False orchestration/render-later --timeout=150s >/dev/null ||
  fail "render-later does not say its activity waits: $(k get orchestration render-later -o jsonpath='{.status}')"
served() { k get orchestration render-later -o jsonpath="{.status.conditions[?(@.type==\"ActivitiesServed\")].$1}"; }
reason=$(served reason)
phase=$(k get orchestration render-later -o jsonpath='{.status.phase}')
echo "render-later phase=$phase, ActivitiesServed=False $reason: $(served message)"
{ [ "$reason" = NoWorkerForTag ] && [ "$phase" = Running ]; } || fail "render-later: phase $phase, reason $reason; want Running, NoWorkerForTag"
[ -n "$(k get events --field-selector involvedObject.name=render-later,reason=NoWorkerForTag -o name)" ] ||
  fail "no NoWorkerForTag event for render-later"
k get orchestration render-later -o wide
k scale workerpool gpu --replicas=1
k wait --for=condition=Succeeded orchestration/render-later --timeout=180s >/dev/null ||
  fail "render-later did not succeed once the gpu pool was back: $(k get orchestration render-later -o jsonpath='{.status}')"
by=$(rendered_by render-later) gpu_pods=$(pods gpu)
echo "render-later output=$(k get orchestration render-later -o jsonpath='{.status.output}'); gpu pool pods: ${gpu_pods//$'\n'/ }"
{ [ -n "$by" ] && grep -qx "$by" <<<"$gpu_pods"; } || fail "render-later's activity ran on '$by', not on a pod of the gpu pool"

step "the operator's web view of the pool's store lists every sample"
view=http://127.0.0.1:18233
index=$(curl -fsS "$view/") || fail "the view's index did not load"
grep -q 'href="/pools/default/samples/instances"' <<<"$index" || fail "the view's index does not list pool default/samples"
page=$(curl -fsS "$view/pools/default/samples/instances?limit=1000") || fail "the pool's instance list did not load"
for o in hello chain fanout approval subfanout counter saga retry cart; do
  id=$(k get orchestration "$o" -o jsonpath='{.status.instanceID}')
  grep -q ">$id</a>" <<<"$page" || fail "the web view does not list $o's instance $id"
done
page=$(curl -fsS "$view/pools/default/samples/instance?id=$(k get orchestration retry -o jsonpath='{.status.instanceID}')") ||
  fail "the retry sample's page did not load"
grep -q 'class="bar activity failed"' <<<"$page" || fail "the retry sample's page shows no failed attempt on its timeline"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d "id=x" "$view/pools/default/samples/instance/terminate")
[ "$code" = 403 ] || fail "a terminate posted to the read-only view answered $code, want 403"
echo "listed the 9 samples' instances; the retry timeline shows its failed attempts; actions refused (read-only)"

step "the operator's metrics: refused without a token or the right to read them, served to a metrics reader"
metrics=https://127.0.0.1:18443/metrics
code=$(curl -sk -o /dev/null -w '%{http_code}' "$metrics")
[ "$code" = 401 ] || fail "metrics without a token answered $code, want 401"
k -n default create serviceaccount e2e-scraper >/dev/null
k -n default create serviceaccount e2e-nobody >/dev/null
k create clusterrolebinding e2e-scraper --clusterrole=duroxide-metrics-reader --serviceaccount=default:e2e-scraper >/dev/null
code=$(curl -sk -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(k -n default create token e2e-nobody)" "$metrics")
[ "$code" = 403 ] || fail "metrics for a token without the metrics-reader role answered $code, want 403"
token=$(k -n default create token e2e-scraper)
# Both pools read one store (one Secret, key and schema): their series name it alike.
completed='duroxide_store_instances{namespace="default",pool="samples",status="completed",store="duroxide-postgres/url/duroxide_samples"}'
gpu_completed='duroxide_store_instances{namespace="default",pool="gpu",status="completed",store="duroxide-postgres/url/duroxide_samples"}'
# The samples and their sub-orchestrations; the operator reads the store every --pool-status-interval.
done_count() { awk -v m="$completed" '$1 == m { print int($2) }' <<<"$body"; }
for _ in $(seq 1 40); do
  body=$(curl -fsSk -H "Authorization: Bearer $token" "$metrics") || fail "a metrics reader's scrape failed"
  [ "$(done_count)" -ge 8 ] 2>/dev/null && break; sleep 1
done
grep "^$completed\|^duroxide_operator_status_lag_seconds_count\|^duroxide_operator_start_latency_seconds_count" <<<"$body" || true
[ "$(done_count)" -ge 8 ] 2>/dev/null || fail "the store's gauges do not count the 8 completed samples: $(grep "^$completed" <<<"$body")"
grep -q "^$gpu_completed" <<<"$body" || fail "the gpu pool's store gauges do not name the store the samples pool shares: $(grep '^duroxide_store_instances{namespace="default",pool="gpu"' <<<"$body")"
for family in duroxide_operator_status_lag_seconds_count duroxide_operator_start_latency_seconds_count 'controller_runtime_reconcile_total{controller="orchestration"'; do
  grep -q "^$family" <<<"$body" || fail "the operator's metrics lack $family"
done
echo "401 without a token, 403 without the role, 200 with it: the pools' store (named alike for both), status lag and start latency are reported"

step "raise an event with kubectl patch"
approval() {
  cat <<EOT | k apply -f - >/dev/null
apiVersion: duroxide.io/v1alpha1
kind: Orchestration
metadata: {name: $1}
spec: {workerPool: samples, orchestration: Approval, input: {item: $1, timeout: 600000000000}, deletionPolicy: ${2:-Terminate}}
EOT
  k wait --for=condition=Running "orchestration/$1" --timeout=120s >/dev/null
}
approval decide-later
k patch orchestration decide-later --type=json \
  -p '[{"op":"add","path":"/spec/events","value":[{"name":"approval","data":{"approved":true,"by":"e2e"}}]}]'
k wait --for=condition=Succeeded orchestration/decide-later --timeout=120s >/dev/null
out=$(k get orchestration decide-later -o jsonpath='{.status.output}')
[ "$out" = '"decide-later: approved by e2e"' ] || fail "event: output $out"
echo "decide-later output=$out"

step "two approvals patched at once: the one the instance never took is reported not delivered"
approval decide-twice
k patch orchestration decide-twice --type=json -p '[{"op":"add","path":"/spec/events","value":[
  {"name":"approval","key":"approval-1","data":{"approved":true,"by":"first"}},
  {"name":"approval","key":"approval-2","data":{"approved":false,"by":"second"}}]}]'
k wait --for=condition=Succeeded orchestration/decide-twice --timeout=120s >/dev/null
k wait --for=condition=EventsDelivered=False orchestration/decide-twice --timeout=30s >/dev/null ||
  fail "decide-twice took one approval, yet says both were delivered: $(k get orchestration decide-twice -o jsonpath='{.status}')"
msg=$(k get orchestration decide-twice -o jsonpath='{.status.conditions[?(@.type=="EventsDelivered")].message}')
echo "decide-twice output=$(k get orchestration decide-twice -o jsonpath='{.status.output}') EventsDelivered: $msg"
case "$msg" in *approval-1*) fail "the approval taken is reported not delivered: $msg" ;; *approval-2*) ;; *) fail "EventsDelivered: $msg" ;; esac

step "terminate with kubectl patch"
approval stop-me
k patch orchestration stop-me --type=merge -p '{"spec":{"terminate":"stopped by e2e"}}'
k wait --for=jsonpath='{.status.phase}'=Terminated orchestration/stop-me --timeout=120s >/dev/null
echo "stop-me phase=Terminated failure=$(k get orchestration stop-me -o jsonpath='{.status.failure.message}')"

step "kubectl scale workerpool --replicas=3, then back to 1"
k scale workerpool samples --replicas=3
k rollout status deploy/samples --timeout=120s
k wait --for=jsonpath='{.status.readyReplicas}'=3 workerpool/samples --timeout=120s >/dev/null
k get pods -l duroxide.io/pool=samples
k scale workerpool samples --replicas=1
k wait --for=jsonpath='{.status.replicas}'=1 workerpool/samples --timeout=120s >/dev/null
pods=0
for _ in $(seq 1 240); do
  pods=$(k get pods -l duroxide.io/pool=samples --no-headers 2>/dev/null | wc -l)
  [ "$pods" = 1 ] && break; sleep 0.5
done
k get pods -l duroxide.io/pool=samples
[ "$pods" = 1 ] || fail "scaled back to 1, but $pods worker pods remain after 2 minutes"

step "200 orchestrations in flight (3 durable 3 s ticks each) across a worker pod deletion"
for i in $(seq -w 1 200); do
  printf -- '---\napiVersion: duroxide.io/v1alpha1\nkind: Orchestration\nmetadata: {name: batch-%s, labels: {e2e: batch}}\n' "$i"
  printf 'spec: {workerPool: samples, orchestration: Counter, input: {count: 0, limit: 3, tick: 3000000000}, ttlSecondsAfterFinished: 600}\n'
done | k apply -f - >/dev/null
sleep 1
echo "not yet Succeeded when the pod goes: $(k get orchestrations -l e2e=batch -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' | grep -vc Completed || true) of 200"
victim=$(k get pods -l duroxide.io/pool=samples -o jsonpath='{.items[0].metadata.name}')
k delete pod "$victim" --wait=false
echo "deleted worker pod $victim"
k wait --for=condition=Succeeded orchestration -l e2e=batch --timeout=300s >/dev/null
done_ok=$(k get orchestrations -l e2e=batch -o jsonpath='{range .items[*]}{.status.output}{"\n"}{end}' | grep -c '^3$' || true)
echo "$done_ok of 200 completed with output 3"
[ "$done_ok" = 200 ] || fail "only $done_ok of 200 completed correctly"

# The instance as the store has it, read with the duroxide CLI (bin/duroxide, built with the images):
# state INSTANCE [SCHEMA].
state() {
  local out
  if out=$(DUROXIDE_STORE=$pgurl bin/duroxide --schema "${2:-duroxide_samples}" status "$1" -o json 2>&1); then
    printf '%s' "$out" | sed -n 's/^  "status": "\(.*\)",$/\1/p'
  else
    case "$out" in *"not found"*) echo absent ;; *) echo "error: $out" ;; esac
  fi
}

step "delete an Orchestration, apply its name again with a new input: the new input runs"
greet() {
  cat <<EOT | k apply -f - >/dev/null
apiVersion: duroxide.io/v1alpha1
kind: Orchestration
metadata: {name: greet}
spec: {workerPool: samples, orchestration: Hello, input: $1}
EOT
  k wait --for=condition=Succeeded orchestration/greet --timeout=120s >/dev/null
  k get orchestration greet -o jsonpath='{.status.output} {.status.instanceID}'
}
first=$(greet '"first"')
k delete orchestration greet --timeout=60s >/dev/null
second=$(greet '"second"')
echo "first run: $first"
echo "re-applied: $second"
case "$second" in '"Hello, second!" '*) ;; *) fail "the re-applied name shows $second, want the new input's output" ;; esac
[ "${first#* }" != "${second#* }" ] || fail "the re-applied name reused instance ${first#* }"
k get orchestration greet -o wide

step "delete a namespace: its Terminate-policy Orchestration's instance ends Terminated"
k create namespace e2e-doomed >/dev/null
k -n e2e-doomed apply -f config/samples/postgres-secret.yaml >/dev/null
sed 's/schema: duroxide_samples/schema: duroxide_doomed/; s/name: samples/name: doomed/' config/samples/workerpool.yaml |
  k -n e2e-doomed apply -f - >/dev/null
cat <<EOT | k -n e2e-doomed apply -f - >/dev/null
apiVersion: duroxide.io/v1alpha1
kind: Orchestration
metadata: {name: waits}
spec: {workerPool: doomed, orchestration: Approval, input: {item: waits, timeout: 600000000000}}
EOT
k -n e2e-doomed wait --for=condition=Ready workerpool/doomed --timeout=180s >/dev/null
k -n e2e-doomed wait --for=condition=Running orchestration/waits --timeout=180s >/dev/null
id=$(k -n e2e-doomed get orchestration waits -o jsonpath='{.status.instanceID}')
echo "pool Ready, instance $id running; deleting the namespace"
k delete namespace e2e-doomed --timeout=180s >/dev/null
s=$(state "$id" duroxide_doomed)
echo "namespace gone; instance in the store: $s"
[ "$s" = Terminated ] || fail "namespace deletion left the instance $s, want Terminated"

step "delete under each deletion policy"
for policy in Terminate Purge Orphan; do
  name=del-$(echo "$policy" | tr '[:upper:]' '[:lower:]')
  approval "$name" "$policy"
  id=$(k get orchestration "$name" -o jsonpath='{.status.instanceID}')
  k delete orchestration "$name" --timeout=60s >/dev/null
  for _ in $(seq 1 100); do
    s=$(state "$id")
    case "$policy:$s" in Terminate:Terminated | Purge:absent | Orphan:Running) break ;; esac
    sleep 0.2
  done
  echo "$policy: object deleted, instance in the store: $s"
  case "$policy:$s" in Terminate:Terminated | Purge:absent | Orphan:Running) ;; *) fail "$policy left the instance $s" ;; esac
done

step "10 Orchestrations applied and deleted at once during a burst of 300: no instance outlives its object"
for i in $(seq -w 1 300); do
  printf -- '---\napiVersion: duroxide.io/v1alpha1\nkind: Orchestration\nmetadata: {name: burst-%s, labels: {e2e: burst}}\n' "$i"
  printf 'spec: {workerPool: samples, orchestration: Hello, input: "b%s"}\n' "$i"
done | k apply -f - >/dev/null &
burst=$!
flashes=()
for i in $(seq -w 1 10); do
  id=$(cat <<EOT | k apply -f - -o jsonpath='{.metadata.namespace}/{.metadata.name}/{.metadata.uid}'
apiVersion: duroxide.io/v1alpha1
kind: Orchestration
metadata: {name: flash-$i}
spec: {workerPool: samples, orchestration: Approval, input: {item: flash-$i, timeout: 600000000000}}
EOT
  )
  k delete orchestration "flash-$i" --wait=false >/dev/null
  flashes+=("$id")
done
wait "$burst" || fail "the burst's apply failed"
for i in $(seq -w 1 10); do k wait --for=delete "orchestration/flash-$i" --timeout=120s >/dev/null 2>&1 || true; done
leaked=0
for id in "${flashes[@]}"; do
  k get orchestration "$(echo "$id" | cut -d/ -f2)" >/dev/null 2>&1 && fail "$id: its object was not deleted"
  for _ in $(seq 1 50); do
    s=$(state "$id")
    case "$s" in Terminated | absent) break ;; esac
    sleep 0.2
  done
  case "$s" in Terminated | absent) ;; *) echo "$id: $s without an object"; leaked=$((leaked + 1)) ;; esac
done
echo "10 objects applied and deleted: $leaked instances left running"
[ "$leaked" = 0 ] || fail "$leaked instances outlived their objects (deletion policy Terminate not applied)"
k delete orchestration -l e2e=burst --timeout=180s >/dev/null

step "operator log: no request refused by RBAC"
# An Event for an object of a namespace being deleted is refused as forbidden too: not RBAC.
rbac_denials() { k -n duroxide-system logs deploy/duroxide-operator 2>&1 | grep -i forbidden | grep -v 'because it is being terminated'; }
denied=$(rbac_denials | grep -c . || true)
echo "forbidden in the operator log: $denied"
[ "$denied" = 0 ] || fail "the operator's RBAC is missing a rule: $(rbac_denials | head -3)"

step "E2E PASS"
