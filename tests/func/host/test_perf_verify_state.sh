#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_perf_verify_state.sh - nvmf-perf --verify-state FILE checks, in a
# later run, the blocks earlier runs had acknowledged (issue 14's soak
# across kills): two clean runs (the second reads back what the first
# wrote, with another -P); a run SIGKILLed mid-I/O, then a run that must
# pass (its writes in flight may read back old or new); nvmfd SIGKILLed
# and restarted under a run, then a run that must pass; an acknowledged
# block overwritten behind nvmf-perf's back must fail the next run (exit 1,
# naming the LBA); another -o (exit 2) and a second user of the file
# (exit 2, "in use") are refused.
#
# Env: NVMFD, NVMF_PERF = the binaries.
set -u
NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
NVMF_PERF=${NVMF_PERF:?NVMF_PERF must point at nvmf-perf}
. "$(dirname "$0")/../../lib/nvmfd_proc.sh"
nvmfd_test_begin perf-vstate
NQN=nqn.2026-12.io.nvmfd:vstate
truncate -s 32M "$TMP/ns.img"
ST=$TMP/state
start() { nvmfd_start -l "127.0.0.1:${1:-0}" -s $NQN -n "file:$TMP/ns.img" --allow-any-host; }
start || exit 1
R="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN"
perf() { "$NVMF_PERF" -r "$R" -w randrw -M 50 -o 4096 --verify-state "$ST" "$@"; }
# perf_bg OUT ARGS...: in the background, H its pid (nvmf-perf's own)
perf_bg() {
	local out=$1
	shift
	"$NVMF_PERF" -r "$R" -w randrw -M 50 -o 4096 --verify-state "$ST" "$@" >"$out" 2>&1 &
	H=$!
}
# slots of earlier runs the run reported as read back
checked() { sed -nE 's/.*\): ([0-9]+) slots .* read back intact.*/\1/p' "$1"; }

perf -q 8 -P 2 -t 1 >"$TMP/o1" 2>&1 || fail "run 1: exit $? $(cat "$TMP/o1")"
[ "$(checked "$TMP/o1")" = 0 ] || fail "run 1 found earlier slots: $(cat "$TMP/o1")"
perf -q 8 -P 3 -t 1 >"$TMP/o2" 2>&1 || fail "run 2: exit $? $(cat "$TMP/o2")"
[ "$(checked "$TMP/o2")" -gt 0 ] 2>/dev/null ||
	fail "run 2 checked none of run 1's slots: $(cat "$TMP/o2")"
# the same figures in --json (config.verify_state)
perf -q 8 -P 2 -t 1 --json >"$TMP/j1" 2>/dev/null || fail "--json run: exit $?"
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["config"]["verify_state"]
assert v["run"] == 3 and v["earlier_slots"] > 0 and v["earlier_blocks"] == 8 * v["earlier_slots"], v
' "$TMP/j1" || fail "--json verify_state: $(cat "$TMP/j1")"

# host SIGKILLed with writes in flight
perf_bg "$TMP/o3" -q 32 -P 2 -t 60
sleep 2
kill -KILL $H
wait $H 2>/dev/null
perf -q 8 -P 2 -t 1 >"$TMP/o4" 2>&1 || fail "run after a host SIGKILL: exit $? $(cat "$TMP/o4")"
grep -q "writes in flight at the last stop" "$TMP/o4" || fail "no state report: $(cat "$TMP/o4")"

# target SIGKILLed and restarted under a run (the run fails; exit 3)
perf_bg "$TMP/o5" -q 32 -P 2 -t 60
sleep 2
kill -KILL "$PID"
wait "$PID" 2>/dev/null
PID=
wait $H
rc=$?
[ $rc = 3 ] || fail "run under a target kill: exit $rc (want 3) $(cat "$TMP/o5")"
start "$PORT" || exit 1
perf -q 8 -P 2 -t 1 >"$TMP/o6" 2>&1 || fail "run after a target restart: exit $? $(cat "$TMP/o6")"

# a second user, another -o
# (the second starts once the first holds the flock, as /proc/locks shows:
# a fixed sleep lost that race under an ASan build on a loaded CI machine;
# probing with flock(1) could itself make the first user fail)
perf_bg "$TMP/o7" -q 8 -P 1 -t 5
held() {
	awk -v ino="$(stat -c %i "$ST")" -v pid="$1" \
		'$2 == "FLOCK" && $5 == pid { n = split($6, f, ":"); if (f[n] == ino) ok = 1 }
		 END { exit !ok }' /proc/locks
}
for _ in $(seq 600); do
	held $H && break
	kill -0 $H 2>/dev/null || break
	sleep 0.1
done
held $H || fail "the first user never took the lock: $(cat "$TMP/o7")"
perf -q 8 -P 1 -t 1 >"$TMP/o8" 2>&1
rc=$?
wait $H || fail "the first user of the file: exit $? $(cat "$TMP/o7")"
[ $rc = 2 ] && grep -q "in use" "$TMP/o8" || fail "second user: exit $rc $(cat "$TMP/o8")"
"$NVMF_PERF" -r "$R" -w randrw -M 50 -o 8192 --verify-state "$ST" -t 1 >"$TMP/o9" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "not a state file for this namespace and -o" "$TMP/o9" ||
	fail "another -o: exit $rc $(cat "$TMP/o9")"

# an acknowledged block overwritten behind nvmf-perf's back: slot s of the
# state (header 4096 bytes, then acked[] of u64) -> LBA s * 8 (512 B blocks)
nvmfd_stop
s=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<Q", d, 16)[0]
a = struct.unpack_from("<%dQ" % n, d, 4096)
print([i for i, g in enumerate(a) if g][0])' "$ST")
dd if=/dev/zero of="$TMP/ns.img" bs=4096 seek="$s" count=1 conv=notrunc status=none
start "$PORT" || exit 1
perf -q 8 -P 2 -t 1 >"$TMP/o10" 2>&1
rc=$?
[ $rc = 1 ] && grep -q "verify failed: LBA $((s * 8)): bad magic" "$TMP/o10" ||
	fail "zeroed slot $s: exit $rc (want 1) $(cat "$TMP/o10")"
nvmfd_stop

[ $failures = 0 ] && echo "PASS" && exit 0
exit 1
