#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scale.sh - one nvmfd serving many controllers x 4 I/O queues under load
# from several nvmf-perf processes with multi-controller -r lists (issue 14).
#
#   tests/scale/scale.sh [-c CONTROLLERS] [-t SECONDS] [-P QUEUES] [-q DEPTH]
#                        [-T THREADS] [-- NVMFD-ARGS...]
#
# Defaults (the CI form): 128 controllers, 4 I/O queues each, QD 4, 60 s.
# The long form (README): -c 1024 -t 600. Each nvmf-perf process drives up
# to 64 controllers (-r repeated; its limit). NVMFD-ARGS go to nvmfd, e.g.
# -- --exec unbound, or -- --cq-pool shared. Each nvmf-perf runs THREADS
# queue threads (-T, default 2; nvmf-perf --threads), not one per queue:
# 1024 x 4 queue threads on a few CPUs starved the host library's
# keep-alive threads (15.9 s without a Keep Alive, expiries on the
# target). -T 0: one thread per queue, as before.
#
# Reports: keep-alive expiries (nvmfd log), I/O timeouts and failed
# connects (nvmf-perf output), nvmfd RSS and fds at baseline, under load
# and after every host disconnected, the per-connection memory
# ((RSS under load - baseline) / connections), the cost of an idle socket
# before any load (IDLE_SOCKS, default 256; 0: skip), and the stop time.
# Exit: 0 when there were no keep-alive expiries, I/O timeouts or failed
# connects, every nvmf-perf exited 0, fds returned to the baseline and the
# RSS to within RSS_SLACK_KIB (default 32 MiB) of it (nvmfd trims the
# allocator after mass disconnects) and the RSS under load stayed under
# RSS_MAX_KIB (default 1 GiB, issue 14's bound for 1024 x 4); 1 otherwise.
# The after-disconnect figure is taken once the RSS has settled (within
# 4 MiB of the baseline, or no lower for 3 s), not at the first sample
# under the slack.
set -u
. "$(dirname "$0")/common.sh"

CTRLS=128
NS=${NS:-null:1G} # data in a RAM namespace would count as per-connection memory
SECS=60
QUEUES=4
DEPTH=4
THREADS=${THREADS:-2}
while [ $# -gt 0 ]; do
	case $1 in
	-c) CTRLS=$2; shift 2 ;;
	-t) SECS=$2; shift 2 ;;
	-P) QUEUES=$2; shift 2 ;;
	-q) DEPTH=$2; shift 2 ;;
	-T) THREADS=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [-c N] [-t S] [-P Q] [-q D] [-T THREADS] [-- nvmfd args]" >&2; exit 2 ;;
	esac
done
PER_PROC=64
RSS_SLACK_KIB=${RSS_SLACK_KIB:-32768} # after disconnect: baseline + this
RSS_MAX_KIB=${RSS_MAX_KIB:-1048576}   # under load: at most this
NPROC=$(((CTRLS + PER_PROC - 1) / PER_PROC))
CONNS=$((CTRLS * (QUEUES + 1)))

log=$WORK/nvmfd.log
start_tgt "$log" "$@"
sleep 0.5
base_rss=$(rss_kib "$TGT_PID")
base_fds=$(nfds "$TGT_PID")
echo "nvmfd $* on port $TGT_PORT: baseline RSS $base_rss KiB, $base_fds fds"

# What a connection costs before its Connect (doc/design.md §1.3):
# IDLE_SOCKS sockets that send nothing, measured after 1 s, then closed
IDLE_SOCKS=${IDLE_SOCKS:-256}
if [ "$IDLE_SOCKS" -gt 0 ]; then
	python3 - "$TGT_PORT" "$TGT_PID" "$IDLE_SOCKS" <<'EOF_PY'
import os, socket, sys, time
port, pid, n = (int(a) for a in sys.argv[1:4])
def rss():
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
def fds():
    return len(os.listdir("/proc/%d/fd" % pid))
r0, f0 = rss(), fds()
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
time.sleep(1.0)
r1, f1 = rss(), fds()
print("idle sockets (no ICReq): %.1f KiB and %.2f fds each (%d)" % ((r1 - r0) / n, (f1 - f0) / n, n))
for s in socks:
    s.close()
EOF_PY
	for _ in $(seq 100); do
		[ "$(nfds "$TGT_PID")" -le "$base_fds" ] && break
		sleep 0.1
	done
fi
echo "load: $CTRLS controllers x $QUEUES I/O queues (QD $DEPTH, 4 KiB randrw) from $NPROC" \
	"nvmf-perf processes for $SECS s: $CONNS connections;" \
	"$([ "$THREADS" -gt 0 ] && echo "$THREADS queue threads each" || echo "a thread per queue")"

