# SPDX-License-Identifier: MIT
# common.sh - helpers of the scale, storm and soak scripts (sourced).
# Env: NVMFD_BIN (directory with nvmfd and nvmf-perf; default build/bin of
# this tree), SCALE_WORK (scratch directory; default a new /tmp dir),
# TGT_SESSION (own: nvmfd runs in a session of its own, via setsid; default
# shared: in the script's session, with the hosts). With the kernel's
# sched_autogroup on, one session is one scheduling group: shared, nvmfd's
# few workers compete thread by thread with thousands of host threads on
# the same CPUs; own, the target's group and the hosts' group share the
# CPUs half and half when both want them, as a target on its own machine
# would not be starved by its hosts.

BIN=${NVMFD_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/bin}
NVMFD=$BIN/nvmfd
PERF=$BIN/nvmf-perf
[ -x "$NVMFD" ] && [ -x "$PERF" ] || { echo "no nvmfd/nvmf-perf in $BIN" >&2; exit 77; }
WORK=${SCALE_WORK:-$(mktemp -d /tmp/nvmfd-scale-XXXXXX)}
mkdir -p "$WORK"
NQN=nqn.2026-12.io.nvmfd:scale
TGT_PID=
TGT_PORT=
BG_PIDS=()

cleanup() {
	for p in "${BG_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "$TGT_PID" ] && kill -KILL "$TGT_PID" 2>/dev/null
	[ -n "${KEEP_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT

# start_tgt LOG [nvmfd args...]: nvmfd on 127.0.0.1:0 (or NVMFD_LISTEN),
# sets TGT_PID and TGT_PORT. Namespace: $NS (default ram:256M).
start_tgt() {
	local log=$1 skip
	shift
	skip=$(cat "$log" 2>/dev/null | wc -l)
	local sess=()
	case ${TGT_SESSION:-shared} in
	own) sess=(setsid) ;; # not a group leader here: setsid execs, same pid
	shared) ;;
	*) echo "TGT_SESSION must be own or shared, not '$TGT_SESSION'" >&2; exit 2 ;;
	esac
	"${sess[@]}" "$NVMFD" -l "${NVMFD_LISTEN:-127.0.0.1:0}" -s "$NQN" -n "${NS:-ram:256M}" \
		--allow-any-host "$@" >>"$log" 2>&1 &
	TGT_PID=$!
	for _ in $(seq 200); do
		TGT_PORT=$(tail -n +$((skip + 1)) "$log" |
			grep -o 'listening on 127.0.0.1:[0-9]*' | tail -1 | cut -d: -f2)
		[ -n "$TGT_PORT" ] && return 0
		kill -0 "$TGT_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "nvmfd did not start:" >&2
	cat "$log" >&2
	exit 1
}

# stop_tgt: SIGTERM and wait for the exit; the stop time in STOP_MS (ms).
# Not in a $(...) subshell: only the shell that started nvmfd can wait.
stop_tgt() {
	local t0
	t0=$(date +%s%N)
	kill -TERM "$TGT_PID" 2>/dev/null
	wait "$TGT_PID" 2>/dev/null
	STOP_MS=$((($(date +%s%N) - t0) / 1000000))
	TGT_PID=
}

trid() { # trid PORT [HOSTNQN]
	local t="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$1 subnqn:$NQN"
	[ -n "${2:-}" ] && t="$t hostnqn:$2"
	echo "$t"
}

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
nfds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }

# Counters from an nvmfd log and nvmf-perf outputs.
count_kato() { grep -c "keep-alive timer .* expired" "$1"; }
count_io_timeouts() { cat "$@" 2>/dev/null | grep -ci "timed out\|timeout"; }
count_connect_fail() { cat "$@" 2>/dev/null | grep -c "connect to .* failed"; }
