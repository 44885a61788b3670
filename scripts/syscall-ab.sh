#!/usr/bin/env bash
# System calls per I/O of two nvmfd builds, paired and alternating
# (doc/perf.md §11.2): for each of ROUNDS rounds and each workload, one
# run of A and one of B (A first in odd rounds, B first in even ones),
# each a fresh nvmfd (--cpus 0) prefilled for 1 s, then perf stat's
# syscall tracepoints on the target and the worker rings' own counters
# (waits + submits, sqes, cqes, epoll_cqes: the runtime stats over the
# control socket before and after) over a SECONDS nvmf-perf run (--cpus
# 1). Prints, per workload and count, A's and B's median [min, max] and
# the median [min, max] of the paired differences B - A (with 6 rounds
# the [min, max] of the differences is a 96.9 % interval for their
# median). Counts, not timings: run it under `flock` on a shared machine
# all the same, as batching at depth > 1 follows the load.
#
#   scripts/syscall-ab.sh BIN_A BIN_B [ROUNDS [SECONDS]] [WORKLOAD...]
#
# Env: NS (namespace, default ram:256M; e.g. file:/dev/shm/ab.img,size=256M),
# NVMFD_ARGS_A / NVMFD_ARGS_B (nvmfd options of each side; NVMFD_ARGS for
# both), OUT (directory for the runs' files, default a temporary one),
# LOCK (a file to flock around each run, e.g. a shared bench lock).
# Workloads as in scripts/perf-workloads.sh (default rr-qd1 rr-qd32).
# Needs perf (root or perf_event_paranoid <= -1) and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d'; exit 2; }
A=$1 B=$2
shift 2
ROUNDS=6 SECS=2
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then ROUNDS=$1; shift; fi
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then SECS=$1; shift; fi
WLS=("$@")
[ ${#WLS[@]} -gt 0 ] || WLS=(rr-qd1 rr-qd32)
[ -n "${OUT:-}" ] || OUT=$(mktemp -d /tmp/nvmfd-sysab.XXXXXX)
mkdir -p "$OUT"
NQN=nqn.2026-12.io.nvmfd:sysab
EV=raw_syscalls:sys_enter,context-switches
for s in io_uring_enter epoll_wait epoll_ctl read write recvfrom sendmsg; do
	EV=$EV,syscalls:sys_enter_$s
done
# shellcheck source=scripts/perf-workloads.sh
. scripts/perf-workloads.sh
trap perf_cleanup EXIT

# stats SOCK FILE: the control socket's stats JSON into FILE.
stats() {
	python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"cmd":"stats"}\n')
b = b""
while not b.endswith(b"\n"):
    c = s.recv(1 << 20)
    if not c:
        break
    b += c
open(sys.argv[2], "wb").write(b)
PY
}

# one_run SIDE BIN ARGS WL PREFIX
one_run() {
	local side=$1 bin=$2 nargs=$3 wl=$4 p=$5 port=
	rm -f "$p".*
	# shellcheck disable=SC2086
	"$bin/nvmfd" -l 127.0.0.1:0 -s $NQN -n "${NS:-ram:256M}" --allow-any-host --cpus 0 \
		--control "$p.sock" $nargs >"$p.tgt.log" 2>&1 &
	tpid=$!
	for _ in $(seq 200); do
		port=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$p.tgt.log" | head -1)
		[ -n "$port" ] && break
		sleep 0.05
	done
	[ -n "$port" ] || { echo "$side $wl: nvmfd did not start: $(tail -2 "$p.tgt.log")" >&2; exit 1; }
	local trid="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN"
	"$bin/nvmf-perf" -r "$trid" -w write -o 131072 -q 16 -t 1 --cpus 1 >/dev/null 2>&1 ||
		echo "$side $wl: prefill failed" >&2
	perf stat -x, -e "$EV" -p "$tpid" -o "$p.stat" &
	ppid=$!
	sleep 0.3 # let perf attach
	stats "$p.sock" "$p.s0"
	# shellcheck disable=SC2046
	"$bin/nvmf-perf" -r "$trid" $(wl_args "$wl") -t "$SECS" --cpus 1 --exec bound --json >"$p.json" 2>"$p.err" ||
		echo "$side $wl: nvmf-perf failed: $(tail -2 "$p.err" | tr '\n' ' ')" >&2
	stats "$p.sock" "$p.s1"
	kill -INT "$ppid"; wait "$ppid" 2>/dev/null || true
	ppid=
	kill -TERM "$tpid"; wait "$tpid" 2>/dev/null || true
	tpid=
	echo "$side $wl $p $(cut -d' ' -f1 /proc/loadavg)" >>"$OUT/runs"
}

echo "# $(date -u +%FT%TZ) A=$A B=$B rounds=$ROUNDS secs=$SECS ns=${NS:-ram:256M} load=$(cut -d' ' -f1-3 /proc/loadavg) out=$OUT"
: >"$OUT/runs"
for r in $(seq "$ROUNDS"); do
	for wl in "${WLS[@]}"; do
		if [ $((r % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
		for side in $order; do
			if [ "$side" = A ]; then bin=$A nargs=${NVMFD_ARGS_A:-${NVMFD_ARGS:-}}
			else bin=$B nargs=${NVMFD_ARGS_B:-${NVMFD_ARGS:-}}; fi
			if [ -n "${LOCK:-}" ]; then
				exec 9>>"$LOCK"
				flock 9
			fi
			one_run "$side" "$bin" "$nargs" "$wl" "$OUT/$side-$wl-$r"
			[ -n "${LOCK:-}" ] && exec 9>&-
		done
	done
done

python3 - "$OUT" <<'PY'
import json, statistics as st, sys
out = sys.argv[1]
def ring(path):
    d = json.loads(open(path).read())
    def find(o):
        if isinstance(o, dict):
            if "runtime" in o and isinstance(o["runtime"], dict):
                return o["runtime"]
            for v in o.values():
                x = find(v)
                if x:
                    return x
        return None
    t = {}
    for p in (find(d) or {}).get("pools", []):
        for k, v in (p.get("ring") or {}).items():
            t[k] = t.get(k, 0) + v
    return t
res = {}
loads = []
for l in open(f"{out}/runs"):
    side, wl, p, load = l.split()
    loads.append(float(load))
    try:
        ios = json.load(open(p + ".json"))["total"]["ios"] or 1
    except Exception:
        continue
    c = {}
    for f in (x.strip().split(",") for x in open(p + ".stat")):
        if len(f) >= 3 and f[0] and not f[0].startswith("<"):
            c[f[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "syscalls")] = float(f[0]) / ios
    r0, r1 = ring(p + ".s0"), ring(p + ".s1")
    if r1:
        d = {k: r1[k] - r0.get(k, 0) for k in r1}
        c["ring_enters"] = (d.get("waits", 0) + d.get("submits", 0)) / ios
        for k in ("sqes", "cqes", "epoll_cqes"):
            c["ring_" + k] = d.get(k, 0) / ios
    res.setdefault(wl, {}).setdefault(side, []).append(c)
print(f"load during the runs: {min(loads):.2f}-{max(loads):.2f}")
for wl, sides in res.items():
    a, b = sides.get("A", []), sides.get("B", [])
    keys = sorted({k for x in a + b for k in x})
    print(f"== {wl} ({len(a)} A, {len(b)} B runs; per I/O)")
    for k in keys:
        va = [x.get(k, 0) for x in a]
        vb = [x.get(k, 0) for x in b]
        if max(va + vb + [0]) < 0.005:
            continue
        dd = sorted(y - x for x, y in zip(va, vb))
        s = f"  {k:16s} A {st.median(va):.3f} [{min(va):.3f}, {max(va):.3f}]  B {st.median(vb):.3f} [{min(vb):.3f}, {max(vb):.3f}]"
        if dd:
            s += f"  B-A {st.median(dd):+.3f} [{dd[0]:+.3f}, {dd[-1]:+.3f}]"
        print(s)
PY
