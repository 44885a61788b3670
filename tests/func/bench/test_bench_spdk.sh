#!/bin/bash
# nvmf-bench against SPDK, end to end, when an SPDK build is given in
# NVMF_BENCH_SPDK (skipped otherwise): one cell and its twins against
# nvmf_tgt and with spdk_nvme_perf, 1 round of 1 s. Every run produces
# IOPS and target CPU, the SPDK commands are recorded, and nothing of SPDK
# (processes, RPC socket and its lock file, DPDK runtime files) is left.
set -u
command -v setsid > /dev/null || { echo "SKIP: no setsid"; exit 77; }
: "${NVMF_BENCH:?}" "${BENCH_TESTDIR:?}"
. "$BENCH_TESTDIR/lib.sh"

spdk=${NVMF_BENCH_SPDK:-}
if [ -z "$spdk" ] || [ ! -x "$spdk/build/bin/nvmf_tgt" ] || [ ! -x "$spdk/build/bin/spdk_nvme_perf" ]; then
	echo "SKIP: NVMF_BENCH_SPDK does not name an SPDK build"
	exit 77
fi
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'; }

cat >"$tmp/s.json" <<'J'
{"name": "spdk-e2e", "duration": 1, "warmup": 0, "repeat": 1, "spdk": {"twins": "both"},
 "columns": ["iops", "lat_avg", "p99", "target_cpu", "iops_per_target_cpu_s"],
 "defaults": {"target": {"backend": "ram", "backend_size": "64M"},
              "perf": {"pattern": "randread", "io_size": "4k", "qd": 8}},
 "cells": [{"name": "n", "group": "4k", "series": "nvmfd"},
           {"name": "nl", "group": "4k", "series": "no-L", "perf": {"tool": "spdk_nvme_perf", "latency": false}}]}
J
out=$tmp/out
# in a session of its own (its pid is the session id): whatever it started can be found afterwards
setsid -w sh -c 'echo $$ > "$0"; exec "$@"' "$tmp/sid" "$NVMF_BENCH" --no-progress --no-plots --syscalls off \
	-o "$out" "$tmp/s.json" 2>"$tmp/err"; rc=$?
sid=$(cat "$tmp/sid")
[ $rc -eq 0 ] && ok "run exit 0" || bad "run exit $rc: $(tail -5 "$tmp/err")"
left=$(ps -e -o sid= -o pid= -o comm= | awk -v s="$sid" '$1 == s')
[ -z "$left" ] && ok "no process of the run left" || bad "left: $left"
[ -e "/tmp/nvmf-bench.$sid" ] && bad "socket directory left: $(ls -la "/tmp/nvmf-bench.$sid")" ||
	ok "socket directory (with nvmf_tgt's RPC socket and lock file) removed"
csv=$out/cells.csv
for c in n n.spdk n.spdk-perf; do
	[ "$(col "$csv" "$c" runs_ok)" = 1 ] && ok "$c: 1 run ok" || bad "$c: runs_ok '$(col "$csv" "$c" runs_ok)'"
	ge "$(col "$csv" "$c" iops)" 1 && ok "$c: iops $(col "$csv" "$c" iops)" || bad "$c: iops '$(col "$csv" "$c" iops)'"
	ge "$(col "$csv" "$c" target_cpu)" 0.1 && ok "$c: target CPU $(col "$csv" "$c" target_cpu) %" ||
		bad "$c: target_cpu '$(col "$csv" "$c" target_cpu)'"
	ge "$(col "$csv" "$c" p99)" "$(col "$csv" "$c" p50)" && ok "$c: p99 >= p50" || bad "$c: p99 < p50"
done
ge "$(col "$csv" n.spdk-perf host_cpu)" 1 && ok "spdk_nvme_perf: host CPU from /proc" ||
	bad "spdk_nvme_perf: host_cpu '$(col "$csv" n.spdk-perf host_cpu)'"
[ "$(col "$csv" n.spdk baseline)" = n ] && ok "twin's baseline is its cell" || bad "twin baseline"
grep -q 'build/bin/nvmf_tgt --no-huge' "$out/report.md" && grep -q 'build/bin/spdk_nvme_perf --no-huge' "$out/report.md" &&
	ok "report.md records the SPDK commands" || bad "SPDK commands not in report.md"
# perf.latency false: spdk_nvme_perf without -L, IOPS but no percentiles
[ "$(col "$csv" nl runs_ok)" = 1 ] && ge "$(col "$csv" nl iops)" 1 && ok "latency false: IOPS $(col "$csv" nl iops)" ||
	bad "latency false: runs_ok '$(col "$csv" nl runs_ok)' iops '$(col "$csv" nl iops)'"
[ -z "$(col "$csv" nl p50)" ] && ok "latency false: no p50" || bad "latency false: p50 '$(col "$csv" nl p50)'"
grep -A6 '^- \*\*nl\*\*' "$out/report.md" | grep 'spdk_nvme_perf --no-huge' | grep -qv -- ' -L' &&
	grep -A6 '^- \*\*n.spdk-perf\*\*' "$out/report.md" | grep 'spdk_nvme_perf --no-huge' | grep -q -- ' -L' &&
	ok "-L only where perf.latency is true" || bad "-L in the wrong commands: $(grep 'spdk_nvme_perf --no-huge' "$out/report.md")"
[ -s "$out/raw/spdk-e2e/n.spdk/rep1/nvmf_tgt.json" ] && ok "nvmf_tgt.json kept" || bad "no nvmf_tgt.json"
# spdk-compare validates and plans all 8 cells with the build given
"$NVMF_BENCH" --dry-run --spdk "$spdk" spdk-compare >"$tmp/plan" 2>&1 &&
	[ "$(grep -c ' x (' "$tmp/plan")" -eq 8 ] && ok "spdk-compare: 8 cells planned" || bad "plan: $(cat "$tmp/plan")"
exit $fail
