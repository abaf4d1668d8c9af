#!/usr/bin/env bash
# Paired benchmark runs: variants of cmd/bench (binaries, flags) run one after another in each
# round, their order rotated per round, so that the VM's drift falls on all of them alike.
#
#   hack/bench-paired.sh ROUNDS OUT 'LABEL|BINARY|FLAGS' 'LABEL|BINARY|FLAGS' ...
#
# Every variant runs with -pg $DUROXIDE_TEST_POSTGRES_URL (or under hack/test-postgres.sh run).
# OUT gets one line per RESULT: the label, the round and cmd/bench's fields. The summary, per
# scenario, provider and variant: the median throughput, the median CPU per instance of the
# benchmark process and the PostgreSQL server together (what bounds throughput when both share
# the cores), and the median over rounds of each against the first variant of the same round,
# with its quartiles.
# ROUNDS 0 summarises OUT again without running anything (the labels alone matter then).
set -euo pipefail

if [ $# -lt 4 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
rounds=$1 out=$2
shift 2
variants=("$@")
if [ "$rounds" -gt 0 ]; then
  : "${DUROXIDE_TEST_POSTGRES_URL:?set it, or run under hack/test-postgres.sh run}"
  : >"$out"
fi

n=${#variants[@]}
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < n; k++)); do
    v=${variants[$(((k + r - 1) % n))]}
    IFS='|' read -r label bin flags <<<"$v"
    echo "bench-paired: round $r/$rounds, $label" >&2
    # shellcheck disable=SC2086 # flags are words
    results=$("$bin" -pg "$DUROXIDE_TEST_POSTGRES_URL" $flags 2>/dev/null | grep '^RESULT ') || {
      echo "bench-paired: $label failed in round $r" >&2
      exit 1
    }
    while read -r line; do
      echo "variant=$label round=$r ${line#RESULT }" >>"$out"
    done <<<"$results"
  done
done

# Summary. cpu_ms is (bench_cpu_s + server_cpu_s) / n in milliseconds.
awk -v first="${variants[0]%%|*}" '
function field(name,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return kv[2] } return "" }
function quantile(list, p,   a, m, t, i, j, k, f) {
  m = split(list, a, " ")
  for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  k = 1 + (m - 1) * p; f = int(k)
  return f >= m ? a[m] : a[f] + (a[f + 1] - a[f]) * (k - f)
}
function median(list) { return quantile(list, 0.5) }
function spread(list) { return sprintf("[%+.1f..%+.1f]", quantile(list, 0.25), quantile(list, 0.75)) }
{
  v = field("variant"); r = field("round"); key = field("scenario") " " field("provider") " " field("options")
  tput = field("orch_per_s"); cpu = 1000 * (field("bench_cpu_s") + field("server_cpu_s")) / field("n")
  T[key, v] = T[key, v] " " tput; C[key, v] = C[key, v] " " cpu
  RT[key, v, r] = tput; RC[key, v, r] = cpu; rounds[r] = 1
  if (!((key, v) in seen)) { seen[key, v] = 1; order[++nk] = key SUBSEP v }
}
END {
  printf "%-34s %-14s %10s %10s %9s %-15s %9s %-15s\n", "scenario provider options", "variant", "orch/s", "cpu_ms", "orch/s%", "quartiles", "cpu%", "quartiles"
  for (i = 1; i <= nk; i++) {
    split(order[i], kv, SUBSEP); key = kv[1]; v = kv[2]; dt = ""; dc = ""
    for (r in rounds) if ((key, v, r) in RT && (key, first, r) in RT && RT[key, first, r] > 0) {
      dt = dt " " 100 * (RT[key, v, r] / RT[key, first, r] - 1); dc = dc " " 100 * (RC[key, v, r] / RC[key, first, r] - 1)
    }
    printf "%-34s %-14s %10.1f %10.3f %+8.1f%% %-15s %+8.1f%% %-15s\n", key, v, median(T[key, v]), median(C[key, v]), median(dt), spread(dt), median(dc), spread(dc)
  }
}' "$out"
