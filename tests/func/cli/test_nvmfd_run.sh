#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_nvmfd_run.sh - run the nvmfd daemon: it listens on an ephemeral
# port, answers the control socket ({"cmd":"stats"}, {"cmd":"config"}),
# prints periodic stats to stderr (never stdout), and on SIGTERM/SIGINT
# stops listening, removes the control socket and exits 0. Also starts the
# embedded default (no arguments) when 127.0.0.1:4420 is free.
#
# Env: NVMFD = path of the nvmfd binary. Needs python3 for the UNIX socket
# client and ss from iproute2 (exit 77 without them).
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 77; }
command -v ss >/dev/null || { echo "ss (iproute2) missing" >&2; exit 77; }
TMP=$(mktemp -d /tmp/nvmfd-run-XXXXXX)
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

# wait_for FILE REGEX: up to 10 s for a line matching REGEX to appear
wait_for() {
	for _ in $(seq 100); do
		grep -qE "$2" "$1" && return 0
		kill -0 "$PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# ctl REQUEST: one request line on the control socket, prints the reply line
ctl() {
	python3 - "$TMP/ctl.sock" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().rstrip("\n"))
PY
}

# stop SIG: signal the daemon and wait (10 s) for its exit status in $rc
stop() {
	kill -"$1" "$PID"
	for _ in $(seq 100); do
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$PID" 2>/dev/null; then
		fail "nvmfd did not exit on SIG$1"
		kill -KILL "$PID"
	fi
	rc=0
	wait "$PID" || rc=$?
	PID=
}

# --- explicit config with control socket and stats ------------------------
# a second listener on [::1] when the loopback has IPv6
v6=()
python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null &&
	v6=(-l "[::1]:0")
"$NVMFD" -l 127.0.0.1:0 "${v6[@]}" -s nqn.2026-11.io.nvmfd:run -n ram:16M --allow-any-host \
	--control "$TMP/ctl.sock" --stats-interval 1 --log-level info \
	>"$TMP/stdout" 2>"$TMP/stderr" &
PID=$!
if ! wait_for "$TMP/stderr" 'listening on 127\.0\.0\.1:[0-9]+ \(port 1'; then
	cat "$TMP/stderr" >&2
	echo "FAIL: nvmfd did not report listening" >&2
	exit 1
