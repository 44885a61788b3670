#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# storm.sh - connect storms against one nvmfd (issue 14).
#
#   tests/scale/storm.sh [-n RUNS] [-H HOSTS] [-l LOOPS] [-- NVMFD-ARGS...]
#
#  1. RUNS (default 200) short nvmf-perf runs one after the other (4 I/O
#     queues, 1 s each) while `stress-ng --cpu 2` loads two CPUs (skipped
#     with a note when stress-ng is missing: scripts/install-deps.sh);
#  2. HOSTS (default 500) controllers connecting at once, each with its own
#     host NQN, from ceil(HOSTS/63) nvmf-perf processes started together;
#  3. LOOPS (default 4) parallel reconnect loops of 25 short runs each.
# Reports failures per phase, keep-alive expiries, the target's fds before
# and after. Exit 0 when every run passed and the fds returned to the
# baseline, 1 otherwise.
set -u
. "$(dirname "$0")/common.sh"

RUNS=200
HOSTS=500
LOOPS=4
while [ $# -gt 0 ]; do
	case $1 in
	-n) RUNS=$2; shift 2 ;;
	-H) HOSTS=$2; shift 2 ;;
	-l) LOOPS=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [-n RUNS] [-H HOSTS] [-l LOOPS] [-- nvmfd args]" >&2; exit 2 ;;
	esac
done
NS=${NS:-null:1G}
log=$WORK/nvmfd.log
start_tgt "$log" "$@"
sleep 0.5
base_fds=$(nfds "$TGT_PID")
total_fail=0

short_run() { # short_run OUT [HOSTNQN]
	# the host bound, as measured before nvmf-perf's default became auto
	"$PERF" -r "$(trid "$TGT_PORT" "${2:-}")" -P 4 -q 4 -o 4096 -w randread -t 1 \
		--exec bound --timeout 30000 >"$1" 2>&1
}

# 1. sequential short runs under CPU load
hog=
if command -v stress-ng >/dev/null; then
	stress-ng --cpu 2 --timeout $((RUNS * 10)) >/dev/null 2>&1 &
	hog=$!
	BG_PIDS+=($hog)
	load="under stress-ng --cpu 2"
else
	load="WITHOUT CPU load (stress-ng missing)"
fi
f1=0
t0=$(date +%s)
for i in $(seq "$RUNS"); do
	short_run "$WORK/seq.out" || { f1=$((f1 + 1)); cp "$WORK/seq.out" "$WORK/seq.fail.$i"; }
done
[ -n "$hog" ] && kill "$hog" 2>/dev/null && wait "$hog" 2>/dev/null
echo "phase 1: $RUNS short runs $load in $(($(date +%s) - t0)) s: $f1 failed"
total_fail=$((total_fail + f1))

# 2. HOSTS controllers at once
pids=()
left=$HOSTS
p=0
while [ "$left" -gt 0 ]; do
	p=$((p + 1))
	n=$((left < 63 ? left : 63))
	left=$((left - n))
	args=()
	for c in $(seq "$n"); do
		args+=(-r "$(trid "$TGT_PORT" "nqn.2014-08.org.nvmexpress:uuid:5707e000-0000-4000-8000-$(printf '%06x%06x' "$p" "$c")")")
	done
	"$PERF" "${args[@]}" -P 1 -q 2 -o 4096 -w randread -t 3 --exec bound --timeout 30000 \
		>"$WORK/many.$p.out" 2>&1 &
	pids+=($!)
	BG_PIDS+=($!)
done
f2=0
for pid in "${pids[@]}"; do wait "$pid" || f2=$((f2 + 1)); done
BG_PIDS=()
echo "phase 2: $HOSTS hosts at once from $p processes: $f2 processes failed" \
	"($(count_connect_fail "$WORK"/many.*.out) failed connects)"
total_fail=$((total_fail + f2))

# 3. reconnect loops
pids=()
for l in $(seq "$LOOPS"); do
	(
		f=0
		for i in $(seq 25); do
			short_run "$WORK/loop.$l.out" || f=$((f + 1))
		done
		exit $f
	) &
	pids+=($!)
	BG_PIDS+=($!)
done
f3=0
for pid in "${pids[@]}"; do
	wait "$pid"
	f3=$((f3 + $?))
done
BG_PIDS=()
echo "phase 3: $LOOPS loops x 25 reconnects: $f3 failed"
total_fail=$((total_fail + f3))

for _ in $(seq 100); do
	[ "$(nfds "$TGT_PID")" -le "$base_fds" ] && break
	sleep 0.1
done
after_fds=$(nfds "$TGT_PID")
kato=$(count_kato "$log")
stop_tgt
stop_ms=$STOP_MS
echo "keep-alive expiries: $kato; fds $base_fds before, $after_fds after; stop $stop_ms ms"
if [ "$total_fail" = 0 ] && [ "$kato" = 0 ] && [ "$after_fds" -le "$base_fds" ]; then
	echo PASS
	exit 0
fi
echo "FAIL (logs in $WORK)"
KEEP_WORK=1
exit 1