pids=()
left=$CTRLS
for p in $(seq "$NPROC"); do
	n=$((left < PER_PROC ? left : PER_PROC))
	left=$((left - n))
	args=()
	for c in $(seq "$n"); do
		args+=(-r "$(trid "$TGT_PORT" "nqn.2014-08.org.nvmexpress:uuid:5ca1e000-0000-4000-8000-$(printf '%06x%06x' "$p" "$c")")")
	done
	[ "$THREADS" -gt 0 ] && args+=(--threads "$THREADS")
	# the host bound (its default with --threads; -T 0 would otherwise
	# run nvmf-perf's default auto), as measured in doc/scale.md
	args+=(--exec bound)
	# connect timeout 30 s: hundreds of connects share two CPUs
	"$PERF" "${args[@]}" -P "$QUEUES" -q "$DEPTH" -o 4096 -w randrw -M 70 -t "$SECS" \
		--timeout 30000 >"$WORK/perf.$p.out" 2>&1 &
	pids+=($!)
	BG_PIDS+=($!)
done

# sample nvmfd while the load runs: the largest RSS/fds once everyone is in
peak_rss=0
peak_fds=0
t_end=$(($(date +%s) + SECS + 60))
while :; do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 1 ] || break
	[ "$(date +%s)" -lt "$t_end" ] || break
	r=$(rss_kib "$TGT_PID")
	f=$(nfds "$TGT_PID")
	[ "$r" -gt "$peak_rss" ] && peak_rss=$r
	[ "$f" -gt "$peak_fds" ] && peak_fds=$f
	sleep 1
done
fails=0
for p in "${pids[@]}"; do
	wait "$p"
	rc=$?
	[ $rc = 0 ] || { fails=$((fails + 1)); echo "nvmf-perf pid $p exit $rc"; }
done
BG_PIDS=()
# disconnects are asynchronous on the target: give it a moment (bounded)
for _ in $(seq 100); do
	[ "$(nfds "$TGT_PID")" -le "$base_fds" ] && break
	sleep 0.1
done
# nvmfd gives freed allocator memory back every 2 s (malloc_trim after
# mass disconnects): wait for it (bounded)
for _ in $(seq 50); do
	[ "$(rss_kib "$TGT_PID")" -le $((base_rss + RSS_SLACK_KIB)) ] && break
	sleep 0.1
done
# then let it settle: the trim runs every 2 s; stop when within 4 MiB of
# the baseline or when 3 s brought nothing lower
after_rss=$(rss_kib "$TGT_PID")
low=$after_rss
still=0
while [ "$after_rss" -gt $((base_rss + 4096)) ] && [ $still -lt 30 ]; do
	sleep 0.1
	after_rss=$(rss_kib "$TGT_PID")
	if [ "$after_rss" -lt "$low" ]; then low=$after_rss; still=0; else still=$((still + 1)); fi
done
after_rss=$low
after_fds=$(nfds "$TGT_PID")
stop_tgt
stop_ms=$STOP_MS

kato=$(count_kato "$log")
tmo=$(count_io_timeouts "$WORK"/perf.*.out)
cfail=$(count_connect_fail "$WORK"/perf.*.out)
per_conn=$(((peak_rss - base_rss) / (CONNS > 0 ? CONNS : 1)))
iops=$(grep -h "^total" "$WORK"/perf.*.out | awk '{s += $2} END {printf "%d", s}')
echo "nvmfd: RSS baseline $base_rss KiB, under load $peak_rss KiB, after disconnect" \
	"$after_rss KiB; fds $base_fds / $peak_fds / $after_fds"
echo "per-connection memory: $per_conn KiB ($CONNS connections)"
echo "keep-alive expiries: $kato; I/O timeouts: $tmo; failed connects: $cfail;" \
	"nvmf-perf failures: $fails; stop: $stop_ms ms"
[ -n "$iops" ] && echo "total IOPS reported by the nvmf-perf processes: $iops"
ok=1
[ "$kato" = 0 ] && [ "$tmo" = 0 ] && [ "$cfail" = 0 ] && [ "$fails" = 0 ] || ok=0
[ "$peak_rss" -lt "$RSS_MAX_KIB" ] ||
	{ echo "RSS under load $peak_rss KiB is not under $RSS_MAX_KIB KiB"; ok=0; }
[ "$after_fds" -le "$base_fds" ] || { echo "fds did not return to the baseline"; ok=0; }
[ "$after_rss" -le $((base_rss + RSS_SLACK_KIB)) ] ||
	{ echo "RSS did not return to within $RSS_SLACK_KIB KiB of the baseline"; ok=0; }
if [ $ok = 1 ]; then
	echo "PASS"
	exit 0
fi
echo "FAIL (logs in $WORK)"
KEEP_WORK=1
exit 1
