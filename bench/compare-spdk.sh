#!/usr/bin/env bash
# bench/compare-spdk.sh - nvmfd against SPDK's nvmf_tgt on SPDK's own benchmark.
#
# Runs nvmf-bench's built-in scenario spdk-compare (both targets on the
# target's CPUs with a 256 MiB RAM namespace, both driven by spdk_nvme_perf
# on the other CPUs, alternating in shuffled paired rounds) and prints one
# table: per workload SPDK's and nvmfd's median IOPS, nvmfd / SPDK with its
# 95 % paired bootstrap interval, and the same for IOPS per target
# CPU-second. A ratio whose interval contains 1.0 is "no difference".
#
# SPDK is taken from $SPDK_DIR; when it is not built there, the script
# builds it with the team's build script when that is present (an optional
# input outside this repository: $BUILD_SPDK, default
# ../shared/anchors/build-spdk.sh beside the repository), else it stops.
#
# Usage: bench/compare-spdk.sh [-r ROUNDS] [-d SECONDS] [-w SECONDS] [-o DIR]
#                              [--syscalls MODE] [--seed N] [--no-build] [-h]
#        bench/compare-spdk.sh --from DIR
#   -r ROUNDS        paired rounds (default 5; below 5 no interval can reach 95 %)
#   -d SECONDS       measured seconds per run (default 5)
#   -w SECONDS       warmup seconds per run (default 1)
#   -o DIR           nvmf-bench results folder (default results/compare-spdk-<UTC time>)
#   --syscalls MODE  nvmf-bench --syscalls (default off: counting syscalls with
#                    perf slows a busy-polling target more than an event-driven
#                    one, so the IOPS table is run without it)
#   --seed N         nvmf-bench --seed (run order and intervals)
#   --no-build       never build SPDK; stop if it is missing
#   --from DIR       print the table of an nvmf-bench results folder that ran
#                    spdk-compare (e.g. nvmf-bench --quick --spdk ...); run nothing
# Environment: SPDK_DIR (default $SPDK_SRC, else /var/cache/nvmfd-anchors/spdk-v25.09,
#   the build script's default), BUILD_SPDK, NVMF_BENCH (default build/bin/nvmf-bench).
# Exit status: 0 table printed; 1 a run failed (table of what ran); 2 usage,
#   or SPDK missing and not buildable.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
SPDK_DIR=${SPDK_DIR:-${SPDK_SRC:-/var/cache/nvmfd-anchors/spdk-v25.09}}
BUILD_SPDK=${BUILD_SPDK:-$repo/../shared/anchors/build-spdk.sh}
NVMF_BENCH=${NVMF_BENCH:-$repo/build/bin/nvmf-bench}
rounds=5 dur=5 warm=1 out="" syscalls=off seed="" build=1 from=

usage() { sed -n '/^# Usage:/,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case $1 in
	-r) rounds=${2:?-r needs a value}; shift 2 ;;
	-d) dur=${2:?-d needs a value}; shift 2 ;;
	-w) warm=${2:?-w needs a value}; shift 2 ;;
	-o) out=${2:?-o needs a value}; shift 2 ;;
	--syscalls) syscalls=${2:?--syscalls needs a value}; shift 2 ;;
	--seed) seed=${2:?--seed needs a value}; shift 2 ;;
	--no-build) build=0; shift ;;
	--from) from=${2:?--from needs a folder}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "compare-spdk: unknown argument '$1' (see -h)" >&2; exit 2 ;;
	esac
done
for v in "$rounds" "$dur" "$warm"; do
	[[ $v =~ ^[0-9]+$ ]] || { echo "compare-spdk: -r/-d/-w take whole numbers, got '$v'" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "compare-spdk: python3 is needed to print the table" >&2; exit 2; }

