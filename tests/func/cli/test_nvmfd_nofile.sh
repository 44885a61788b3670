#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_nofile.sh - nvmfd raises its open-file soft limit to the hard
# limit at start and says so in one log line (issue 14); when the hard
# limit is short of the tested scale it warns, naming the limit and the
# connections it allows. Checked on the running process (/proc/PID/limits).
#
# Env: NVMFD = path of the nvmfd binary.
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
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

# start SOFT HARD: nvmfd under those limits, waits (10 s) until it listens
start() {
	(ulimit -Sn "$1" && ulimit -Hn "$2" &&
		exec "$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:nofile -n null:1M \
			--allow-any-host) >"$TMP/log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		grep -q "listening on" "$TMP/log" && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/log" >&2
	fail "nvmfd did not start under soft $1 hard $2"
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

[ "$failures" = 0 ] || exit 1
echo ok
