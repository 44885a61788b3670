#!/usr/bin/env bash
# Profile nvmfd on the four workloads of doc/perf.md: the target's CPU time,
# context switches and system calls per I/O (perf stat, software events and
# syscall tracepoints), optionally a call-graph profile (perf record) or
# strace's syscall summary. Needs root (or perf_event_paranoid <= -1) and
# perf; strace for -m strace.
#
#   scripts/perf-profile.sh [-b BINDIR] [-t SECONDS] [-m MODE] [-d DIGESTS]
#                           [-o OUTDIR] [WORKLOAD...]
#
#   -b BINDIR   nvmfd and nvmf-perf from here (default build/bin)
#   -t SECONDS  run time of each workload (default 4)
#   -m MODE     stat (default): perf stat, counts per I/O;
#               record: also perf record -g (cpu-clock) into OUTDIR/WL.data
#               and the top of its report in OUTDIR/WL.txt;
#               strace: strace -c -f on the target (slows it a lot: the
#               counts per I/O at queue depth > 1 then show more batching
#               than an untraced run has)
#   -d DIGESTS  nvmf-perf --digest (hdr, data or hdr,data)
#   -o OUTDIR   where records/reports go (default a temporary directory,
#               printed)
#   WORKLOAD    rr-qd1 (4K randread QD1), rr-qd32 (4K randread QD32),
#               rd128k-qd16 (128K read QD16), rw-qd32 (4K randwrite QD32);
#               default all four
#
# Target pinned with --cpus 0 (RAM namespace, 256 MiB), nvmf-perf with
# --cpus 1, over 127.0.0.1 on a port the target picks. Before each
# workload the namespace is written sequentially for FILL seconds (default
# 1; 128K writes, QD16: more than 256 MiB here), so that reads copy real
# pages (as a pre-zeroed SPDK malloc bdev) instead of the zero page. One line per
# workload: IOPS, target CPU us per I/O, and per-I/O counts. NVMFD_ARGS adds
# nvmfd options (e.g. NVMFD_ARGS='--exec unbound'); NS replaces the
# namespace (e.g. NS=file:/dev/shm/prof.img,size=256M: a file on tmpfs,
# whose reads are backend io_uring SQEs); PRIO='chrt -f 5' runs
# target and initiator under SCHED_FIFO (see scripts/ab-perf.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=build/bin SECS=4 MODE=stat DIG= OUT= FILL=1
while getopts b:t:m:d:o:h opt; do
	case $opt in
	b) BIN=$OPTARG ;;
	t) SECS=$OPTARG ;;
	m) MODE=$OPTARG ;;
	d) DIG=$OPTARG ;;
	o) OUT=$OPTARG ;;
	*) sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
