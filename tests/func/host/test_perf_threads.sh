#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_perf_threads.sh - nvmf-perf --threads N against a spawned nvmfd.
#
#   test_perf_threads.sh NVMF_PERF NVMFD
#
# nvmfd serves two subsystems (a RAM namespace each, so that --verify of
# two controllers never sees the other's writes); nvmf-perf drives both
# (-r twice, -P 4: 8 queues) from N queue threads. Checks, from --json:
# exit 0, config.threads = min(N, 8), config.exec bound unless --exec
# says otherwise (auto, the default elsewhere, does not combine with
# --threads), every queue completed I/O without
# an error, --verify checked blocks, and queue k (counted across the -r
# list) ran on thread k mod N (its tid). Forms: closed loop, --rate,
# --busy-poll, --idle-poll-us with --exec unbound, N above the queue
# count. Refusals: --threads 0, --threads with --exec auto, an --auto-*
# option with --threads and no --exec (the default there is bound).
# Exit: 0 pass, 1 fail, 77 skip (python3 missing).
set -uo pipefail

PERF=${1:?usage: test_perf_threads.sh NVMF_PERF NVMFD}
NVMFD=${2:?usage: test_perf_threads.sh NVMF_PERF NVMFD}
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }

NQN1=nqn.2026-12.io.nvmfd:perf-threads-1
NQN2=nqn.2026-12.io.nvmfd:perf-threads-2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmfd-perf-threads.XXXXXX")
"$NVMFD" -l "127.0.0.1:0" -s "$NQN1" -n ram:32M --allow-any-host -s "$NQN2" -n ram:32M --allow-any-host \
	--log-level info >"$WORK/nvmfd.log" 2>&1 &
TGT=$!
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	local rc=$?
	kill -TERM "$TGT" 2>/dev/null
	wait "$TGT" 2>/dev/null
	if [ "$rc" -ne 0 ]; then
		echo "nvmfd log:"; tail -20 "$WORK/nvmfd.log"
		echo "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
PORT=""
for _ in $(seq 1 100); do
	PORT=$(sed -nE 's/.*listening on 127\.0\.0\.1:([0-9]+).*/\1/p' "$WORK/nvmfd.log" | head -1)
	[ -n "$PORT" ] && [ "$PORT" != 0 ] && break
	kill -0 "$TGT" 2>/dev/null || { echo "FAIL: nvmfd exited"; exit 1; }
	sleep 0.1
done
[ -n "$PORT" ] && [ "$PORT" != 0 ] || { echo "FAIL: nvmfd reported no port"; exit 1; }
T1="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN1"
T2="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN2"

FAILS=0
# run NAME THREADS [nvmf-perf args...]
run() {
	local name=$1 threads=$2 rc
	shift 2
	"$PERF" -r "$T1" -r "$T2" -P 4 -q 4 -t 2 -w randrw --verify --json --timeout 10000 \
		--threads "$threads" "$@" >"$WORK/$name.json" 2>"$WORK/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $name: nvmf-perf --threads $threads $* exited $rc"; cat "$WORK/$name.err"
		FAILS=$((FAILS + 1))
		return
	fi
	local exec_=bound prev=
	for a in "$@"; do [ "$prev" = --exec ] && exec_=$a; prev=$a; done
	if python3 - "$WORK/$name.json" "$threads" "$exec_" <<'EOF_PY'
import json, sys

d = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
qs = d["queues"]
bad = []
if len(qs) != 8:
    bad.append("%d queues, want 8" % len(qs))
want = min(n, len(qs))
if d["config"]["threads"] != want:
    bad.append("config.threads %s, want %d" % (d["config"]["threads"], want))
# without --exec the mode is bound with --threads (auto is the default
# otherwise, and refuses --threads)
want_exec = sys.argv[3]
if d["config"]["exec"] != want_exec:
    bad.append("config.exec %s, want %s" % (d["config"]["exec"], want_exec))
tids = {}
for k, q in enumerate(qs):  # report order: controller 1's queues, then 2's
    name = "c%dq%d" % (q["ctrl"], q["qid"])
    if q["ios"] <= 0:
        bad.append("%s completed no I/O" % name)
    if q["errors"]:
        bad.append("%s: %d errors (%s)" % (name, q["errors"], q["error"]))
    tids.setdefault(k % want, set()).add(q["exec"]["tid"])
if any(len(t) != 1 for t in tids.values()):
    bad.append("queues of one thread slot on several tids: %s" % tids)
if len({next(iter(t)) for t in tids.values()}) != want:
    bad.append("%d distinct queue threads, want %d: %s" % (len(tids), want, tids))
if d["total"]["verified_blocks"] <= 0:
    bad.append("--verify checked no block")
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF_PY
	then
		echo "ok: $name (--threads $threads $*)"
	else
		echo "FAIL: $name (--threads $threads $*)"
		FAILS=$((FAILS + 1))
	fi
}

run closed-2 2
run rate-2 2 --rate 8000
run busy-3 3 --busy-poll
run unbound-idle-2 2 --exec unbound --idle-poll-us 50
run more-than-queues 16

# refuse rather than ignore
refuse() { # refuse NAME EXPECTED-TEXT ARGS...
	local name=$1 text=$2 rc
	shift 2
	"$PERF" -r "$T1" -t 1 "$@" >"$WORK/$name.out" 2>&1
	rc=$?
	if [ "$rc" -ne 2 ] || ! grep -q -- "$text" "$WORK/$name.out"; then
		echo "FAIL: $name: nvmf-perf $* exited $rc (want 2 and '$text')"
		cat "$WORK/$name.out"
		FAILS=$((FAILS + 1))
	else
		echo "ok: $name refused"
	fi
}
refuse zero "--threads: 1 .. 4096" --threads 0
refuse auto "does not combine with --exec auto" --threads 2 --exec auto
refuse auto-knob "the default is bound with --threads" --threads 2 --auto-bound

[ "$FAILS" -eq 0 ] || { echo "$FAILS failures"; exit 1; }
echo "PASS"
