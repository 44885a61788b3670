#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# test_perf_exec.sh - nvmf-perf's execution flags against a spawned nvmfd.
#
#   test_perf_exec.sh NVMF_PERF NVMFD
#
# Starts nvmfd (RAM namespace) on a free 127.0.0.1 port, then runs
# nvmf-perf --verify -w randrw --json for 1 s with each execution flag
# combination (--exec bound|unbound and the default auto, every
# --affinity-scope, strict or not,
# --io-cpu rr|least-loaded, --cpus, --idle-poll-us, --busy-poll,
# --rx-budget/--tx-budget) and checks the JSON report: the flags are echoed,
# every queue's io_cpu follows the placement rule, its thread's CPUs follow
# the mode, I/O and transport counters are consistent, and the peak RSS
# stays under queues x depth x io_size + 16 MiB (not under sanitizers).
# Exit: 0 pass, 1 fail, 77 skip (python3 or ss missing).
set -uo pipefail

PERF=${1:?usage: test_perf_exec.sh NVMF_PERF NVMFD}
NVMFD=${2:?usage: test_perf_exec.sh NVMF_PERF NVMFD}
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; exit 77; }
command -v ss >/dev/null || { echo "SKIP: ss missing"; exit 77; }

NQN=nqn.2026-11.io.nvmfd:perf-exec
WORK=$(mktemp -d "${TMPDIR:-/tmp}/nvmfd-perf-exec.XXXXXX")
# Port 0: the kernel picks a free port and nvmfd logs it. A port chosen here
# and checked with ss could be taken (e.g. as another test's ephemeral
# client port) before nvmfd binds it.
"$NVMFD" -l "127.0.0.1:0" -s "$NQN" -n ram:64M --allow-any-host --log-level info \
	>"$WORK/nvmfd.log" 2>&1 &
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
TRID="trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$PORT subnqn:$NQN"

# The CPUs this process may use (what the runtime uses without --cpus).
CPUS=$(python3 -c 'import os; print(",".join(str(c) for c in sorted(os.sched_getaffinity(0))))')
FIRST=${CPUS%%,*}
SANITIZED=0
if ldd "$PERF" 2>/dev/null | grep -qE 'lib(a|t|ub)san'; then SANITIZED=1; fi

FAILS=0
N=0
run() {
	local name=$1 rc
	shift
	N=$((N + 1))
	"$PERF" -r "$TRID" -t 1 -w randrw --verify --json --timeout 10000 "$@" \
		>"$WORK/$name.json" 2>"$WORK/$name.err"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $name: nvmf-perf $* exited $rc"; cat "$WORK/$name.err"
		FAILS=$((FAILS + 1))
		return
	fi
	if python3 - "$WORK/$name.json" "$CPUS" "$SANITIZED" "$@" <<'EOF'
import json, sys

path, cpus_s, sanitized, args = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4:]
d = json.load(open(path))
cfg = d["config"]

def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default