fi
# the control socket line is logged after every listening line
wait_for "$TMP/stderr" 'control socket at' || fail "control socket not logged"
port=$(sed -nE 's/.*\[nvmfd\].*listening on 127\.0\.0\.1:([0-9]+) \(port 1.*/\1/p' "$TMP/stderr" | head -1)
[ -n "$port" ] && [ "$port" -gt 0 ] || fail "no port in '$(cat "$TMP/stderr")'"
ss -Hltn "sport = :$port" | grep -q . || fail "nothing listens on reported port $port"
if [ ${#v6[@]} -gt 0 ]; then
	port6=$(sed -nE 's/.*\[nvmfd\].*listening on \[::1\]:([0-9]+) \(port 2.*/\1/p' "$TMP/stderr" | head -1)
	[ -n "$port6" ] && [ "$port6" -gt 0 ] || fail "no [::1] listener in '$(cat "$TMP/stderr")'"
	[ -n "$port6" ] && { ss -Hltn "sport = :$port6" | grep -q '\[::1\]' || fail "nothing listens on [::1]:$port6"; }
else
	echo "no IPv6 loopback: [::1] listener not exercised" >&2
fi
grep -q 'control socket at' "$TMP/stderr" || fail "control socket not logged"
[ -S "$TMP/ctl.sock" ] || fail "control socket missing"

stats=$(ctl '{"cmd":"stats"}')
python3 -c 'import json,sys; o=json.loads(sys.argv[1]); assert isinstance(o, dict) and o' "$stats" ||
	fail "stats reply is not a JSON object: $stats"
cfg=$(ctl '{"cmd":"config"}')
printf '%s\n' "$cfg" >"$TMP/live.json"
"$NVMFD" -c "$TMP/live.json" --print-config >"$TMP/reloaded.json" 2>"$TMP/err" ||
	fail "config from control socket does not load: $(cat "$TMP/err")"
grep -q '"nqn.2026-11.io.nvmfd:run"' "$TMP/reloaded.json" || fail "subsystem missing in live config"
grep -q '"path": "ram:16M"' "$TMP/reloaded.json" || fail "namespace missing in live config"
bad=$(ctl '{"cmd":"reboot"}')
[[ "$bad" == *'"error"'*"reboot"* ]] || fail "unknown cmd reply: $bad"
bad=$(ctl 'not json')
[[ "$bad" == *'"error"'* ]] || fail "garbage reply: $bad"
# exactly one JSON object per line: trailing bytes are an error, not ignored
for req in '{"cmd":"stats"}{"cmd":"stats"}' '{"cmd":"stats"} x' '["cmd"]' '{"cmd":"stats"}
{"cmd":"stats"}'; do
	bad=$(ctl "$req")
	[[ "$bad" == '{"error":'*'one JSON object per line'* ]] || fail "request '$req': reply $bad"
done
ok=$(ctl ' {"cmd":"stats"} ')
[[ "$ok" == '{'* && "$ok" != *'"error"'* ]] || fail "blank-padded stats request: $ok"
# a line over the limit: an error reply, then close (no reset)
long=$(python3 - "$TMP/ctl.sock" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(b"x" * 6000 + b"\n")
print(s.makefile().readline().rstrip("\n"))
PY
)
[ "$long" = '{"error":"request too long"}' ] || fail "long request reply: '$long'"
ctl '{"cmd":"stats"}' | grep -q '^{' || fail "control socket dead after a long request"

# one periodic stats object on stderr (interval 1 s, allow 10 s)
wait_for "$TMP/stderr" '^\{' || fail "no periodic stats on stderr"

stop TERM
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGTERM"
[ -s "$TMP/stdout" ] && fail "daemon wrote to stdout: $(head -c 200 "$TMP/stdout")"
grep -q 'SIGTERM received' "$TMP/stderr" || fail "SIGTERM not logged"
[ -e "$TMP/ctl.sock" ] && fail "control socket left behind"
ss -Hltn "sport = :$port" | grep -q . && fail "port $port still listening after exit"

# --- a live control socket is not stolen by a second daemon ---------------
"$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:one -n null:1M --control "$TMP/ctl.sock" \
	2>"$TMP/stderr1" &
PID=$!
wait_for "$TMP/stderr1" 'listening on' || fail "first daemon did not start"
"$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:two -n null:1M --control "$TMP/ctl.sock" \
	2>"$TMP/stderr2"
rc2=$?
[ $rc2 -eq 2 ] || fail "second daemon on the same control socket: exit $rc2, want 2"
grep -q -- "--control $TMP/ctl.sock: Address already in use" "$TMP/stderr2" ||
	fail "second daemon message: $(cat "$TMP/stderr2")"
grep -q 'listening on' "$TMP/stderr2" && fail "second daemon started listening"
stop INT
[ "$rc" -eq 0 ] || fail "exit status $rc after SIGINT"

# --- --control PATH that is a regular file: left alone ---------------------
echo keep >"$TMP/plain"
"$NVMFD" -l 127.0.0.1:0 -s nqn.2026-11.io.nvmfd:three -n null:1M --control "$TMP/plain" \
	2>"$TMP/stderr4"
rc4=$?
[ $rc4 -eq 2 ] || fail "--control on a regular file: exit $rc4, want 2"
grep -qF -- "--control $TMP/plain: $TMP/plain exists and is not a socket" "$TMP/stderr4" ||
	fail "--control on a regular file: $(cat "$TMP/stderr4")"
[ "$(wc -l <"$TMP/stderr4")" -eq 1 ] || fail "--control on a regular file: not one line"
[ "$(cat "$TMP/plain")" = keep ] || fail "--control replaced a regular file"

# --- the embedded default --------------------------------------------------
if ss -Hltn 'sport = :4420' | grep -q .; then
	echo "127.0.0.1:4420 busy: embedded default not exercised" >&2
else
	"$NVMFD" 2>"$TMP/stderr3" &
	PID=$!
	if wait_for "$TMP/stderr3" 'listening on 127\.0\.0\.1:4420'; then
		grep -q 'embedded default' "$TMP/stderr3" || fail "embedded default not logged"
		grep -q 'nqn.2026-11.io.nvmfd:demo' "$TMP/stderr3" || fail "demo subsystem not logged"
		stop INT
		[ "$rc" -eq 0 ] || fail "default run: exit status $rc after SIGINT"
	elif grep -q 'Address already in use' "$TMP/stderr3"; then
		echo "127.0.0.1:4420 taken meanwhile: embedded default not exercised" >&2
		wait "$PID"
		PID=
	else
		fail "embedded default did not start: $(cat "$TMP/stderr3")"
	fi
fi

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
echo "all run checks passed"
