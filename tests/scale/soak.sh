#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# soak.sh - a verify soak with faults on a file namespace (issue 14).
#
#   tests/scale/soak.sh [-t SECONDS] [-- NVMFD-ARGS...]
#
# Default 180 s (the CI form; the long form is -t 3600). One nvmfd with two
# 64 MiB file namespaces, and at the same time:
#  - victim hosts (namespace 2): nvmf-perf --verify-state (randrw, 4 I/O
#    queues, 8 s runs)
#    through dropproxy.py, which resets each connection after a random
#    lifetime (mean 6 s); one in three victim runs is also SIGKILLed at a
#    random moment;
#  - a steady host (namespace 1): nvmf-perf --verify-state runs (4 s)
#    straight to nvmfd;
#  - every 20-40 s nvmfd is restarted (SIGTERM, then started again on the
#    same port and file).
# Verdict: no run may report a verify mismatch (exit 1), whatever the fault;
# a steady run that no restart overlapped must pass (exit 0): the target
# keeps serving the other connections while victims are reset or killed;
# every victim run's exit is 0 (no fault hit it), 3 (its connection was
# reset or the target restarted) or 137 (killed). The victims share one
# state file, the steady host another (--verify-state): before its I/O
# every run reads back what the earlier runs wrote, so a block acknowledged
# before a SIGKILL, a reset or an nvmfd restart must read back intact in
# the next run (a write in flight then may read back old or new).
# Exit 0 pass, 1 fail.
set -u
. "$(dirname "$0")/common.sh"
SECS=180
while [ $# -gt 0 ]; do
	case $1 in
	-t) SECS=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [-t SECONDS] [-- nvmfd args]" >&2; exit 2 ;;
	esac
done
# nsid 1 for the steady host, nsid 2 for the victims: hosts writing the
# same blocks would overwrite each other's verify images
NS=file:$WORK/steady.img,size=64M
set -- -n "file:$WORK/victim.img,size=64M" "$@"
log=$WORK/nvmfd.log
start_tgt "$log" "$@"
PORT=$TGT_PORT
python3 "$(dirname "$0")/dropproxy.py" "$PORT" 6 "$WORK/proxy.port" >"$WORK/proxy.log" 2>&1 &
PROXY=$!
BG_PIDS+=($PROXY)
for _ in $(seq 100); do [ -s "$WORK/proxy.port" ] && break; sleep 0.05; done
PPORT=$(cat "$WORK/proxy.port")

t_end=$(($(date +%s) + SECS))
restarts=0
mismatch=0
steady_ok=0
steady_bad=0
victim_runs=0
victim_bad=0
declare -A killed

# the steady host: back-to-back short verify runs, results in steady.N.rc
(
	i=0
	while [ "$(date +%s)" -lt "$t_end" ]; do
		i=$((i + 1))
		echo "$(date +%s%N) start $i" >>"$WORK/steady.times"
		"$PERF" -r "$(trid "$PORT")" -P 2 -q 8 -o 4096 -w randrw -M 50 -t 4 --exec bound --verify-state "$WORK/steady.state" \
			--ns 1 \
			--timeout 15000 >"$WORK/steady.$i.out" 2>&1
		echo $? >"$WORK/steady.$i.rc"
		echo "$(date +%s%N) end $i" >>"$WORK/steady.times"
	done
) &
STEADY=$!
BG_PIDS+=($STEADY)

next_restart=$(($(date +%s) + 20 + RANDOM % 20))
v=0
vpid=
while [ "$(date +%s)" -lt "$t_end" ]; do
	if [ -z "$vpid" ] || ! kill -0 "$vpid" 2>/dev/null; then
		if [ -n "$vpid" ]; then
			wait "$vpid"
			echo $? >"$WORK/victim.$v.rc"
		fi
		v=$((v + 1))
		"$PERF" -r "$(trid "$PPORT")" -P 4 -q 8 -o 4096 -w randrw -M 50 -t 8 --exec bound --verify-state "$WORK/victim.state" \
			--ns 2 \
			--timeout 15000 >"$WORK/victim.$v.out" 2>&1 &
		vpid=$!
		if [ $((RANDOM % 3)) = 0 ]; then
			killed[$v]=$((RANDOM % 8 + 1))
			(sleep "${killed[$v]}"; kill -KILL "$vpid" 2>/dev/null) &
		fi
	fi
	if [ "$(date +%s)" -ge "$next_restart" ]; then
		echo "$(date +%s%N) restart" >>"$WORK/restart.times"
		stop_tgt
		ms=$STOP_MS
		echo "restart $((restarts + 1)): stopped in $ms ms"
		NVMFD_LISTEN=127.0.0.1:$PORT start_tgt "$log" "$@"
		echo "$(date +%s%N) up" >>"$WORK/restart.times"
		restarts=$((restarts + 1))
		next_restart=$(($(date +%s) + 20 + RANDOM % 20))
	fi
	sleep 0.2