def cpulist(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out

errors = []
def check(cond, what):
    if not cond:
        errors.append(what)

# the default: auto (bound with --threads); auto's placement is
# test_perf_auto.py's
exec_ = opt("--exec", "bound" if "--threads" in args else "auto")
scope = opt("--affinity-scope", "cache")
strict = "--affinity-strict" in args
policy = opt("--io-cpu", "rr")
want_cpus = cpulist(cpus_s)
if "--cpus" in args:
    want_cpus &= cpulist(opt("--cpus"))
queues = int(opt("-P", "1"))
depth = int(opt("-q", "32"))
size = opt("-o", "4096")
size = int(size[:-1]) * 1024 if size.endswith("k") else int(size)
check(cfg["exec"] == exec_, "config exec %s" % cfg["exec"])
check(cfg["affinity_scope"] == scope, "config scope %s" % cfg["affinity_scope"])
check(cfg["affinity_strict"] == strict, "config strict")
check(cfg["io_cpu"] == policy, "config io_cpu %s" % cfg["io_cpu"])
check(cpulist(cfg["cpus"]) == want_cpus, "config cpus %s, want %s" % (cfg["cpus"], sorted(want_cpus)))
check(cfg["idle_poll_us"] == int(opt("--idle-poll-us", "0")), "config idle_poll_us")
check(cfg["busy_poll"] == ("--busy-poll" in args), "config busy_poll")
check(cfg["rx_budget"] == int(opt("--rx-budget", "0")), "config rx_budget")
check(cfg["tx_budget"] == int(opt("--tx-budget", "0")), "config tx_budget")
check(len(d["queues"]) == queues, "queues %d" % len(d["queues"]))
lst = sorted(want_cpus)
ncpu = len(lst)
io_cpus = []
for q in d["queues"]:
    qid, e, t = q["qid"], q["exec"], q["transport"]
    cpu = e["io_cpu"]
    io_cpus.append(cpu)
    unit, allowed = cpulist(e["unit_cpus"]), cpulist(e["allowed_cpus"])
    check(cpu in want_cpus, "q%d io_cpu %d not in %s" % (qid, cpu, lst))
    if policy == "rr":
        check(cpu == lst[(qid - 1) % ncpu], "q%d rr io_cpu %d" % (qid, cpu))
    else:
        g = min(queues, ncpu)
        i = (qid - 1) % g
        base, extra = divmod(ncpu, g)
        first = i * base + min(i, extra)
        group = lst[first:first + base + (1 if i < extra else 0)]
        check(cpu in group, "q%d least-loaded io_cpu %d not in group %s" % (qid, cpu, group))
    if exec_ == "bound":
        check(unit == {cpu} and allowed == {cpu}, "q%d bound: unit %s allowed %s" % (qid, unit, allowed))
    elif exec_ == "unbound":
        check(cpu in unit and unit <= want_cpus, "q%d unbound unit %s" % (qid, unit))
        if scope == "cpu":
            check(unit == {cpu}, "q%d scope cpu: unit %s" % (qid, unit))
        if scope == "system":
            check(unit == want_cpus, "q%d scope system: unit %s" % (qid, unit))
        check(allowed == (unit if strict else want_cpus), "q%d allowed %s" % (qid, allowed))
        if strict:
            check(e["repatriations"] == 0, "q%d strict repatriated" % qid)
    else:
        check("auto" in e, "q%d auto: no exec.auto" % qid)
    check(e["last_cpu"] in allowed, "q%d last_cpu %d outside %s" % (qid, e["last_cpu"], allowed))
    check(e["tid"] > 0, "q%d tid" % qid)
    check(q["ios"] > 0 and q["reads"] + q["writes"] == q["ios"], "q%d ios" % qid)
    check(t["completed"] >= q["ios"] and t["submitted"] >= t["completed"], "q%d completed" % qid)
    check(t["polls"] >= t["empty_polls"] and t["polls"] > 0, "q%d polls" % qid)
    check(t["rx_pdus"] >= t["completed"] and t["tx_pdus"] >= t["submitted"], "q%d pdus" % qid)
    check(t["rx_bytes"] > 0 and t["tx_bytes"] > 0, "q%d bytes" % qid)
    check(e["loops"] > 0, "q%d loops" % qid)
    if "--busy-poll" in args:
        check(e["blocking_waits"] == 0, "q%d busy-poll blocked %d times" % (qid, e["blocking_waits"]))
    rxb = int(opt("--rx-budget", "0"))
    if rxb:
        # every recv() takes at most the budget
        check(t["recvs"] * rxb >= t["rx_bytes"], "q%d rx budget: %d recvs for %d bytes" % (qid, t["recvs"], t["rx_bytes"]))
    else:
        check(t["rx_budget_stops"] == 0, "q%d rx_budget_stops without a budget" % qid)
    if not int(opt("--tx-budget", "0")):
        check(t["tx_budget_stops"] == 0, "q%d tx_budget_stops without a budget" % qid)
if policy == "least-loaded" and queues <= ncpu:
    check(len(set(io_cpus)) == queues, "least-loaded io_cpus not distinct: %s" % io_cpus)
hwm = d["vm_hwm_kib"]
check(hwm > 0, "vm_hwm_kib")
limit = queues * depth * size + 16 * 1024 * 1024
if not sanitized:
    check(hwm * 1024 < limit, "VmHWM %d KiB >= %d KiB" % (hwm, limit // 1024))
for e in errors:
    print("  " + e)
sys.exit(1 if errors else 0)
EOF
	then
		echo "PASS: $name ($*)"
	else
		echo "FAIL: $name ($*)"
		FAILS=$((FAILS + 1))
	fi
}

run default -q 8
run bound-ll -q 8 -P 2 --exec bound --io-cpu least-loaded
run unbound-cpu -q 8 --exec unbound --affinity-scope cpu
run unbound-smt-strict -q 8 -P 2 --exec unbound --affinity-scope smt --affinity-strict
run unbound-cache -q 8 -P 2 --exec unbound --affinity-scope cache
run unbound-numa-strict -q 8 --exec unbound --affinity-scope numa --affinity-strict
run unbound-system-ll -q 8 -P 2 --exec unbound --affinity-scope system --io-cpu least-loaded
run cpus-first -q 8 -P 2 --cpus "$FIRST" --io-cpu least-loaded --exec bound
run cpus-unbound-strict -q 4 -P 3 --cpus "$CPUS" --exec unbound --affinity-strict --io-cpu rr
run idle-poll -q 8 --idle-poll-us 100 --exec bound
run busy-poll -q 8 --busy-poll --exec bound
run auto-busy-poll -q 8 --busy-poll
run budgets -q 4 -o 128k --rx-budget 4096 --tx-budget 8192 --exec bound
run budgets-unbound-idle -q 8 -P 2 -o 16k --exec unbound --idle-poll-us 20 --rx-budget 65536 \
	--tx-budget 65536 --io-cpu least-loaded
run digest-bound-ll -q 8 -P 2 --digest hdr,data --io-cpu least-loaded --exec bound

kill -0 "$TGT" 2>/dev/null || { echo "FAIL: nvmfd died"; exit 1; }
echo "$((N - FAILS))/$N passed"
[ "$FAILS" -eq 0 ]
