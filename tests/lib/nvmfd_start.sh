# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# nvmfd_start.sh - sourced by test scripts that run the nvmfd binary.
#
# start ARGS...: run "$NVMFD" ARGS... --log-level info in the background,
# stdout to $TMP/stdout, stderr to $TMP/stderr (truncated), and wait (20 s
# at most) for its first "listening on 127.0.0.1:PORT" line. Sets PID and
# PORT. Return: 0, or 1 (nvmfd exited or never listened; its stderr is
# printed).
start() {
	"$NVMFD" "$@" --log-level info >"$TMP/stdout" 2>"$TMP/stderr" &
	PID=$!
	PORT=
	for _ in $(seq 200); do
		PORT=$(sed -nE 's/.*listening on 127\.0\.0\.1:([0-9]+) .*/\1/p' "$TMP/stderr" | head -1)
		[ -n "$PORT" ] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/stderr" >&2
	return 1
}
