#!/usr/bin/env bash
# Paired, alternating A/B comparison of two builds of nvmfd + nvmf-perf on
# this machine: for each workload, N rounds of (A, B) in random order per
# round; prints each run, the medians and the median of the per-round B/A
# ratios with a distribution-free confidence interval (sign-test order
# statistics; its confidence level is printed: with fewer than 6 rounds
# no interval reaches 95 %, and the range of the ratios is what there is).
# For before/after checks of a change (e.g. issues 9 and 16).
#
#   scripts/ab-perf.sh A_BINDIR B_BINDIR [ROUNDS] [SECONDS]
#
# WORKLOADS (environment) picks the workloads, default "rr-qd32 rr-qd1":
#   rr-qd1      4K randread QD1      rr-qd32     4K randread QD32
#   rd128k-qd16 128K read QD16       rw-qd32     4K randwrite QD32
# DIGEST=hdr,data adds nvmf-perf --digest (DIGEST_A / DIGEST_B: for one
# side only, e.g. the digest cost of one build: A and B the same directory,
# DIGEST_B=hdr,data); NVMFD_ARGS adds nvmfd options (NVMFD_ARGS_A /
# NVMFD_ARGS_B: for one side only, e.g. A and B the same directory,
# NVMFD_ARGS_A="--net epoll" NVMFD_ARGS_B="--net uring").
# PRIO="chrt -f 5" (for example) runs target and initiator under that
# command: on a machine loaded by others, SCHED_FIFO keeps their runnable
# tasks from adding scheduler wake-up delay to every I/O (the kernel's RT
# throttling still leaves them 5 % of each CPU; runs are short).
# Per run: IOPS, the target's CPU time per I/O (us, from the schedstat
# of all its threads over the nvmf-perf run, connection setup included),
# the p50 latency (us) and nvmf-perf's own CPU time per I/O (us, user +
# system over its measured window, from its --json report).
#
# Target pinned with --cpus 0, initiator with --cpus 1 (2-CPU machine);
# RAM namespace, written once before the runs of a target (so reads copy
# real pages); 127.0.0.1, a port picked by the target (port 0).
set -euo pipefail
A=${1:?usage: $0 A_BINDIR B_BINDIR [ROUNDS] [SECONDS]}
B=${2:?usage: $0 A_BINDIR B_BINDIR [ROUNDS] [SECONDS]}
ROUNDS=${3:-5}
SECS=${4:-3}
WORKLOADS=${WORKLOADS:-"rr-qd32 rr-qd1"}
NQN=nqn.2026-12.io.nvmfd:ab
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# shellcheck source=scripts/perf-workloads.sh
. "$(dirname "$0")/perf-workloads.sh"

# CPU time (ns) of all threads of process $1
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d\n", s}'
}

run_one() { # bindir workload A|B -> prints "IOPS CPU_US_PER_IO P50_US"
	local bin=$1 wl=$2 log=$work/tgt.log port iops c0 c1 trid dig
	[ "$3" = A ] && dig=${DIGEST_A-${DIGEST:-}} || dig=${DIGEST_B-${DIGEST:-}}
	local nargs
	[ "$3" = A ] && nargs=${NVMFD_ARGS_A-${NVMFD_ARGS:-}} || nargs=${NVMFD_ARGS_B-${NVMFD_ARGS:-}}
	rm -f "$log" # no stale port from the previous target's log
	# shellcheck disable=SC2086
	${PRIO:-} "$bin/nvmfd" -l 127.0.0.1:0 -s $NQN -n ram:256M --allow-any-host --cpus 0 $nargs >"$log" 2>&1 &
	local pid=$!
	for _ in $(seq 100); do
		port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	trid="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN"
	"$bin/nvmf-perf" -r "$trid" -w write -o 131072 -q 16 -t 1 --cpus 1 >/dev/null 2>&1 || true
	c0=$(cpu_ns $pid)
	# shellcheck disable=SC2046
	if ${PRIO:-} "$bin/nvmf-perf" -r "$trid" $(wl_args "$wl") --exec bound ${PERF_ARGS:-} -t "$SECS" --warmup 1 --cpus 1 --json \
		${dig:+--digest $dig} >"$work/perf.json" 2>"$work/perf.err"; then
		c1=$(cpu_ns $pid)
		iops=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["total"]; ios=d["iops"] * (d["seconds"] + 1); print(round(d["iops"]), round((int(sys.argv[3]) - int(sys.argv[2])) / 1e3 / ios, 2), round((d.get("latency_us") or {}).get("p50", 0), 1), round((d.get("cpu_user_pct", 0) + d.get("cpu_sys_pct", 0)) * 1e4 / d["iops"], 2)) if ios > 0 else print("FAILED FAILED FAILED FAILED")' "$work/perf.json" "$c0" "$c1")
	else
		iops="FAILED FAILED FAILED FAILED"
		echo "nvmf-perf ($bin) failed: $(tail -2 "$work/perf.err" | tr '\n' ' ')" >&2
	fi
	kill -TERM $pid; wait $pid 2>/dev/null || true
	echo "$iops"
}

