#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_exec_matrix.sh - the daemon under each execution setting: for every
# cell nvmfd (RAM namespace, ephemeral port) serves a 1 s randrw --verify run
# of nvmf-perf with 2 queues at depth 16; the run must pass (exit 0, no
# verify mismatch, I/Os done) and nvmfd must exit 0 on SIGTERM. Cells:
# bound, unbound x {cpu, cache, system} (+ strict), --wq-per-ctrl, idle
# polling (+ --backend-poll), --cq-pool shared, small rx/tx budgets,
# --io-cpu least-loaded / incoming-cpu, auto, and --net uring with the
# modes it supports, on queue rings and on the worker rings (--uring-ring
# worker: bound pools only), the last also on a file namespace (its reads
# and writes are then SQEs of the worker ring too). About 2 s per cell.
#
# Env: NVMFD, NVMF_PERF = the binaries. Needs ss (iproute2) and python3
# (exit 77 without them).
set -u

NVMFD=${NVMFD:?NVMFD must point at the nvmfd binary}
NVMF_PERF=${NVMF_PERF:?NVMF_PERF must point at the nvmf-perf binary}
command -v ss >/dev/null || { echo "ss (iproute2) missing" >&2; exit 77; }
command -v python3 >/dev/null || { echo "python3 missing" >&2; exit 77; }
TMP=$(mktemp -d /tmp/nvmfd-matrix-XXXXXX)
PID=
cleanup() {
	[ -n "$PID" ] && kill -KILL "$PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
NQN=nqn.2026-11.io.nvmfd:matrix
failures=0

# run_cell NAME FLAGS... (the namespace: $NS, RAM unless set)
NS=ram:64M
run_cell() {
	local name=$1 port rc i
	shift
	: >"$TMP/stderr"
	"$NVMFD" -l 127.0.0.1:0 -s "$NQN" -n "$NS" --allow-any-host --log-level info \
		"$@" >"$TMP/stdout" 2>"$TMP/stderr" &
	PID=$!
	port=
	# until it listens (or exits); the bound only catches a hang
	for i in $(seq 1200); do
		port=$(sed -nE 's/.*listening on 127\.0\.0\.1:([0-9]+).*/\1/p' "$TMP/stderr" | head -1)
		[ -n "$port" ] && break
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		echo "FAIL: $name: nvmfd did not listen" >&2
		cat "$TMP/stderr" >&2
		failures=$((failures + 1))
		kill -KILL "$PID" 2>/dev/null
		wait "$PID" 2>/dev/null
		PID=
		return
	fi
	"$NVMF_PERF" -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$port subnqn:$NQN" \
		-q 16 -o 4096 -w randrw -M 50 -t 1 -P 2 --verify --json --timeout 10000 \
		>"$TMP/perf.json" 2>"$TMP/perf.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL: $name: nvmf-perf exit $rc" >&2
		tail -5 "$TMP/perf.err" >&2
		failures=$((failures + 1))
	elif ! python3 - "$TMP/perf.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def ios(o):
    if isinstance(o, dict):
        for k in ("ios", "total_ios", "completed"):
            if k in o and isinstance(o[k], int):
                return o[k]
        for v in o.values():
            r = ios(v)
            if r:
                return r
    if isinstance(o, list):
        for v in o:
            r = ios(v)
            if r:
                return r
    return 0
sys.exit(0 if ios(d) > 0 else 1)
PY
	then
		echo "FAIL: $name: no I/O counted in the perf report" >&2
		failures=$((failures + 1))
	fi
	kill -TERM "$PID"
	wait "$PID"
	rc=$?
	PID=
	if [ $rc -ne 0 ]; then
		echo "FAIL: $name: nvmfd exit $rc on SIGTERM" >&2
		tail -5 "$TMP/stderr" >&2
		failures=$((failures + 1))
	fi
	echo "cell $name: done" >&2
}

run_cell bound
run_cell unbound-cpu --exec unbound --affinity-scope cpu
run_cell unbound-cache --exec unbound --affinity-scope cache
run_cell unbound-system --exec unbound --affinity-scope system
run_cell unbound-cache-strict --exec unbound --affinity-scope cache --affinity-strict
run_cell unbound-system-strict --exec unbound --affinity-scope system --affinity-strict
run_cell wq-per-ctrl --wq-per-ctrl
run_cell wq-per-ctrl-unbound --wq-per-ctrl --exec unbound --affinity-scope system
run_cell idle-poll --idle-poll-us 100
run_cell idle-poll-backend-poll --idle-poll-us 100 --backend-poll
run_cell cq-shared --cq-pool shared
run_cell cq-shared-unbound --cq-pool shared --exec unbound --affinity-scope system
run_cell cq-shared-poll-per-ctrl --cq-pool shared --idle-poll-us 100 --backend-poll --wq-per-ctrl
run_cell budgets --rx-budget 16384 --tx-budget 16384 --rx-budget-pdus 2 --tx-budget-pdus 2
run_cell least-loaded --io-cpu least-loaded
run_cell incoming-cpu --io-cpu incoming-cpu
run_cell auto --exec auto
run_cell auto-idle-poll --exec auto --idle-poll-us 100 --backend-poll
run_cell auto-frozen --exec auto --auto-freeze
run_cell auto-cq-shared --exec auto --cq-pool shared --auto-no-cq
run_cell auto-cq-auto --exec auto --cq-pool shared
# the io_uring socket path (doc/execution-model.md §9) under the modes it supports
run_cell uring --net uring
run_cell uring-single --net uring --uring-recv single
run_cell uring-unbound-system --net uring --exec unbound --affinity-scope system
run_cell uring-wq-per-ctrl --net uring --wq-per-ctrl
run_cell uring-idle-poll-backend-poll --net uring --idle-poll-us 100 --backend-poll
run_cell uring-cq-shared --net uring --cq-pool shared
run_cell uring-budgets --net uring --rx-budget 16384 --tx-budget 16384 --rx-budget-pdus 2 --tx-budget-pdus 2
# the worker rings (doc/execution-model.md §9.1): bound pools, with the
# per-CPU completion ring, polling and small budgets too
run_cell uring-worker --net uring --uring-ring worker
run_cell uring-worker-single --net uring --uring-ring worker --uring-recv single
run_cell uring-worker-cq-shared --net uring --uring-ring worker --cq-pool shared
run_cell uring-worker-idle-poll --net uring --uring-ring worker --idle-poll-us 100 --backend-poll
run_cell uring-worker-budgets --net uring --uring-ring worker --rx-budget 16384 --tx-budget 16384 --rx-budget-pdus 2 --tx-budget-pdus 2
# a file namespace: the backend's SQEs on the worker ring (§9.1), also
# polled, and beside it the same file on queue rings and --cq-pool shared
NS="file:$TMP/ns.img,size=64M"
run_cell uring-worker-file --net uring --uring-ring worker
run_cell uring-worker-file-poll --net uring --uring-ring worker --idle-poll-us 100 --backend-poll
run_cell uring-worker-file-cq-shared --net uring --uring-ring worker --cq-pool shared
run_cell uring-file --net uring
NS=ram:64M

if [ $failures -ne 0 ]; then
	echo "$failures failure(s)" >&2
	exit 1
fi
exit 0