case $MODE in stat | record | strace) ;; *) echo "unknown mode $MODE" >&2; exit 2 ;; esac
WLS=("$@")
[ ${#WLS[@]} -gt 0 ] || WLS=(rr-qd1 rr-qd32 rd128k-qd16 rw-qd32)
[ -n "$OUT" ] || OUT=$(mktemp -d /tmp/nvmfd-prof.XXXXXX)
mkdir -p "$OUT"
NQN=nqn.2026-12.io.nvmfd:prof
SYSCALLS="sendmsg recvfrom recvmsg sendto write read writev readv epoll_ctl epoll_wait io_uring_enter futex"
# shellcheck source=scripts/perf-workloads.sh
. scripts/perf-workloads.sh
trap perf_cleanup EXIT

echo "# $(date -u +%FT%TZ) bin=$BIN secs=$SECS mode=$MODE digest=${DIG:-none} load=$(cut -d' ' -f1-3 /proc/loadavg) out=$OUT"
for wl in "${WLS[@]}"; do
	args=$(wl_args "$wl")
	log=$OUT/$wl.tgt.log
	rm -f "$log" # no stale port from an earlier run
	# shellcheck disable=SC2086
	${PRIO:-} "$BIN/nvmfd" -l 127.0.0.1:0 -s $NQN -n "${NS:-ram:256M}" --allow-any-host --cpus 0 ${NVMFD_ARGS:-} >"$log" 2>&1 &
	tpid=$!
	port=
	for _ in $(seq 200); do
		port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$log" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { echo "$wl: nvmfd did not start: $(tail -2 "$log")" >&2; exit 1; }
	trid="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN"
	# Write the whole namespace first: reads of never-written RAM pages
	# would copy the kernel's zero page and fault once per page.
	"$BIN/nvmf-perf" -r "$trid" -w write -o 131072 -q 16 -t "$FILL" --cpus 1 >/dev/null 2>&1 ||
		echo "$wl: prefill failed" >&2
	case $MODE in
	stat | record)
		ev=task-clock,context-switches,cpu-migrations,page-faults
		# syscall tracepoints cost CPU themselves: not while recording
		if [ "$MODE" = stat ]; then
			ev=$ev,raw_syscalls:sys_enter
			for s in $SYSCALLS; do ev=$ev,syscalls:sys_enter_$s; done
		fi
		perf stat -x, -e "$ev" -p "$tpid" -o "$OUT/$wl.stat" &
		ppid=$!
		;;
	strace)
		strace -c -f -p "$tpid" -o "$OUT/$wl.strace" 2>/dev/null &
		ppid=$!
		;;
	esac
	rpid=
	if [ "$MODE" = record ]; then
		perf record -q -e cpu-clock -g -p "$tpid" -o "$OUT/$wl.data" 2>/dev/null &
		rpid=$!
	fi
	sleep 0.3 # let the tracer attach
	# shellcheck disable=SC2086
	if ! ${PRIO:-} "$BIN/nvmf-perf" -r "$trid" $args -t "$SECS" --cpus 1 --exec bound --json ${DIG:+--digest $DIG} >"$OUT/$wl.json" 2>"$OUT/$wl.err"; then
		echo "$wl: nvmf-perf failed: $(tail -2 "$OUT/$wl.err" | tr '\n' ' ')" >&2
	fi
	[ -n "$rpid" ] && { kill -INT "$rpid"; wait "$rpid" 2>/dev/null || true; }
	kill -INT "$ppid"; wait "$ppid" 2>/dev/null || true
	ppid=
	kill -TERM "$tpid"; wait "$tpid" 2>/dev/null || true
	tpid=
	if [ -n "$rpid" ]; then
		perf report -i "$OUT/$wl.data" --no-children --stdio --percent-limit 0.7 \
			--sort symbol 2>/dev/null | grep -v '^$' >"$OUT/$wl.txt" || true
	fi
	python3 - "$wl" "$OUT" "$MODE" <<'PY'
import json, re, sys
wl, out, mode = sys.argv[1:4]
try:
    t = json.load(open(f"{out}/{wl}.json"))["total"]
except Exception:
    print(f"{wl}: no result"); sys.exit(0)
ios = t["ios"] or 1
counts = {}
if mode in ("stat", "record"):
    for l in open(f"{out}/{wl}.stat"):
        f = l.strip().split(",")
        if len(f) < 3 or not f[0] or f[0].startswith("<"):
            continue
        name = f[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")
        counts[name] = float(f[0])
    cpu_us = counts.pop("task-clock", 0) * 1e3 / ios  # task-clock is in ms
else:
    cpu_us = None
    for l in open(f"{out}/{wl}.strace"):
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$", l)
        if m and m.group(2) != "total":
            counts[m.group(2)] = float(m.group(1))
lat = t.get("latency_us") or {}
s = f"{wl:12s} iops {t['iops']:9.0f} p50_us {lat.get('p50', 0):7.1f}"
if cpu_us is not None:
    s += f"  tgt_cpu_us/io {cpu_us:6.2f}"
s += "  per io:"
for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
    if v / ios >= 0.005:
        s += f" {k} {v / ios:.2f}"
print(s)
PY
done