# table DIR ROUNDS DUR WARM TOOK LOAD-BEFORE PSI-BEFORE LOAD-AFTER
table() {
	python3 - "$1/cells.json" "${@:2}" <<'PY'
import json, sys
path, rounds, dur, warm, took, lb, psi, la = sys.argv[1:9]
cells = {c["cell"]: c for c in json.load(open(path))["cells"] if c["scenario"] == "spdk-compare"}
rows = [("4K randread QD32", "4k-randread-qd32"), ("128K read QD16", "128k-read-qd16"),
        ("4K randread QD1", "4k-randread-qd1"), ("4K randwrite QD32", "4k-randwrite-qd32")]

def iops(c, lat):
    if not c or "iops" not in c["median"]:
        return "–"
    s = f'{c["median"]["iops"]:,.0f}'
    if lat and "lat_avg" in c["median"]:
        s += f' ({c["median"]["lat_avg"]:.1f} µs)'
    return s

def ratio(c, key):
    pr = (c or {}).get("paired_ratio", {}).get(key)
    if not pr:
        return "–"
    if "ci_lo" not in pr:
        return f'{pr["ratio"]:.2f} ({pr["pairs"]} pair, no interval)'
    s = f'{pr["ratio"]:.2f} [{pr["ci_lo"]:.2f}, {pr["ci_hi"]:.2f}]'
    return s if pr["differs"] else "no difference (" + s + ")"

def cpu(c):
    return f'{c["median"]["target_cpu"]:.0f} %' if c and "target_cpu" in c["median"] else "–"

if not cells:
    sys.exit(f"compare-spdk: {path} has no spdk-compare cells")
if took:
    print(f"nvmfd vs SPDK nvmf_tgt, both driven by spdk_nvme_perf; {rounds} paired rounds of {dur} s + {warm} s "
          f"warmup, {took} s in all; load average before {lb}, after {la}; CPU pressure before (some avg10) {psi} %")
    print()
print("| workload | SPDK IOPS | nvmfd IOPS | nvmfd / SPDK [95 % CI] | IOPS per target CPU-second, nvmfd / SPDK "
      "[95 % CI] | target CPU SPDK / nvmfd | busy runs SPDK / nvmfd |")
print("|---|---|---|---|---|---|---|")
for label, g in rows:
    s, n = cells.get(g + ".spdk"), cells.get(g + ".nvmfd")
    qd1 = g.endswith("qd1")
    print(f"| {label} | {iops(s, qd1)} | {iops(n, qd1)} | {ratio(n, 'iops')} | "
          f"{ratio(n, 'iops_per_target_cpu_s')} | {cpu(s)} / {cpu(n)} | "
          f"{(s or {}).get('busy_runs', '–')} / {(n or {}).get('busy_runs', '–')} |")
PY
}
if [ -n "$from" ]; then
	[ -s "$from/cells.json" ] || { echo "compare-spdk: no $from/cells.json" >&2; exit 2; }
	table "$from" "" "" "" "" "" "" ""
	exit
fi
[ -x "$NVMF_BENCH" ] || { echo "compare-spdk: $NVMF_BENCH not built (scripts/build.sh)" >&2; exit 2; }

spdk_built() { [ -x "$SPDK_DIR/build/bin/nvmf_tgt" ] && [ -x "$SPDK_DIR/build/bin/spdk_nvme_perf" ]; }
if ! spdk_built; then
	if [ $build = 1 ] && [ -f "$BUILD_SPDK" ]; then
		echo "compare-spdk: SPDK not built in $SPDK_DIR; building it with $BUILD_SPDK" >&2
		SPDK_SRC=$SPDK_DIR bash "$BUILD_SPDK" >&2
	fi
	spdk_built || {
		echo "compare-spdk: SPDK is not built in $SPDK_DIR (no build/bin/nvmf_tgt, spdk_nvme_perf)" \
			"and $([ $build = 1 ] && echo "no build script at $BUILD_SPDK" || echo "--no-build")" >&2
		exit 2
	}
fi

[ -n "$out" ] || out=results/compare-spdk-$(date -u +%Y%m%d-%H%M%S)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
psi_before=$(sed -n 's/^some avg10=\([0-9.]*\).*/\1/p' /proc/pressure/cpu 2>/dev/null || true)
t0=$(date +%s)
args=(--spdk "$SPDK_DIR" -r "$rounds" -d "$dur" -w "$warm" --syscalls "$syscalls" --no-progress -o "$out")
[ -n "$seed" ] && args+=(--seed "$seed")
rc=0
"$NVMF_BENCH" "${args[@]}" spdk-compare >&2 || rc=$?
[ $rc -le 1 ] || exit $rc
t1=$(date +%s)

table "$out" "$rounds" "$dur" "$warm" "$((t1 - t0))" "$load_before" "${psi_before:-n/a}" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
echo "report: $out/report.md" >&2
exit $rc