echo "# $(date -u +%FT%TZ) A=$A B=$B rounds=$ROUNDS secs=$SECS digest=${DIGEST:-none} (A ${DIGEST_A-${DIGEST:-none}}, B ${DIGEST_B-${DIGEST:-none}}) nvmfd args A '${NVMFD_ARGS_A-${NVMFD_ARGS:-}}' B '${NVMFD_ARGS_B-${NVMFD_ARGS:-}}' prio=${PRIO:-none} perf_args=${PERF_ARGS:-none} load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for wl in $WORKLOADS; do
	: >"$work/a.$wl"; : >"$work/b.$wl"
	for r in $(seq "$ROUNDS"); do
		if ((RANDOM % 2)); then order="A B"; else order="B A"; fi
		for w in $order; do
			if [ $w = A ]; then v=$(run_one "$A" "$wl" A); else v=$(run_one "$B" "$wl" B); fi
			# a failed run drops the whole round (pairs stay pairs)
			echo "$v" >>"$work/$([ $w = A ] && echo a || echo b).$wl"
			read -r v_iops v_cpu v_p50 v_host <<<"$v"
			echo "$wl round $r $w: $v_iops IOPS, $v_cpu target-us/io, p50 $v_p50 us, $v_host host-us/io (load $(cut -d' ' -f1 /proc/loadavg))"
		done
	done
	python3 - "$work/a.$wl" "$work/b.$wl" "$wl" <<'PY'
import math, statistics, sys
ra = [x.split() for x in open(sys.argv[1])]
rb = [x.split() for x in open(sys.argv[2])]
pairs = [(list(map(float, x)), list(map(float, y))) for x, y in zip(ra, rb)
         if "FAILED" not in x and "FAILED" not in y]
fails = sum(1 for x in ra + rb if "FAILED" in x)
wl = sys.argv[3]
if fails:
    print(f"{wl}: {fails} failed run(s), their rounds left out")
if not pairs:
    sys.exit(0)

def ci(rs):
    """Sign-test interval for the median of rs: (lo, hi, confidence)."""
    n = len(rs)
    rs = sorted(rs)
    best = (rs[0], rs[-1], 1 - 2 * 0.5 ** n)
    for k in range(1, n // 2 + 1):
        conf = 1 - 2 * sum(math.comb(n, i) for i in range(k)) * 0.5 ** n
        if conf >= 0.95:
            best = (rs[k - 1], rs[n - k], conf)
    return best

for i, name in ((0, "IOPS"), (1, "target us/io"), (2, "p50 us"), (3, "host us/io")):
    a = [x[i] for x, _ in pairs]
    b = [y[i] for _, y in pairs]
    r = [y[i] / x[i] for x, y in pairs if x[i] > 0]
    lo, hi, conf = ci(r)
    if len(r) < 3:
        verdict = "too few rounds for an interval"
    else:
        verdict = "no difference shown" if lo <= 1.0 <= hi else ("B higher" if lo > 1 else "B lower")
    print(f"{wl}: {name}: A median {statistics.median(a):.6g}, B median {statistics.median(b):.6g}, "
          f"B/A median {statistics.median(r):.3f}, {conf * 100:.1f} % CI [{lo:.3f}, {hi:.3f}] "
          f"(n={len(r)}): {verdict}")
PY
done
