#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_nofile.sh - nvmfd raises its open-file soft limit to the hard
# limit at start and says so in one log line (issue 14); when the hard
# limit is short of the tested scale it warns, naming the limit and the
# connections it allows. Checked on the running process (/proc/PID/limits).
# Out of fds, nvmfd closes new connections at once (they used to wait in
# the backlog while the listener woke the accept work in a loop): a host
# asking for more queues than the limit allows fails without waiting for
# its ICResp timeout, names a queue, and nvmfd still serves a small run.
#
# Env: NVMFD = path of the nvmfd binary, NVMF_PERF = nvmf-perf.
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
NVMF_PERF=${NVMF_PERF:?NVMF_PERF must point at nvmf-perf}
TMP=$(mktemp -d /tmp/nvmfd-nofile-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# start SOFT HARD [ARGS]: nvmfd under those limits, waits (10 s) until it listens
start() {
	local soft=$1 hard=$2
	shift 2
	(ulimit -Sn "$soft" && ulimit -Hn "$hard" &&
		exec "$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:nofile -n null:1M \
			--allow-any-host "$@") >"$TMP/log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$TMP/log" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/log" >&2
	fail "nvmfd did not start under soft $soft hard $hard"
	return 1
}

stop() {
	kill -TERM "$PID"
	wait "$PID"
	rc=$?
	[ "$rc" = 0 ] || fail "nvmfd exited $rc on SIGTERM"
	PID=
}

soft_of() { awk '/^Max open files/ {print $4}' "/proc/$1/limits"; }

hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -lt 512 ]; then
	echo "hard open-file limit $hard: cannot lower the soft limit below it usefully" >&2
	exit 77
fi

# 1. soft below hard: raised to hard, one line saying so
if start 256 "$hard"; then
	[ "$(soft_of "$PID")" = "$hard" ] || fail "soft limit is $(soft_of "$PID"), expected $hard"
	n=$(grep -c "open-file limit raised from 256 to the hard limit $hard" "$TMP/log")
	[ "$n" = 1 ] || { cat "$TMP/log" >&2; fail "expected one 'raised from 256' line, got $n"; }
	stop
fi

# 2. a low hard limit: kept, and a warning that names it and what it allows
if start 200 200; then
	[ "$(soft_of "$PID")" = 200 ] || fail "soft limit changed to $(soft_of "$PID")"
	grep -q "open-file limit 200 (the hard limit): about 56 connections" "$TMP/log" ||
		{ cat "$TMP/log" >&2; fail "no limit line for 200"; }
	grep -q "WARN: the open-file limit 200 allows about 56 connections.*raise the hard limit" \
		"$TMP/log" || { cat "$TMP/log" >&2; fail "no warning for a hard limit of 200"; }
	stop
fi

# 3. out of fds: 64 allow the base fds and a few queues (1 fd each with
# shared completion rings, so accept itself runs out, not the queue setup);
# 64 I/O queues cannot all connect, the failure comes at once (not after the
# 30 s ICResp timeout given here) and names a queue; a 2-queue run passes
if start 64 64 --cq-pool shared; then
	port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$TMP/log" | tail -1 | cut -d: -f2)
	trid="trtype:TCP traddr:127.0.0.1 trsvcid:$port subnqn:nqn.2026-11.io.nvmfd:nofile"
	"$NVMF_PERF" -r "$trid" -P 64 -q 2 -w randread -t 1 --timeout 30000 >"$TMP/perf1" 2>&1
	rc=$?
	[ "$rc" = 3 ] || { cat "$TMP/perf1" >&2; fail "64 queues under a limit of 64: exit $rc, want 3"; }
	grep -q "failed: I/O queue [0-9]*.*: qid [0-9]*: " "$TMP/perf1" ||
		{ cat "$TMP/perf1" >&2; fail "the failure does not name a queue"; }
	grep -q "timed out" "$TMP/perf1" && fail "the host waited for a timeout: $(cat "$TMP/perf1")"
	grep -q "port 1: accept: Too many open files: closing new connections" "$TMP/log" ||
		{ cat "$TMP/log" >&2; fail "no EMFILE warning"; }
	"$NVMF_PERF" -r "$trid" -P 2 -q 2 -w randread -t 1 >"$TMP/perf2" 2>&1 ||
		{ cat "$TMP/perf2" >&2; fail "nvmfd did not serve a 2-queue run after running out of fds"; }
	kill -USR1 "$PID"
	for _ in $(seq 50); do grep -q '"accept_shed"' "$TMP/log" && break; sleep 0.1; done
	grep -q '"accept_shed":[1-9]' "$TMP/log" || fail "stats show no shed connection"
	stop
fi

[ "$failures" = 0 ] || exit 1
echo ok