done
if [ -n "$vpid" ]; then
	wait "$vpid"
	echo $? >"$WORK/victim.$v.rc"
fi
wait "$STEADY"

# a steady run overlapped a restart if its [start, end] meets a [restart, up]
# window (connections are refused or reset while nvmfd is down)
overlaps() { # overlaps START END
	[ -s "$WORK/restart.times" ] || return 1
	awk -v s="$1" -v e="$2" '$2 == "restart" {r = $1} $2 == "up" && r <= e && $1 >= s {f = 1}
		END {exit !f}' "$WORK/restart.times"
}
for f in "$WORK"/steady.*.rc; do
	i=${f##*/steady.}
	i=${i%.rc}
	rc=$(cat "$f")
	s=$(awk -v i="$i" '$2 == "start" && $3 == i {print $1}' "$WORK/steady.times")
	e=$(awk -v i="$i" '$2 == "end" && $3 == i {print $1}' "$WORK/steady.times")
	[ "$rc" = 1 ] && { mismatch=$((mismatch + 1)); echo "steady run $i: verify mismatch:"; cat "$WORK/steady.$i.out"; }
	if overlaps "$s" "$e"; then
		continue
	fi
	if [ "$rc" = 0 ]; then
		steady_ok=$((steady_ok + 1))
	else
		steady_bad=$((steady_bad + 1))
		echo "steady run $i (no restart during it) exit $rc:"
		tail -3 "$WORK/steady.$i.out"
	fi
done
for f in "$WORK"/victim.*.rc; do
	i=${f##*/victim.}
	i=${i%.rc}
	rc=$(cat "$f")
	victim_runs=$((victim_runs + 1))
	case $rc in
	0 | 3 | 137) ;;
	1) mismatch=$((mismatch + 1)); echo "victim run $i: verify mismatch:"; cat "$WORK/victim.$i.out" ;;
	*) victim_bad=$((victim_bad + 1)); echo "victim run $i exit $rc:"; tail -3 "$WORK/victim.$i.out" ;;
	esac
done
drops=$(grep -c "^drop" "$WORK/proxy.log")
kills=${#killed[@]}
vpass=$(grep -lx 0 "$WORK"/victim.*.rc 2>/dev/null | wc -l)
blocks=$(cat "$WORK"/steady.*.out "$WORK"/victim.*.out 2>/dev/null |
	awk '/^verify: / {s += $2} END {printf "%.0f", s}')
# what runs read back of their predecessors' writes (--verify-state)
carried=$(cat "$WORK"/steady.*.out "$WORK"/victim.*.out 2>/dev/null |
	sed -nE 's/.*\): [0-9]+ slots \(([0-9]+) blocks\) of earlier runs.*/\1/p' |
	awk '{s += $1} END {printf "%.0f", s}')
inflight=$(cat "$WORK"/steady.*.out "$WORK"/victim.*.out 2>/dev/null |
	sed -nE 's/.*last stop: ([0-9]+) landed, ([0-9]+) not, ([0-9]+) in part.*/\1 \2 \3/p' |
	awk '{a += $1; b += $2; c += $3} END {printf "%d landed, %d not, %d in part", a, b, c}')
stop_tgt
stop_ms=$STOP_MS
echo "soak $SECS s: $restarts nvmfd restarts, $drops connection resets, $kills host SIGKILLs"
echo "victim runs: $victim_runs ($vpass passed whole); steady runs without a restart:" \
	"$steady_ok passed, $steady_bad failed; verify mismatches: $mismatch;" \
	"blocks verified: $blocks; last stop $stop_ms ms"
echo "blocks of earlier runs read back intact: $carried; writes in flight at a fault: $inflight"
if [ "$mismatch" = 0 ] && [ "$steady_bad" = 0 ] && [ "$victim_bad" = 0 ] && [ "$steady_ok" -gt 0 ]; then
	echo PASS
	exit 0
fi
echo "FAIL (logs in $WORK)"
KEEP_WORK=1
exit 1
