# SPDX-License-Identifier: MIT
# nvmfd_proc.sh - start and stop an nvmfd for shell tests (sourced).
# Needs NVMFD (the binary) and TMP (a scratch directory). nvmfd_start sets
# PID and PORT (the bound port of its 127.0.0.1 listener) and logs to
# $TMP/stdout and $TMP/stderr; nvmfd_stop appends the log to
# $TMP/all-stderr; nvmfd_reload sends SIGHUP and waits for its summary.
# nvmfd_test_begin makes TMP and the EXIT cleanup.

# nvmfd_test_begin NAME: TMP (a fresh /tmp/nvmfd-NAME-* directory, removed
# at exit with a still-running nvmfd killed), PID, and fail MSG, which
# prints "FAIL: MSG" and counts it in $failures.
nvmfd_test_begin() {
	TMP=$(mktemp -d "/tmp/nvmfd-$1-XXXXXX")
	PID=
	failures=0
	trap nvmfd_test_cleanup EXIT
}

nvmfd_test_cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# nvmfd_start ARGS...: run nvmfd, wait until it listens; return 1 (its
# stderr printed) when it exits or does not listen within 120 s (a bound
# for a hang: a loaded machine only makes the wait longer)
nvmfd_start() {
	# Empty the log here, before the fork: the child's own redirection may
	# run after the loop below first reads it, which then found the
	# previous nvmfd's "listening on" line (a stale port: "connection
	# refused", seen in parallel runs).
	: >"$TMP/stdout"
	: >"$TMP/stderr"
	"$NVMFD" "$@" --log-level info >"$TMP/stdout" 2>"$TMP/stderr" &
	PID=$!
	PORT=
	for _ in $(seq 1200); do
		PORT=$(sed -nE 's/.*listening on 127\.0\.0\.1:([0-9]+) .*/\1/p' "$TMP/stderr" | head -1)
		[ -n "$PORT" ] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/stderr" >&2
	return 1
}

# nvmfd_stop: SIGTERM, wait for the exit
nvmfd_stop() {
	kill -TERM "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=
	cat "$TMP/stderr" >>"$TMP/all-stderr"
}

# nvmfd_reload: SIGHUP, wait (<= 120 s) for the reload's summary line
# ("N change(s) applied") after those already in the log; 1 if none came
nvmfd_reload() {
	local before
	before=$(grep -c "change(s) applied" "$TMP/stderr")
	kill -HUP "$PID"
	for _ in $(seq 1200); do
		[ "$(grep -c "change(s) applied" "$TMP/stderr")" -gt "$before" ] && return 0
		sleep 0.1
	done
	return 1
}
