#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_proc.sh - regression for tests/lib/nvmfd_proc.sh: nvmfd_start
# must never take the bound port from the previous nvmfd's log. It did when
# the loop read $TMP/stderr before the new process's redirection had
# emptied it (cli-nvmfd-dhchap's "connection refused" right after a
# restart, in a parallel run). Here the log holds a stale "listening on"
# line and the daemon is a stub that exits at once without listening:
# nvmfd_start must fail every time, and must find the port of one that
# does log a line.
set -u
# shellcheck source=../../lib/nvmfd_proc.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../lib/nvmfd_proc.sh"
nvmfd_test_begin proc

cat >"$TMP/stub-dead" <<'SH'
#!/bin/sh
exit 1
SH
cat >"$TMP/stub-live" <<'SH'
#!/bin/sh
echo "[nvmfd] listening on 127.0.0.1:4242 (port 1; subsystems: x)" >&2
exec sleep 30
SH
chmod 755 "$TMP/stub-dead" "$TMP/stub-live"

NVMFD=$TMP/stub-dead
for i in $(seq 20); do
	echo "[nvmfd] listening on 127.0.0.1:1111 (port 1; subsystems: x)" >"$TMP/stderr"
	if nvmfd_start 2>/dev/null; then
		fail "round $i: nvmfd_start took port $PORT from the previous log"
		break
	fi
	wait "$PID" 2>/dev/null
	PID=
done
NVMFD=$TMP/stub-live
echo "[nvmfd] listening on 127.0.0.1:1111 (port 1; subsystems: x)" >"$TMP/stderr"
if nvmfd_start; then
	[ "$PORT" = 4242 ] || fail "live stub: port $PORT, want 4242"
	nvmfd_stop
else
	fail "live stub: nvmfd_start failed"
fi

if [ "$failures" -gt 0 ]; then
	echo "test_nvmfd_proc: $failures failure(s)" >&2
	exit 1
fi
echo "test_nvmfd_proc: ok"
